//! Allocation queues: submitting cluster jobs (Slurm, PBS) that start
//! `flow worker`s, in response to waiting work.
//!
//! A queue's settings come typed from [`crate::profile`]; [`script`] renders
//! the submission script; [`record`] is what `allocs.json` in the run directory
//! holds (read by `flow alloc` and `flow explain`).

pub mod manager;
pub mod planner;
pub mod queue;
pub mod record;
pub mod script;

pub use record::{AllocRecord, AllocState, AllocsFile, QueueRecord};
