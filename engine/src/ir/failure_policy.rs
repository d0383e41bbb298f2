//! What a group does about failures: [`BackOff`] (how long a failed
//! instance waits before its next attempt), [`RetryOn`] (which failures
//! are retried) and [`MaxFails`] (how many failures stop the rest).

use serde::{Deserialize, Serialize};

/// The longest wait before a retry, in µs: a day. The compiler refuses a
/// longer `first` or `max` (issue 29: a factor of 1e300 scheduled a retry
/// in the year 586524), and a wait without `max` stops growing here.
pub const MAX_DELAY_US: u64 = 24 * 3600 * 1_000_000;

/// The wait before each retry: `first_us`, multiplied by `factor` for each
/// later retry, never more than `max_us` (or [`MAX_DELAY_US`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BackOff {
    /// The wait before the first retry (attempt 1), in µs.
    pub first_us: u64,
    /// What each later wait is multiplied by (1 keeps it constant).
    pub factor: f64,
    /// The longest wait, in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_us: Option<u64>,
}

impl BackOff {
    /// The wait in µs before attempt `attempt` (1 is the first retry; 0,
    /// the first attempt, never waits).
    pub fn delay_us(&self, attempt: u32) -> u64 {
        let Some(retry) = attempt.checked_sub(1) else { return 0 };
        let grown = self.first_us as f64 * self.factor.powi(retry.min(i32::MAX as u32) as i32);
        let cap = self.max_us.unwrap_or(MAX_DELAY_US);
        // `as` saturates: an overflowing product is the cap.
        (grown as u64).min(cap)
    }
}

/// A failure that `retry_on` retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryOn {
    /// The process exited with this code.
    Exit(i32),
    /// The process was killed by this signal.
    Signal(i32),
    /// The attempt ran past its `timeout`.
    Timeout,
}

/// How the reason of an attempt killed at its `timeout` begins
/// ("timed out after 90s"): `retry_on = ["timeout"]` looks for it.
pub const TIMED_OUT: &str = "timed out after";

/// What an ended attempt's failure was, as `retry_on` tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// The exit code, if the process exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
    /// Whether it ran past its timeout.
    pub timed_out: bool,
}

impl Failure {
    /// The failure of an attempt that ended with `exit_code`, `signal` and `reason`.
    pub fn of(exit_code: Option<i32>, signal: Option<i32>, reason: &str) -> Failure {
        Failure { exit_code, signal, timed_out: reason.starts_with(TIMED_OUT) }
    }
}

impl RetryOn {
    /// Whether `failure` is this kind.
    pub fn matches(self, failure: Failure) -> bool {
        match self {
            RetryOn::Exit(code) => failure.exit_code == Some(code),
            RetryOn::Signal(sig) => failure.signal == Some(sig),
            RetryOn::Timeout => failure.timed_out,
        }
    }

    /// Whether `list` (a group's `retry_on`) retries `failure`: an empty list retries every failure.
    pub fn retries(list: &[RetryOn], failure: Failure) -> bool {
        list.is_empty() || list.iter().any(|r| r.matches(failure))
    }
}

/// How many failed instances stop a run (or a task's remaining instances).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxFails {
    /// This many.
    Count(u64),
    /// This share (above 0, at most 1) of the instances, rounded up.
    Fraction(f64),
}

impl MaxFails {
    /// The number of failures that stops, out of `instances`; at least 1.
    pub fn limit(self, instances: u64) -> u64 {
        match self {
            MaxFails::Count(n) => n.max(1),
            MaxFails::Fraction(f) => ((instances as f64 * f).ceil() as u64).max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_grows_by_its_factor_up_to_the_cap() {
        let b = BackOff { first_us: 30_000_000, factor: 2.0, max_us: Some(600_000_000) };
        let waits: Vec<u64> = (0..8).map(|a| b.delay_us(a) / 1_000_000).collect();
        assert_eq!(waits, [0, 30, 60, 120, 240, 480, 600, 600]);
        assert_eq!(b.delay_us(u32::MAX), 600_000_000, "no overflow");
    }

    #[test]
    fn a_plain_delay_stays_the_same() {
        let b = BackOff { first_us: 200_000, factor: 1.0, max_us: None };
        assert_eq!([b.delay_us(1), b.delay_us(2), b.delay_us(50)], [200_000; 3]);
        let huge = BackOff { first_us: 1_000_000, factor: 1e300, max_us: None };
        assert_eq!(huge.delay_us(3), MAX_DELAY_US, "issue 29: at most a day");
    }

    #[test]
    fn retry_on_matches_codes_signals_and_timeouts() {
        let exit = |c| Failure { exit_code: Some(c), signal: None, timed_out: false };
        let killed = Failure { exit_code: None, signal: Some(9), timed_out: false };
        let timed_out = Failure { exit_code: None, signal: None, timed_out: true };
        let list = [RetryOn::Exit(75), RetryOn::Signal(9)];
        assert!(RetryOn::retries(&list, exit(75)));
        assert!(!RetryOn::retries(&list, exit(3)));
        assert!(RetryOn::retries(&list, killed));
        assert!(!RetryOn::retries(&list, timed_out));
        assert!(RetryOn::retries(&[RetryOn::Timeout], timed_out));
        assert!(RetryOn::retries(&[], exit(3)), "empty retries everything");
    }

    #[test]
    fn max_fails_counts_or_takes_a_share() {
        assert_eq!(MaxFails::Count(5).limit(100), 5);
        assert_eq!(MaxFails::Fraction(0.1).limit(100), 10);
        assert_eq!(MaxFails::Fraction(0.1).limit(15), 2, "rounded up");
        assert_eq!(MaxFails::Fraction(0.1).limit(0), 1);
        assert_eq!(MaxFails::Count(0).limit(3), 1);
    }
}
