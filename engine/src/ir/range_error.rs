//! [`RangeError`]: why an index list (`"1-100:2"`, `"1,5,10-20"`) does not parse.

use thiserror::Error;

/// An index list that does not parse; each variant names the part at fault.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RangeError {
    /// A comma with nothing between it and the next one (or the end).
    #[error("empty part in range `{text}`")]
    EmptyPart {
        /// The whole list.
        text: String,
    },
    /// The step after `:` is not a number.
    #[error("step `{step}` is not a positive integer")]
    BadStep {
        /// The step as written.
        step: String,
    },
    /// The step after `:` is zero.
    #[error("step in `{part}` must be at least 1")]
    ZeroStep {
        /// The range with the step.
        part: String,
    },
    /// A bound is not an integer.
    #[error("`{text}` is not an integer")]
    NotInteger {
        /// The bound as written.
        text: String,
    },
    /// The end of a range is below its start.
    #[error("range `{part}` ends before it starts")]
    Backwards {
        /// The range.
        part: String,
    },
    /// A range holds more integers than a `u64` counts.
    #[error("range `{part}` holds more than 2^64 - 1 integers")]
    TooLarge {
        /// The range.
        part: String,
    },
}
