//! [`Event`]: what a run reports to whoever displays it (progress bar,
//! NDJSON, failure reports). The engine never prints; it sends events.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::ir::TaskId;
use crate::runtime::protocol::worker::Status;

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
        /// How long it ran.
        duration: Duration,
        /// The end of its stderr (failures only).
        stderr_tail: String,
        /// `file:line:column` of the task in the workflow.
        location: String,
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
        state: crate::runtime::AllocState,
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
    /// exist were moved out of the way, before anything could read them.
    OutputsMoved {
        /// The task.
        task: String,
        /// The vanished instances.
        labels: Vec<String>,
        /// The files, relative to the workflow directory.
        files: Vec<String>,
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

/// The exit code of a run that could not write its journal, its output log
/// or its summary (`EX_IOERR` of sysexits.h).
pub const IO_FAILURE: u8 = 74;

/// How a run ended, as written to `summary.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Summary {
    /// The run's id.
    pub run_id: String,
    /// Instances in the graph.
    pub total: u64,
    /// Instances that ran and succeeded.
    pub succeeded: u64,
    /// Instances skipped because an earlier run did the same work.
    pub cached: u64,
    /// Instances that failed (after their retries).
    pub failed: u64,
    /// Instances that did not run because of a failure, `--max-fails` or Ctrl-C.
    pub cancelled: u64,
    /// Whether the run was interrupted.
    pub interrupted: bool,
    /// A `--dry-exec` run: nothing was executed, its successes are not results.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_exec: bool,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Run files that could not be written (a full disk): the run stopped,
    /// and these say what was not recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_errors: Vec<String>,
    /// Where the results are: the first declared outputs (absolute) of the
    /// instances of final tasks (those no task depends on) that succeeded
    /// or were unchanged, in instance order. Not a run file: `flow run`
    /// names them as the run ends.
    #[serde(skip)]
    pub results: Vec<PathBuf>,
    /// How many more such outputs there are.
    #[serde(skip)]
    pub more_results: u64,
}

impl Summary {
    /// The process exit code: 0 all succeeded, 1 some failed or were
    /// cancelled, 74 run files could not be written, 130 interrupted.
    pub fn exit_code(&self) -> u8 {
        if !self.io_errors.is_empty() {
            IO_FAILURE
        } else if self.interrupted {
            130
        } else if self.failed > 0 || self.cancelled > 0 {
            1
        } else {
            0
        }
    }
}
