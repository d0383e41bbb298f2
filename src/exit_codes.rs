//! Process exit codes, documented in the CLI reference (`## Exit codes`):
//! 0 success, 1 some task failed or was cancelled, 2 invalid input or
//! usage, 70 an internal error, 74 files that are not input could not be
//! read or written, 130 interrupted. `flow run` takes 1, 74 and 130 from
//! its run's summary ([`flow_engine::runtime::Summary::exit_code`]).

/// Everything succeeded.
pub const SUCCESS: u8 = 0;
/// The workflow file or the command line is invalid (clap's usage errors too).
pub const INVALID_INPUT: u8 = 2;
/// flow itself went wrong — a panic, a bug (`EX_SOFTWARE` of sysexits.h).
pub const INTERNAL: u8 = 70;
/// Files that are not the input could not be read or written (`EX_IOERR`).
pub const IO_FAILURE: u8 = flow_engine::runtime::IO_FAILURE;
