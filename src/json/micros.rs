//! [`micros`]: seconds, as the run files keep them, in the output's µs.

/// `seconds` in whole µs.
pub fn micros(seconds: f64) -> u64 {
    (seconds * 1e6).round() as u64
}
