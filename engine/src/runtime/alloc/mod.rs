//! Allocation queues: submitting cluster jobs (Slurm, PBS) that start
//! `flow worker`s, in response to waiting work.
//!
//! [`settings`] is what a profile says about a queue; `script` renders the
//! submission script; [`record`] is what `allocs.json` in the run directory
//! holds (read by `flow alloc` and `flow explain`).

pub mod record;
pub mod settings;

pub use record::{AllocRecord, AllocState, AllocsFile, QueueRecord};
pub use settings::{Manager, QueueSettings, WorkerShape};
