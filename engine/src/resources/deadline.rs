//! [`Deadline`]: when a worker goes away, as µs since the Unix epoch — the
//! one form the scheduler core, `workers.json` and `flow explain` use, so a
//! deadline written to a file is the one the scheduler went by.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::time_left::finishes_in;

/// When a worker goes away (the end of its `--time-limit` or of its
/// cluster allocation), in µs since the Unix epoch like every time flow
/// keeps; compared with a `now` in the same µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Deadline(pub u64);

impl Deadline {
    /// The deadline `limit` after `now_us`.
    pub fn after(now_us: u64, limit: Duration) -> Self {
        Self(now_us.saturating_add(u64::try_from(limit.as_micros()).unwrap_or(u64::MAX)))
    }

    /// The time left at `now_us` (none once passed).
    pub fn left(self, now_us: u64) -> Duration {
        Duration::from_micros(self.0.saturating_sub(now_us))
    }
}

/// Whether a task that asks for `request` ends in time on a worker with
/// `deadline`, starting at `now_us` — the check the scheduler and
/// `flow explain` make alike. Without a request or a deadline, it does.
pub fn ends_in_time(request: Option<Duration>, deadline: Option<Deadline>, now_us: u64) -> bool {
    finishes_in(request, deadline.map(|d| d.left(now_us)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_leaves_what_is_left_of_it() {
        let deadline = Deadline::after(1_000_000, Duration::from_secs(60));
        assert_eq!(deadline, Deadline(61_000_000));
        assert_eq!(deadline.left(31_000_000), Duration::from_secs(30));
        assert_eq!(deadline.left(90_000_000), Duration::ZERO);
        let s = |secs| Some(Duration::from_secs(secs));
        assert!(ends_in_time(s(29), Some(deadline), 31_000_000));
        assert!(!ends_in_time(s(30), Some(deadline), 31_000_000), "the boundary is exclusive");
        assert!(ends_in_time(None, Some(deadline), 90_000_000) && ends_in_time(s(1 << 20), None, 0));
    }
}
