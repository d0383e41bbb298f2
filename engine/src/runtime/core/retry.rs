//! [`Retry`]: what [`super::Core::on_finished`] decided about running an
//! ended attempt again, so the driver reports the core's reason rather than
//! working it out again.

/// Whether a task whose attempt ended runs again, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Retry {
    /// The task was not running (already reported, or lost with its worker): nothing changed.
    NotRunning,
    /// The attempt succeeded: there is nothing to run again.
    NotFailed,
    /// The task waits to run again as attempt `attempt` (state `Retrying`).
    Retrying {
        /// The number of the coming attempt (0 was the first).
        attempt: u32,
    },
    /// The task waits until `until_us` (`retry_delay`) to run again as attempt `attempt`.
    Delayed {
        /// The number of the coming attempt.
        attempt: u32,
        /// When it may start, in µs since the Unix epoch.
        until_us: u64,
    },
    /// The failure is not one the task's `retry_on` lists.
    NotRetryable,
    /// The run is being stopped: nothing runs again.
    Stopped,
    /// The task failed as many times as it may.
    OutOfAttempts,
    /// The next attempt, `attempt`, asks for more than any worker has.
    TooBig {
        /// The number of the attempt that was not made.
        attempt: u32,
    },
}

impl Retry {
    /// Whether the task runs again (at once or after its delay).
    pub fn runs_again(self) -> bool {
        matches!(self, Retry::Retrying { .. } | Retry::Delayed { .. })
    }
}
