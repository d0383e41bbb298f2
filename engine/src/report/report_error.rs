//! [`ReportError`]: why a run's report could not be made.

use std::path::PathBuf;

use thiserror::Error;

/// A run file that could not be read, or the report that could not be rendered.
#[derive(Debug, Error)]
pub enum ReportError {
    /// A run file could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A run file could not be read, or does not parse (the error names it).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The template failed to render (a bug in flow).
    #[error("cannot render the report: {0}")]
    Render(String),
}
