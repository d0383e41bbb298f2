//! [`RunDirError`]: why a run, or one of its files, could not be read.

use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::log::LogError;

/// A run that could not be found, or a file of it that could not be read.
/// Every variant about a file names it.
#[derive(Debug, Error)]
pub enum RunDirError {
    /// No `.flow` directory with runs here or in a parent directory.
    #[error("no `.flow` directory here or in a parent directory; name the workflow with -w")]
    NoStateDir,
    /// The state directory holds no runs.
    #[error("no runs in `{}`", state.display())]
    NoRuns {
        /// The `.flow` directory.
        state: PathBuf,
    },
    /// No run has this id, and no single run's id starts with it.
    #[error("no run `{id}` (or more than one) in `{}`", state.display())]
    NoSuchRun {
        /// The id (or prefix) asked for.
        id: String,
        /// The `.flow` directory.
        state: PathBuf,
    },
    /// A file the run must have is not there.
    #[error("`{}` is missing", path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// A file does not parse, or is not the kind of file it should be.
    #[error("`{}` is damaged ({what})", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// A record of the journal or the output log cannot be read (the error names the file).
    #[error(transparent)]
    Log(LogError),
    /// A file could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

impl RunDirError {
    /// The error reading `path` failed with: a file that is not there is
    /// [`RunDirError::Missing`], one that does not parse is
    /// [`RunDirError::Damaged`].
    pub fn reading(path: &Path, e: io::Error) -> Self {
        let path = path.to_owned();
        match e.kind() {
            io::ErrorKind::NotFound => RunDirError::Missing { path },
            io::ErrorKind::InvalidData => match e.into_inner().map(|inner| inner.downcast::<RunDirError>()) {
                Some(Ok(typed)) => *typed,
                Some(Err(inner)) => match inner.downcast::<LogError>() {
                    Ok(log) => RunDirError::Log(*log),
                    Err(inner) => RunDirError::Damaged { path, what: inner.to_string() },
                },
                None => RunDirError::Damaged { path, what: "invalid data".to_owned() },
            },
            _ => RunDirError::Io { path, source: e },
        }
    }

    /// Whether the run asked for could not be found (as opposed to read).
    pub fn is_not_found(&self) -> bool {
        matches!(self, RunDirError::NoStateDir | RunDirError::NoRuns { .. } | RunDirError::NoSuchRun { .. })
    }
}

impl From<RunDirError> for io::Error {
    fn from(e: RunDirError) -> Self {
        let kind = match &e {
            RunDirError::Missing { .. } => io::ErrorKind::NotFound,
            RunDirError::Damaged { .. } | RunDirError::Log(_) => io::ErrorKind::InvalidData,
            RunDirError::Io { source, .. } => source.kind(),
            RunDirError::NoStateDir | RunDirError::NoRuns { .. } | RunDirError::NoSuchRun { .. } => {
                io::ErrorKind::NotFound
            }
        };
        io::Error::new(kind, e)
    }
}
