//! [`ValueError`]: why a numeric key's value (`cpus`, `memory`, `retries`,
//! `priority`, a time limit) is not one it accepts.

use thiserror::Error;

use crate::units::UnitError;

/// A numeric key's value that is wrong; the caller reports it at the value's span.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ValueError {
    /// Text that is no number.
    #[error("`{0}` is not a number")]
    NotNumber(String),
    /// Text that is no whole number.
    #[error("`{0}` is not a whole number")]
    NotWholeText(String),
    /// A number with a fraction, or too large, where a whole number goes.
    #[error("{0} is not a whole number")]
    NotWhole(f64),
    /// A number below the key's minimum, with a fraction, or too large for a count.
    #[error("{n} is not a whole number of at least {min}")]
    BelowMin {
        /// The number.
        n: f64,
        /// The key's minimum.
        min: u64,
    },
    /// A whole number above what the key counts to; the number itself is
    /// left out, as a float would show it rounded.
    #[error("more than {max}, the most it takes")]
    TooLarge {
        /// The largest value the key takes.
        max: u64,
    },
    /// A share (`"10%"`) that is not above 0% and at most 100%.
    #[error("`{0}` is not a share above 0% and at most 100%")]
    NotShare(String),
    /// A duration longer than the longest wait flow schedules.
    #[error("longer than a day, the longest wait flow schedules")]
    OverADay,
    /// A factor below 1 where a wait must not shrink.
    #[error("{0} is less than 1")]
    BelowOne(f64),
    /// A negative resource amount.
    #[error("{0} must not be negative")]
    Negative(f64),
    /// A resource amount that is not finite or too large.
    #[error("{0} is not a valid amount")]
    NotAmount(f64),
    /// A number of seconds that is negative or not finite.
    #[error("{0} is not a duration")]
    NotSeconds(f64),
    /// A duration or size that does not parse.
    #[error(transparent)]
    Unit(#[from] UnitError),
}
