//! [`Event`]: what a run reports to whoever displays it (progress bar,
//! NDJSON, failure reports). The engine never prints; it sends events.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::ir::TaskId;
use crate::log::AttemptMetrics;
use crate::rundir::Summary;
use crate::runtime::protocol::outcome::Status;

/// Why outputs an earlier run left were moved aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MoveReason {
    /// No instance of the task declares them any more.
    Vanished,
    /// Their instance was skipped in this run.
    Skipped,
    /// Their instance failed in this run: what its command left, or an
    /// earlier run did.
    Failed,
    /// Their instance was cancelled in this run.
    Cancelled,
    /// An attempt an earlier run started and never finished (it was
    /// killed while the attempt ran) wrote them.
    Unfinished,
}

/// Something that happened in a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The run began.
    RunStarted {
        /// The run's id.
        run_id: String,
        /// Its directory.
        run_dir: PathBuf,
        /// Task instances in the graph.
        total: u64,
        /// Tasks in the graph (`total` instances belong to them).
        #[serde(skip)]
        tasks: u64,
        /// Tasks whose instances are known only at run time (not in `total`).
        #[serde(skip)]
        dynamic: Vec<String>,
        /// Tasks of the file dropped from the run by a false `when` (or
        /// needing one that was), in file order.
        #[serde(skip)]
        dropped: Vec<String>,
        /// The access file remote workers join with, if the run listens for
        /// them. Left out of the serialised event: it is always
        /// `access.json` in `run_dir`, and whoever started the run chose to
        /// listen.
        #[serde(skip)]
        access: Option<PathBuf>,
    },
    /// An attempt started on a worker.
    TaskStarted {
        /// Which instance.
        task: TaskId,
        /// `name[index]`.
        label: String,
        /// Attempt number, 0 first.
        attempt: u32,
    },
    /// An attempt ended.
    TaskFinished {
        /// Which instance.
        task: TaskId,
        /// `name[index]`.
        label: String,
        /// Attempt number.
        attempt: u32,
        /// How it ended.
        status: Status,
        /// Whether it will be tried again.
        retrying: bool,
        /// When the next attempt may start, if it waits (`retry_delay`), in µs since the Unix epoch.
        retry_at_us: Option<u64>,
        /// How long it ran.
        duration: Duration,
        /// The end of its stderr (failures only).
        stderr_tail: String,
        /// `file:line:column` of the task in the workflow.
        location: std::sync::Arc<str>,
        /// Where it ran and what its process used, if one ran and its
        /// worker reported it (as the journal records it).
        metrics: Option<Box<AttemptMetrics>>,
    },
    /// An instance will not run.
    TaskCancelled {
        /// Which instance.
        task: TaskId,
        /// `name[index]`.
        label: String,
        /// Why.
        reason: String,
    },
    /// The instances of a group that never started were cancelled
    /// together: the run was stopped (Ctrl-C, `--max-fails`).
    RestCancelled {
        /// The group.
        group: crate::ir::GroupId,
        /// Its name.
        name: String,
        /// How many instances.
        count: u64,
        /// Why.
        reason: String,
    },
    /// An instance was skipped without running: its `when` was false, or
    /// it waits on a skipped instance.
    TaskSkipped {
        /// Which instance.
        task: TaskId,
        /// `name[index]`.
        label: String,
        /// Why: the condition that was false, or the skipped instance it waits on.
        reason: String,
        /// `file:line:column` of the task in the workflow.
        location: std::sync::Arc<str>,
    },
    /// A group known only at run time got its instances: its expansion
    /// file, written by tasks of this run, was read.
    Expanded {
        /// The group.
        group: crate::ir::GroupId,
        /// Its name.
        name: String,
        /// The file its instances come from.
        file: String,
        /// How many instances it has.
        count: u64,
    },
    /// A part of a nested group became known: the file of one of its
    /// parent's instances was read.
    PartExpanded {
        /// The group.
        group: crate::ir::GroupId,
        /// The part as `name[index.?]`, `index` being the parent instance's.
        label: String,
        /// The file its instances come from.
        file: String,
        /// How many instances it has.
        count: u64,
    },
    /// A remote worker joined.
    WorkerJoined {
        /// Its id in this run.
        worker: u32,
        /// Its host name.
        hostname: String,
        /// The cluster job it runs in, if any.
        #[serde(default)]
        allocation: Option<String>,
        /// Its address.
        peer: String,
        /// CPUs it offers.
        cpus: usize,
        /// GPUs it offers.
        gpus: usize,
    },
    /// A remote worker left or fell silent; its running tasks are rescheduled.
    WorkerLost {
        /// How many of its tasks were running (they run again elsewhere).
        tasks: usize,
        /// Its id in this run.
        worker: u32,
        /// Its host name.
        hostname: String,
        /// The cluster job it ran in, if any.
        #[serde(default)]
        allocation: Option<String>,
        /// Why it is considered gone.
        reason: String,
    },
    /// A connection was refused (wrong or missing secret, or garbage).
    WorkerRefused {
        /// Where it came from.
        peer: String,
        /// What went wrong.
        reason: String,
        /// Connections from the same address refused since the last such
        /// event and not reported one by one (at most one event per address
        /// a minute).
        more: u64,
    },
    /// Connections refused from one address after its last
    /// [`Event::WorkerRefused`], not yet reported (said when the run ends).
    RefusedQuietly {
        /// The address.
        address: String,
        /// How many.
        count: u64,
    },
    /// An allocation of the run's queue changed state.
    Allocation {
        /// Its number in this run.
        id: u32,
        /// The manager's job id (empty if submission failed).
        job_id: String,
        /// Its new state.
        state: crate::rundir::AllocState,
        /// Why it failed or ended, if known.
        reason: Option<String>,
    },
    /// The queue stopped submitting after repeated failures.
    QueuePaused {
        /// Why, quoting the manager's or the worker's error.
        reason: String,
    },
    /// A task can never run on the run's queue (reported once).
    QueueUnschedulable {
        /// The task's name.
        task: String,
        /// Why.
        reason: String,
    },
    /// Outputs that earlier runs recorded for instances that no longer
    /// exist, or that did not succeed in this run, were moved out of the
    /// way, before anything could read them.
    OutputsMoved {
        /// The task.
        task: String,
        /// Why: their instances vanished, were skipped, failed or were cancelled.
        reason: MoveReason,
        /// The instances (the vanished ones by their labels then).
        labels: Vec<String>,
        /// The files, relative to the workflow directory.
        files: Vec<String>,
        /// Those of `files` changed since flow wrote them (by hand, or by
        /// a command it does not know of): moved all the same.
        changed: Vec<String>,
        /// Where they are now (relative to the workflow directory).
        dir: String,
        /// Under `--dry-exec`: they would be moved, and were left.
        dry: bool,
    },
    /// Something the user should know that does not stop the run, e.g. an
    /// earlier run's damaged files whose intact parts were used.
    Warning {
        /// What happened.
        message: String,
    },
    /// The run ended.
    RunFinished {
        /// Final counts.
        summary: Summary,
    },
}
