//! [`Failure`]: why a command failed, which decides its exit code.

use std::sync::Arc;

use flow_engine::diag::{Diagnostic, Source};
use flow_engine::runtime::RunError;

use crate::exit_codes;

/// Why a command failed. Task failures and interruptions are not failures
/// of the command: `flow run` reports them in its summary's exit code.
pub enum Failure {
    /// A command-line mistake, or input that cannot be read (exit code 2).
    Usage(String),
    /// Problems in the input files (exit code 2), all of them.
    Invalid {
        /// The file the problems are in, for snippets.
        source: Arc<Source>,
        /// Every problem found.
        diagnostics: Vec<Diagnostic>,
    },
    /// Reading or writing a file that is not the command's input failed:
    /// the run directory, for one (exit code 74).
    Io(String),
    /// flow itself went wrong: a thread of the run panicked (exit code 70).
    Internal(String),
}

impl Failure {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) | Failure::Invalid { .. } => exit_codes::INVALID_INPUT,
            Failure::Io(_) => exit_codes::IO_FAILURE,
            Failure::Internal(_) => exit_codes::INTERNAL,
        }
    }
}

impl From<RunError> for Failure {
    fn from(e: RunError) -> Self {
        match &e {
            RunError::Unschedulable(tasks) => {
                Failure::Usage(tasks.iter().map(ToString::to_string).collect::<Vec<_>>().join("\nerror: "))
            }
            RunError::Options(_) => Failure::Usage(e.to_string()),
            RunError::Io(_) => Failure::Io(e.to_string()),
            RunError::Crashed(_) => Failure::Internal(e.to_string()),
        }
    }
}
