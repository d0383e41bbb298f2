//! The runtime: executing a [`crate::ir::Graph`] — the scheduler core, the
//! workers, the run directory, and the driver that ties them together.
//!
//! [`core`] is plain data structures (no tokio, no I/O); [`driver`] is the
//! only place that meets tokio; workers report through the interface in
//! [`worker`], so a remote worker is a new transport, not a new scheduler.

pub mod alloc;
pub mod core;
pub mod detect;
mod driver;
mod driver_cache;
mod driver_expand;
mod driver_queue;
mod driver_workers;
pub mod event;
pub mod explain;
pub mod fingerprint;
pub mod guard;
pub mod job;
pub mod links;
pub mod local;
pub mod meta;
pub mod options;
mod orphans;
mod output_sink;
mod placements;
pub mod preview;
mod process;
mod protocol;
mod refusals;
mod remote;
pub mod remote_worker;
pub mod resume;
pub mod run;
pub mod run_dir;
mod signals;
mod spawn;
pub mod worker;

pub use event::{Event, Summary};
pub use options::RunOptions;
pub use run::{RunError, RunHandle, start};
