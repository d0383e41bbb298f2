//! [`Amount`]: a resource quantity in fixed point.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A resource amount in units of 1/10,000, so `0.25` GPUs add up exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "f64", try_from = "f64")]
pub struct Amount(pub u64);

impl Amount {
    /// Fixed-point units per whole unit.
    pub const SCALE: u64 = 10_000;

    /// Zero.
    pub const ZERO: Amount = Amount(0);

    /// `n` whole units.
    pub const fn whole(n: u64) -> Self {
        Amount(n * Self::SCALE)
    }

    /// Converts a non-negative finite number, rounding to the nearest 1/10,000.
    pub fn from_f64(value: f64) -> Option<Self> {
        let scaled = (value * Self::SCALE as f64).round();
        (value.is_finite() && value >= 0.0 && scaled <= u64::MAX as f64).then_some(Amount(scaled as u64))
    }

    /// The amount as a float.
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / Self::SCALE as f64
    }

    /// Whether this is a whole number of units.
    pub fn is_whole(self) -> bool {
        self.0 % Self::SCALE == 0
    }
}

impl From<Amount> for f64 {
    fn from(a: Amount) -> f64 {
        a.as_f64()
    }
}

/// A number that is no resource amount: negative, not finite, or too large.
#[derive(Debug, Clone, Copy, PartialEq, Error)]
#[error("invalid resource amount {0}")]
pub struct InvalidAmount(pub f64);

impl TryFrom<f64> for Amount {
    type Error = InvalidAmount;
    fn try_from(v: f64) -> Result<Self, InvalidAmount> {
        Amount::from_f64(v).ok_or(InvalidAmount(v))
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarters_add_up_exactly() {
        let q = Amount::from_f64(0.25).unwrap();
        assert_eq!(Amount(q.0 * 4), Amount::whole(1));
        assert!(Amount::from_f64(-1.0).is_none());
        assert!(Amount::from_f64(f64::NAN).is_none());
        assert_eq!(Amount::whole(3).to_string(), "3");
    }
}
