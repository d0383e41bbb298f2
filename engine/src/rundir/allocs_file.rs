//! `allocs.json`: every allocation a run submitted and the state of its
//! queue, rewritten by the coordinator whenever something changes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::profile::Manager;

/// The file name in the run directory.
pub const ALLOCS_FILE: &str = "allocs.json";

/// What `allocs.json` holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocsFile {
    /// The run's queue, if it has one.
    pub queue: Option<QueueRecord>,
    /// Every allocation submitted, oldest first.
    pub allocations: Vec<AllocRecord>,
}

/// The state of a queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueRecord {
    /// The profile that defined it.
    pub profile: String,
    /// Slurm or PBS.
    pub manager: Manager,
    /// Longest life of an allocation, in seconds.
    pub time_limit_s: u64,
    /// Workers one allocation starts.
    pub workers_per_allocation: u32,
    /// Most workers alive or queued at once.
    pub max_workers: u32,
    /// Most allocations queued (not yet started) at once.
    pub backlog: u32,
    /// Why the queue stopped submitting, if it did (quotes the manager's error).
    pub paused: Option<String>,
    /// Tasks the queue can never run, each with the reason (reported once).
    pub unschedulable: Vec<String>,
}

/// One submitted allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AllocRecord {
    /// Its number in this run (1, 2, …).
    pub id: u32,
    /// The manager's job id (empty if submission failed).
    pub job_id: String,
    /// Where it is in its life.
    pub state: AllocState,
    /// Workers it was asked to start.
    pub workers: u32,
    /// Workers connected now.
    pub connected: u32,
    /// Workers that ever connected.
    pub joined: u32,
    /// When it was submitted (µs since the epoch).
    pub submitted_us: u64,
    /// When its first worker connected.
    pub started_us: Option<u64>,
    /// When it ended.
    pub ended_us: Option<u64>,
    /// Why it failed or ended, if known (the manager's or the worker's words).
    pub reason: Option<String>,
    /// Its submission script, relative to the run directory.
    pub script: String,
    /// The file its stdout and stderr go to, relative to the run directory.
    pub output: String,
}

/// Where an allocation is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AllocState {
    /// Submitted; no worker has connected yet.
    Queued,
    /// At least one of its workers is connected.
    Running,
    /// Its workers left after running.
    Finished,
    /// Submission failed, it ended before any worker connected, or its
    /// workers died at once.
    Failed,
    /// The run cancelled it.
    Cancelled,
}

impl AllocState {
    /// Whether it can still change.
    pub fn is_active(self) -> bool {
        matches!(self, AllocState::Queued | AllocState::Running)
    }
}
