//! The coordinator: the `flow run` process around the scheduler core.
//!
//! [`run::start`] sets a run up and starts the [`driver`], the event loop
//! on a single-threaded tokio runtime (the agent and the transport use
//! tokio too; the core never does): it feeds the core's decisions, rendered into jobs by
//! [`job_factory`], to the workers behind [`links`] (the embedded agent
//! and the remote ones, accepted by [`remote`] from a [`lobby`] of
//! connections that have not yet shown the secret, reaching the loop as
//! [`driver_event`]s). Its parts keep their own state: the [`recorder`]
//! journals what the workers report (with [`placements`]) and hands events
//! on, the [`journal_thread`] writes the records and then sends the jobs for
//! remote workers that they record, [`cache_checks`] compares instances with earlier runs before
//! dispatch (with [`cache_lookup`] and [`resume`]), the [`queue_side`] runs
//! the allocation queue ([`alloc`]), [`send_ahead`] keeps tasks waiting in
//! line on remote workers, [`upstream_failures`] what a task waiting for a
//! failure is told, [`ready_times`] when instances became ready, and
//! [`workers_file`] the list of workers. Tasks that remote workers of a
//! killed run carry are held for them ([`stranded`]) and left running by
//! [`orphans`]. The
//! run stops on [`signals`] and notes where the results are ([`results`]).
//! [`preview`] replays its dispatch decisions for `flow plan --why`, and
//! [`rendered`] shows the command a worker would start for an instance;
//! [`prune`] finds the old runs no new run would read.

pub(crate) mod alloc;
pub(crate) mod cache_checks;
pub(crate) mod cache_lookup;
pub(crate) mod driver;
pub(crate) mod driver_event;
pub(crate) mod earlier_output;
pub(crate) mod finally_runner;
pub(crate) mod held;
pub(crate) mod images;
pub(crate) mod job_factory;
pub(crate) mod journal_thread;
pub(crate) mod links;
pub(crate) mod lobby;
pub(crate) mod orphans;
pub(crate) mod placements;
pub(crate) mod preview;
pub(crate) mod prune;
pub(crate) mod queue_side;
pub(crate) mod ready_times;
pub(crate) mod recorder;
pub(crate) mod refusals;
pub(crate) mod remote;
pub(crate) mod rendered;
pub(crate) mod results;
pub(crate) mod resume;
pub(crate) mod run;
pub(crate) mod send_ahead;
pub(crate) mod signals;
pub(crate) mod stale;
pub(crate) mod stranded;
pub(crate) mod upstream_failures;
pub(crate) mod workers_file;
