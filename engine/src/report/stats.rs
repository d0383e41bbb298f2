//! [`Stats`]: the minimum, median, 95th percentile and maximum of a sample.

use serde::Serialize;

/// Order statistics of a sample of whole numbers (µs or bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Values in the sample.
    pub n: u64,
    /// The smallest.
    pub min: u64,
    /// The median (the lower one of an even sample).
    pub median: u64,
    /// The 95th percentile (nearest rank).
    pub p95: u64,
    /// The largest.
    pub max: u64,
}

impl Stats {
    /// The statistics of `values` (sorted in place), or `None` if it is empty.
    pub fn of(values: &mut [u64]) -> Option<Stats> {
        values.sort_unstable();
        let n = values.len();
        let rank = |q: f64| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        let (&min, &max) = (values.first()?, values.last()?);
        Some(Stats { n: n as u64, min, median: rank(0.5), p95: rank(0.95), max })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_statistics_use_the_nearest_rank() {
        let mut values: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(Stats::of(&mut values), Some(Stats { n: 100, min: 1, median: 50, p95: 95, max: 100 }));
        assert_eq!(Stats::of(&mut [7]), Some(Stats { n: 1, min: 7, median: 7, p95: 7, max: 7 }));
        assert_eq!(Stats::of(&mut []), None);
    }
}
