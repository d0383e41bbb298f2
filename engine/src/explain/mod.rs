//! Explaining a run: why a task instance is still waiting, or what happened
//! to it — read from the files of its run directory, live or finished.
//!
//! [`crate::rundir::RunView`] reads `graph.json`, the journal,
//! `workers.json` and `allocs.json`; [`Explainer`] turns them into an
//! [`Explanation`] per instance: its upstream instances that have not succeeded, the workers'
//! resources and lifetimes against its requests, the allocation queue, or
//! how it ran. This module never prints; `flow explain` renders the result.
//! `docs/reference/cli.md` (`flow explain`) lists the reasons in order.

mod explainer;
mod explanation;

#[cfg(test)]
mod tests;

pub use crate::log::State;
pub use explainer::Explainer;
pub use explanation::{
    Earlier, Explanation, QueueWait, QueuedAllocation, Ran, Reason, ReasonKind, UpstreamInstance, UpstreamWait,
    WorkerRef,
};
