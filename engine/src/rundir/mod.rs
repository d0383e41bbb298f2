//! Run directories: `.flow/runs/<id>/`, the files a run leaves there and
//! the one way to read them back.
//!
//! [`RunDir`] finds, creates, writes and reads a run's directory; [`Meta`],
//! [`WorkerInfo`], [`AllocsFile`] and [`Summary`] are the types of its JSON
//! files. [`RunView`] reads a run back for `flow explain`, `flow report`,
//! `flow status`, `flow runs` and `flow log`, with one rule for live,
//! missing and torn files; every error is a [`RunDirError`] naming the file.
//! The runtime writes these files; this module never knows how tasks run.
//! See "Run directory, journal and resume" in `docs/design/architecture.md`.

mod allocs_file;
mod attempt_index;
mod meta;
mod run_dir;
mod run_dir_error;
mod run_journal;
mod run_view;
mod summary;
mod worker_info;

pub use allocs_file::{ALLOCS_FILE, AllocRecord, AllocState, AllocsFile, QueueRecord};
pub use attempt_index::AttemptIndex;
pub use meta::Meta;
pub use run_dir::{RunDir, RunLock, STATE_DIR, create_dirs, if_written, locate, state_dir};
pub use run_dir_error::RunDirError;
pub use run_journal::{JournalHealth, RunJournal};
pub use run_view::RunView;
pub use summary::{FinallyOutcome, IO_FAILURE, Summary};
pub use worker_info::WorkerInfo;
