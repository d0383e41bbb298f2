//! The worker interface: what a worker reports about the jobs it was given.
//! The embedded worker and remote workers speak it.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::fingerprint::Fingerprint;
use crate::ir::TaskId;
use crate::log::{FileHashes, OutputStamp, ProcessUsage};

/// A message from a worker to the coordinator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum WorkerEvent {
    /// A job ended.
    Finished {
        /// Which instance.
        task: TaskId,
        /// Which attempt.
        attempt: u32,
        /// How it ended.
        outcome: Outcome,
    },
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Success, failure, ...
    pub status: Status,
    /// The job's fingerprint (definition and inputs), when computed.
    pub fingerprint: Option<Fingerprint>,
    /// The end of its stderr, for failure reports.
    pub stderr_tail: String,
    /// How long it ran.
    pub duration: Duration,
    /// What its process used, when one ran and was reaped.
    pub usage: Option<ProcessUsage>,
    /// A stamp of each declared output, taken when it succeeded.
    pub outputs: Vec<OutputStamp>,
    /// A file it reads that changed while it ran (a success made from it
    /// is not trusted), shown from the workflow directory.
    #[serde(default)]
    pub untrusted: Option<String>,
    /// What each file it reads held when it started (hashed with its
    /// fingerprint); `None` when it reads no file.
    #[serde(default)]
    pub reads: Option<FileHashes>,
}

impl Outcome {
    /// An outcome for a job that started at `started`.
    pub fn new(status: Status, fingerprint: Option<Fingerprint>, stderr_tail: String, started: Instant) -> Self {
        Self {
            status,
            fingerprint,
            stderr_tail,
            duration: started.elapsed(),
            usage: None,
            outputs: Vec::new(),
            untrusted: None,
            reads: None,
        }
    }

    /// An outcome decided without running anything.
    pub fn instant(status: Status) -> Self {
        Self {
            status,
            fingerprint: None,
            stderr_tail: String::new(),
            duration: Duration::ZERO,
            usage: None,
            outputs: Vec::new(),
            untrusted: None,
            reads: None,
        }
    }
}

/// The end state of one attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    /// Exited 0 and created its declared outputs.
    Succeeded,
    /// Not run: an earlier run did the same work and its outputs exist.
    Cached,
    /// Failed: exit code, signal, or another reason.
    Failed {
        /// The exit code, if it exited.
        exit_code: Option<i32>,
        /// The signal that killed it, if any.
        signal: Option<i32>,
        /// What happened, e.g. "exit code 3" or "timed out after 90s".
        reason: String,
    },
    /// Killed because the run was stopped.
    Stopped,
}

impl Status {
    /// A failure.
    pub fn failed(exit_code: Option<i32>, signal: Option<i32>, reason: String) -> Self {
        Status::Failed { exit_code, signal, reason }
    }
}
