//! [`ReportError`]: why a run's report could not be made.

use thiserror::Error;

use crate::rundir::RunDirError;

/// A run file that could not be read, or the report that could not be
/// rendered or written.
#[derive(Debug, Error)]
pub enum ReportError {
    /// A run file could not be read (the error names it).
    #[error(transparent)]
    Run(#[from] RunDirError),
    /// The page could not be written.
    #[error("cannot write the report: {0}")]
    Write(#[from] std::io::Error),
    /// The template failed to render (a bug in flow).
    #[error("cannot render the report: {0}")]
    Render(String),
}
