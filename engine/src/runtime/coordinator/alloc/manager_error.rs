//! [`ManagerError`]: what the resource manager's command-line tools answered
//! when a submission, a listing or a cancellation failed.

use std::io;

use thiserror::Error;

/// A Slurm or PBS command that could not run, or that failed.
#[derive(Debug, Error)]
pub enum ManagerError {
    /// The command could not be started (not installed, not on `PATH`).
    #[error("cannot run `{program}`: {source}")]
    Spawn {
        /// The command.
        program: String,
        /// Why it could not start.
        source: io::Error,
    },
    /// The submission succeeded but printed no job id.
    #[error("`{program}` printed no job id")]
    NoJobId {
        /// The command.
        program: String,
    },
    /// The user running flow has no name to select their jobs by.
    #[error("cannot tell who runs flow")]
    UnknownUser,
    /// The command failed and wrote nothing on stderr.
    #[error("`{program}` failed with {status}")]
    Failed {
        /// The command.
        program: String,
        /// `exit code N` or `a signal`.
        status: String,
    },
    /// The command failed, saying why on stderr.
    #[error("`{program}` failed with {status}: {said}")]
    FailedSaying {
        /// The command.
        program: String,
        /// `exit code N` or `a signal`.
        status: String,
        /// The last lines of its stderr, on one line.
        said: String,
    },
}
