//! [`Out`]: the core's only way to reach the outside world, and the task
//! states it reports through it.

use crate::ir::{GroupId, TaskId};

use super::allocation::Allocation;
use super::worker_id::WorkerId;

/// What the core asks of the driver. The driver starts processes (or sends
/// work to remote workers) and turns state changes into events; tests record
/// the calls.
pub trait Out {
    /// Run `task` (attempt number `attempt`, 0 first) on `worker` with `alloc`.
    fn start(&mut self, task: TaskId, attempt: u32, worker: WorkerId, alloc: &Allocation);

    /// A task reached a state; emitted once per change (`Cancelled` for
    /// every dependent of a failure).
    fn state(&mut self, task: TaskId, state: TaskState);

    /// `count` instances of `group` that never started in this run were
    /// cancelled for `reason` at once (the run stopped): one call for all
    /// of them, where `state` would be called once each.
    fn cancelled_rest(&mut self, group: GroupId, count: u64, reason: CancelReason);
}

/// How one attempt of a task ended, as the driver saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskResult {
    /// The attempt succeeded.
    Succeeded,
    /// The attempt failed (exit code, signal, timeout, missing output, …).
    Failed,
    /// The attempt failed in a way the task's `retry_on` does not list: it
    /// is not retried.
    NotRetryable,
    /// The instance's `when` rendered false when it was about to start: it
    /// did not run.
    Skipped,
}

/// A state a task reaches, reported through [`Out::state`]. Starting is
/// reported by [`Out::start`] instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// The task succeeded.
    Succeeded,
    /// An attempt failed or its worker was lost; the task waits to run again
    /// as attempt `attempt`.
    Retrying {
        /// The number of the coming attempt (0 was the first).
        attempt: u32,
    },
    /// An attempt failed; the task waits until `until_us` (its
    /// `retry_delay`) to run again as attempt `attempt`, holding no worker.
    Delayed {
        /// The number of the coming attempt.
        attempt: u32,
        /// When it may start, in µs since the Unix epoch.
        until_us: u64,
    },
    /// The task failed for good (retries or crash limit used up).
    Failed,
    /// The task failed for good, but its task has `continue_on_failure`:
    /// it counts as ended, and what depends on it runs.
    Ignored,
    /// The task will not run.
    Cancelled(CancelReason),
    /// The task did not run and counts as done for what waits on it.
    Skipped(SkipReason),
}

/// Why a task was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// Its own `when` rendered false.
    Condition,
    /// It waits for the id, which was skipped: element-wise, or as a whole
    /// task every instance of which was skipped.
    Upstream(TaskId),
}

/// Why a task was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelReason {
    /// A task this one depends on, directly or not, failed: the id is that task.
    DependencyFailed(TaskId),
    /// A task this one depends on, directly or not, was cancelled because
    /// no worker can run it: the id is that task.
    DependencyCancelled(TaskId),
    /// The run reached `max_fails` failed tasks.
    MaxFails,
    /// Its own task reached its `max_fails` failed instances.
    TaskMaxFails,
    /// The run was stopped ([`super::Core::stop`]).
    Stopped,
    /// No worker can ever run the task ([`super::Core::cancel_unschedulable`]).
    Unschedulable,
}
