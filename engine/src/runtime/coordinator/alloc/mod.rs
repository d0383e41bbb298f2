//! Allocation queues: submitting cluster jobs (Slurm, PBS) that start
//! `flow worker`s, in response to waiting work.
//!
//! A queue's settings come typed from [`crate::profile`]; [`script`] renders
//! the submission script; what `allocs.json` in the run directory holds
//! (read by `flow alloc` and `flow explain`) is
//! [`crate::rundir::AllocsFile`].

pub(crate) mod manager;
mod manager_error;
pub(crate) mod planner;
pub(crate) mod queue;
pub(in crate::runtime::coordinator) mod queue_side;
pub(crate) mod script;

pub(crate) use manager_error::ManagerError;
