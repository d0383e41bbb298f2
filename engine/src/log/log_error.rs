//! [`LogError`]: what can go wrong with a log file besides plain IO.

use std::path::PathBuf;

use thiserror::Error;

/// A problem with a framed log file that is not a plain IO error. Readers and
/// writers return it inside an [`std::io::Error`] of kind `InvalidData`;
/// [`crate::log::OutputLogSender`] returns it directly.
#[derive(Debug, Error)]
pub enum LogError {
    /// The file does not start with the expected magic bytes.
    #[error("`{}` is not a flow {kind} file", path.display())]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// What it should have been (`output log`, `journal`).
        kind: &'static str,
    },
    /// A record passed its checksum but could not be decoded (written by another version of flow).
    #[error("`{}`: the record at offset {offset} is malformed: {what}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Where the record's frame starts.
        offset: u64,
        /// What is wrong with it.
        what: &'static str,
    },
    /// The output log's writer thread has stopped, so records can no longer be sent.
    #[error("the output log writer has stopped")]
    Closed,
}

impl From<LogError> for std::io::Error {
    fn from(e: LogError) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidData, e)
    }
}
