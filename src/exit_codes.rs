//! Process exit codes, documented in the CLI reference: 0 success, 1 some
//! task failed or was cancelled, 2 invalid input or usage, 74 the run's
//! files could not be written, 130 interrupted.

/// Everything succeeded.
pub const SUCCESS: u8 = 0;
/// The workflow file or the command line is invalid.
pub const INVALID_INPUT: u8 = 2;
