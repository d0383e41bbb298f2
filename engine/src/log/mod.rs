//! The run's records on disk: the output log (`output.log`, every task's
//! stdout, stderr and system messages) and the journal (`journal`, task state
//! changes, which makes runs resumable).
//!
//! Both are append-only files of checksummed frames ([`FrameWriter`],
//! [`FrameReader`]) that survive a crash: a reader keeps every intact record
//! and reports the incomplete one at the end as a [`TornTail`]. Records are
//! binary, little-endian, with no per-record JSON: the output log is the hot
//! path and is written by its own thread ([`OutputLog`]) at disk speed.
//! [`JournalState`] folds the journal into the latest state per task, and
//! [`Latest`] folds the same in a few bytes per instance.
//! This module never knows how tasks run or how the CLI prints them; see
//! "Run directory, journal and resume" in `docs/design/architecture.md`.

mod attempt_metrics;
mod cursor;
mod file_hashes;
mod frame;
mod journal;
mod journal_state;
mod latest;
mod line_splitter;
mod log_error;
mod output;
mod state;
mod wrote;

pub use attempt_metrics::{AttemptMetrics, IoBytes, ProcessUsage};
pub use file_hashes::FileHashes;
pub use frame::{Damage, FileKind, FrameReader, FrameWriter, TornTail};
pub use journal::{JournalEvent, JournalFile, JournalReader, JournalRecord, JournalWriter, read_journal};
pub use journal_state::{JournalEntry, JournalState, fold_attempt};
pub use latest::{LastAttempt, Latest};
pub use line_splitter::LineSplitter;
pub use log_error::LogError;
pub use output::{
    CHANNEL_CAPACITY, LogHealth, OutputLog, OutputLogHandle, OutputLogSender, OutputReader, OutputRecord, OutputStream,
    read_output,
};
pub use state::State;
pub use wrote::{OutputStamp, StampCheck, Wrote};
