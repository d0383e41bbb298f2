//! Whether a task's `time_request` finishes in the time a worker has left,
//! and how much a worker of an allocation gets: one answer for the
//! scheduler core, `flow explain`, a queue's planner and
//! `flow check --profile`.

use std::time::Duration;

/// The time a worker of an allocation of `secs` seconds gets: a little
/// less, as it starts after the job does and should stop taking work
/// before the manager ends the job (5 %, at least 1 s, at most a minute).
pub fn worker_time_limit(secs: u64) -> u64 {
    secs - (secs / 20).clamp(1, 60).min(secs / 2)
}

/// Whether a task that asks for `request` finishes in the `left` a worker
/// has: only if it is shorter. A worker's clock runs from before it can
/// take a task, so no worker of a queue ever has all of
/// [`worker_time_limit`] left; a request of exactly that could never start.
/// A task that asks for no time, or a worker without a limit, always does.
pub fn finishes_in(request: Option<Duration>, left: Option<Duration>) -> bool {
    match (request, left) {
        (Some(request), Some(left)) => request < left,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 18: a request of exactly what a worker has is refused by every
    /// asker alike; one second less fits.
    #[test]
    fn the_boundary_is_exclusive() {
        let s = Duration::from_secs;
        let left = s(worker_time_limit(600));
        assert_eq!(left, s(570));
        for (request, fits) in [(s(570), false), (s(569), true), (s(571), false), (Duration::ZERO, true)] {
            assert_eq!(finishes_in(Some(request), Some(left)), fits, "{request:?} in {left:?}");
        }
        assert!(!finishes_in(Some(Duration::ZERO), Some(Duration::ZERO)));
        assert!(finishes_in(None, Some(Duration::ZERO)) && finishes_in(Some(s(1 << 30)), None));
        assert_eq!(worker_time_limit(1), 1);
        assert_eq!(worker_time_limit(3600), 3540);
    }
}
