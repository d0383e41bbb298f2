//! [`Counts`]: how many instances of a task, or of the run, ended in each state.

use serde::Serialize;

/// Instances by the state of their last attempt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Instances in the graph.
    pub total: u64,
    /// Ran and succeeded.
    pub succeeded: u64,
    /// Skipped: an earlier run did the same work.
    pub cached: u64,
    /// Failed after their retries.
    pub failed: u64,
    /// Cancelled before they finished.
    pub cancelled: u64,
    /// Their worker disappeared.
    pub lost: u64,
    /// Not run: their `when` was false, or they wait on a skipped instance.
    pub skipped: u64,
    /// Started and never ended (the run was killed or is still going).
    pub running: u64,
    /// Never started.
    pub waiting: u64,
}
