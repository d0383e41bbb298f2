//! [`Failure`]: why a command failed, which decides its exit code, and
//! how it is printed — the one place errors are printed.

use std::sync::Arc;

use flow_engine::diag::{Diagnostic, MAX_SHOWN, Source};
use flow_engine::report::ReportError;
use flow_engine::rundir::RunDirError;
use flow_engine::runtime::RunError;
use miette::{GraphicalReportHandler, GraphicalTheme};

use crate::exit_codes;
use crate::stdout::say;

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
    /// a run's files, missing, unreadable or damaged, for one (exit code 74).
    Io(String),
    /// flow itself went wrong: a thread of the run panicked (exit code 70).
    Internal(String),
}

impl Failure {
    /// Prints the failure to stderr: the first [`MAX_SHOWN`] diagnostics with their
    /// snippets, how many more there are, then a summary line.
    pub fn print(self, color: bool) {
        match self {
            Failure::Usage(message) | Failure::Io(message) => say!("error: {message}"),
            Failure::Internal(message) => {
                say!("error: {message}; this is a bug in flow, please report it");
            }
            Failure::Invalid { source, diagnostics } => {
                let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
                let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
                let mut out = String::new();
                for d in diagnostics.iter().take(MAX_SHOWN) {
                    let _ = handler.render_report(&mut out, &d.report(&source));
                }
                let n = diagnostics.len();
                if n > MAX_SHOWN {
                    out.push_str(&format!("… and {} more\n", n - MAX_SHOWN));
                }
                let problems = flow_engine::units::plural(n as u64, "problem");
                say!("{out}error: {problems} in {}", source.name);
            }
        }
    }

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
            RunError::Unschedulable { workflow, diagnostics } => {
                Failure::Invalid { source: Arc::clone(workflow), diagnostics: diagnostics.clone() }
            }
            RunError::Images(lines) => Failure::Usage(lines.join("\nerror: ")),
            RunError::Options(_) => Failure::Usage(e.to_string()),
            RunError::Io(_) => Failure::Io(e.to_string()),
            RunError::Crashed(_) => Failure::Internal(e.to_string()),
        }
    }
}

impl From<RunDirError> for Failure {
    /// A run that is not there is a usage mistake; one whose files cannot
    /// be read is an I/O failure, whichever command reads them.
    fn from(e: RunDirError) -> Self {
        if e.is_not_found() { Failure::Usage(e.to_string()) } else { Failure::Io(e.to_string()) }
    }
}

impl From<ReportError> for Failure {
    fn from(e: ReportError) -> Self {
        match e {
            ReportError::Run(e) => e.into(),
            ReportError::Write(_) => Failure::Io(e.to_string()),
            ReportError::Render(_) => Failure::Internal(e.to_string()),
        }
    }
}
