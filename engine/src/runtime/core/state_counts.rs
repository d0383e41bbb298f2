//! [`StateCounts`]: how many of a run's tasks are in each state, as
//! [`super::Core::counts`] tells them.

/// How many tasks are in each state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateCounts {
    /// Not started, waiting for dependencies.
    pub waiting: u64,
    /// Not started, dependencies done: waiting for resources.
    pub ready: u64,
    /// Started and not finished.
    pub running: u64,
    /// Succeeded (including instances done in an earlier run).
    pub succeeded: u64,
    /// Failed for good.
    pub failed: u64,
    /// Will not run.
    pub cancelled: u64,
    /// Did not run: left out by a `when`.
    pub skipped: u64,
}
