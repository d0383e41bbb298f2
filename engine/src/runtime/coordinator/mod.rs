//! The coordinator: the `flow run` process around the scheduler core.
//!
//! [`run::start`] sets a run up and starts the [`driver`], the event loop
//! on a single-threaded tokio runtime (the agent and the transport use
//! tokio too; the core never does): it feeds the core's decisions, rendered into jobs by
//! [`job_factory`], to the workers behind [`links`] (the embedded agent
//! and the remote ones, accepted by [`remote`]), journals what they report
//! ([`placements`]), checks the cache before dispatch ([`driver_cache`],
//! with [`resume`]), expands dynamic stages ([`driver_expand`]), runs the
//! allocation queue ([`alloc`], [`driver_queue`]) and stops on signals
//! ([`signals`]), and notes where the results are ([`results`]).
//! [`preview`] replays its dispatch decisions for `flow plan --why`.

pub(crate) mod alloc;
pub(crate) mod cache_lookup;
pub(crate) mod driver;
pub(crate) mod driver_cache;
pub(crate) mod driver_expand;
pub(crate) mod driver_queue;
pub(crate) mod driver_workers;
pub(crate) mod job_factory;
pub(crate) mod links;
pub(crate) mod orphans;
pub(crate) mod placements;
pub(crate) mod preview;
pub(crate) mod refusals;
pub(crate) mod remote;
pub(crate) mod results;
pub(crate) mod resume;
pub(crate) mod run;
pub(crate) mod signals;
pub(crate) mod stale;
