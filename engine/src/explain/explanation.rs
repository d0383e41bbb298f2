//! [`Explanation`]: where one task instance stands and why, as data — the
//! CLI renders it as text or prints it as JSON.

use schemars::JsonSchema;
use serde::Serialize;

use crate::log::State;
use crate::profile::Manager;
use crate::resources::Shortfall;

/// One task instance, explained.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Explanation {
    /// The task's name.
    pub task: String,
    /// The instance's `index`.
    pub index: i64,
    /// `name[index]`, or `name` for a plain task.
    pub label: String,
    /// Where it stands.
    pub state: State,
    /// Why it is there, with the details.
    pub reason: Reason,
    /// The attempt that ended before this wait, when the instance waits to
    /// run again (it failed with retries left, or lost its worker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier: Option<Earlier>,
    /// What the allocation queue reported about this task (`unschedulable`
    /// lines of `allocs.json` that name it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue_notes: Vec<String>,
}

/// Why an instance is where it is. The first five kinds are for instances
/// that have not finished, in the order they are looked for.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// It waits for upstream instances that have not succeeded.
    Dependencies {
        /// One entry per upstream task with instances left, in graph order.
        upstream: Vec<UpstreamWait>,
        /// Whether an upstream instance failed or was cancelled for good,
        /// so this one will be cancelled.
        doomed: bool,
    },
    /// No current worker could ever run it: none fits any of its resource
    /// variants, or fewer fit than the nodes it needs.
    Resources {
        /// Workers it needs at once.
        nodes: u32,
        /// Workers one of its variants fits.
        fitting: usize,
        /// Workers connected.
        workers: usize,
        /// What each variant lacks on the largest worker (empty when the
        /// problem is the number of nodes).
        variants: Vec<Shortfall>,
    },
    /// Its time request does not fit in what any worker that fits has
    /// left, or (with no workers) in what a worker of the queue gets.
    TimeRequest {
        /// The time request, in seconds.
        seconds: u64,
        /// The longest time a fitting worker has left, in seconds.
        longest_left_s: Option<u64>,
        /// How long a worker of the queue has (its `time_limit` less the
        /// margin for starting and stopping), in seconds.
        queue_worker_s: Option<u64>,
    },
    /// No worker is connected.
    NoWorkers {
        /// The allocation queue, if the run has one.
        queue: Option<QueueWait>,
    },
    /// It can run and waits for a free slot.
    Ready {
        /// Tasks running in the run.
        running: u64,
        /// Workers connected.
        workers: usize,
        /// Workers running at least one task.
        busy: usize,
        /// Idle workers it needs at once (more than one for multi-node tasks).
        nodes: u32,
    },
    /// An attempt failed and it waits, holding no worker, for its
    /// `retry_delay` to pass before it runs again.
    Retrying {
        /// The coming attempt (0 for the first).
        attempt: u32,
        /// How many attempts it may make in all (`retries` + 1).
        attempts: u32,
        /// When it may start, in µs since the Unix epoch.
        until_us: u64,
    },
    /// It is running.
    Running {
        /// The attempt (0 for the first).
        attempt: u32,
        /// Where and since when.
        ran: Ran,
    },
    /// It succeeded.
    Succeeded {
        /// The attempt that succeeded (0 for the first).
        attempt: u32,
        /// Where, when and how long.
        ran: Ran,
    },
    /// An earlier run had done the same work, so it was skipped.
    Cached {
        /// Where it was checked, and when.
        ran: Ran,
    },
    /// It failed for good.
    Failed {
        /// The last attempt (0 for the first).
        attempt: u32,
        /// How often it may be rerun after a failure.
        retries: u32,
        /// The exit code, if it exited.
        exit_code: Option<i32>,
        /// The signal that killed it, if one did.
        signal: Option<i32>,
        /// The reason recorded (`exit code 1`, `timed out after 10s`, …).
        message: Option<String>,
        /// Where, when and how long.
        ran: Ran,
    },
    /// It was cancelled.
    Cancelled {
        /// Why (`score[3] failed`, `interrupted`, …).
        message: Option<String>,
        /// When.
        ended_us: Option<u64>,
    },
    /// It was skipped without running.
    Skipped {
        /// Why: the condition that was false, or the skipped instance it waits on.
        message: Option<String>,
        /// When.
        ended_us: Option<u64>,
    },
    /// Its worker was lost and the run ended before it ran again.
    Lost {
        /// The attempt that was lost.
        attempt: u32,
        /// Where and since when it ran.
        ran: Ran,
    },
    /// The run is no longer running (it ended, or its process died) and
    /// this instance never finished.
    NotRun {
        /// Where it was running when the run stopped, if it was.
        running: Option<Ran>,
    },
}

/// A [`Reason`]'s kind without its details; serialized as its `kind` in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasonKind {
    /// [`Reason::Dependencies`].
    Dependencies,
    /// [`Reason::Resources`].
    Resources,
    /// [`Reason::TimeRequest`].
    TimeRequest,
    /// [`Reason::NoWorkers`].
    NoWorkers,
    /// [`Reason::Ready`].
    Ready,
    /// [`Reason::Retrying`].
    Retrying,
    /// [`Reason::Running`].
    Running,
    /// [`Reason::Succeeded`].
    Succeeded,
    /// [`Reason::Cached`].
    Cached,
    /// [`Reason::Failed`].
    Failed,
    /// [`Reason::Cancelled`].
    Cancelled,
    /// [`Reason::Lost`].
    Lost,
    /// [`Reason::NotRun`].
    NotRun,
    /// [`Reason::Skipped`].
    Skipped,
}

impl Reason {
    /// The reason's kind.
    pub fn kind(&self) -> ReasonKind {
        match self {
            Reason::Dependencies { .. } => ReasonKind::Dependencies,
            Reason::Resources { .. } => ReasonKind::Resources,
            Reason::TimeRequest { .. } => ReasonKind::TimeRequest,
            Reason::NoWorkers { .. } => ReasonKind::NoWorkers,
            Reason::Ready { .. } => ReasonKind::Ready,
            Reason::Retrying { .. } => ReasonKind::Retrying,
            Reason::Running { .. } => ReasonKind::Running,
            Reason::Succeeded { .. } => ReasonKind::Succeeded,
            Reason::Cached { .. } => ReasonKind::Cached,
            Reason::Failed { .. } => ReasonKind::Failed,
            Reason::Cancelled { .. } => ReasonKind::Cancelled,
            Reason::Lost { .. } => ReasonKind::Lost,
            Reason::NotRun { .. } => ReasonKind::NotRun,
            Reason::Skipped { .. } => ReasonKind::Skipped,
        }
    }

    /// Where the instance stands: waiting for the first six kinds, the
    /// state of the same name otherwise.
    pub fn state(&self) -> State {
        match self.kind() {
            ReasonKind::Dependencies
            | ReasonKind::Resources
            | ReasonKind::TimeRequest
            | ReasonKind::NoWorkers
            | ReasonKind::Ready
            | ReasonKind::Retrying => State::Waiting,
            ReasonKind::Running => State::Running,
            ReasonKind::Succeeded => State::Succeeded,
            ReasonKind::Cached => State::Cached,
            ReasonKind::Failed => State::Failed,
            ReasonKind::Cancelled => State::Cancelled,
            ReasonKind::Lost => State::Lost,
            ReasonKind::NotRun => State::NotRun,
            ReasonKind::Skipped => State::Skipped,
        }
    }
}

/// Where and when an attempt ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Ran {
    /// The worker, if known.
    pub worker: Option<WorkerRef>,
    /// When it started (µs since the Unix epoch).
    pub started_us: Option<u64>,
    /// How long it waited between becoming ready and starting, µs; `None`
    /// in runs recorded before flow kept when instances became ready.
    pub queue_wait_us: Option<u64>,
    /// When it ended.
    pub ended_us: Option<u64>,
    /// How long it ran, if it started and ended.
    pub duration_us: Option<u64>,
}

/// A worker of the run, as every `--json` names one: its id, the host it
/// runs on (this machine's name for the embedded worker; `null` when no
/// run file says) and the cluster job it runs in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WorkerRef {
    /// Its id in the run.
    pub id: u32,
    /// Its host name.
    pub host: Option<String>,
    /// The cluster job (Slurm or PBS job id) it runs in, if any.
    pub allocation: Option<String>,
}

/// The upstream instances of one task that an instance still waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UpstreamWait {
    /// The upstream task.
    pub task: String,
    /// Its instances this one depends on.
    pub total: u64,
    /// How many of those have not succeeded.
    pub not_done: u64,
    /// How many of those failed or were cancelled for good.
    pub failed: u64,
    /// A few of them: failed ones first, then running, then waiting ones.
    pub examples: Vec<UpstreamInstance>,
}

/// One upstream instance that has not succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UpstreamInstance {
    /// `name[index]`.
    pub label: String,
    /// Where it stands.
    pub state: State,
    /// The worker it runs on (or ran on).
    pub worker: Option<u32>,
    /// The exit code of a failed attempt.
    pub exit_code: Option<i32>,
    /// The signal that killed a failed attempt.
    pub signal: Option<i32>,
    /// Why it failed or was cancelled.
    pub message: Option<String>,
}

/// What the allocation queue is doing, for an instance without workers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct QueueWait {
    /// The resource manager: `slurm` or `pbs`.
    pub manager: Manager,
    /// Why the queue stopped submitting, if it did.
    pub paused: Option<String>,
    /// Allocations waiting in the manager's queue, oldest first.
    pub queued: Vec<QueuedAllocation>,
    /// Allocations that started but whose workers have not connected.
    pub starting: usize,
    /// Allocations submitted in all.
    pub submitted: usize,
    /// Why the latest failed allocation failed, if one did.
    pub last_failure: Option<String>,
}

/// An allocation waiting in the manager's queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct QueuedAllocation {
    /// The manager's job id.
    pub job_id: String,
    /// When it was submitted (µs since the Unix epoch).
    pub submitted_us: u64,
}

/// The attempt before a wait to run again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Earlier {
    /// The attempt (0 for the first).
    pub attempt: u32,
    /// How it ended (`state` in JSON, the word every `--json` of flow uses).
    #[serde(rename = "state")]
    pub status: State,
    /// The exit code, if it exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
    /// The reason recorded.
    pub message: Option<String>,
    /// The worker it ran on.
    pub worker: Option<u32>,
    /// Reruns after a failure still allowed (none for a lost attempt).
    pub retries_left: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Amount;

    #[test]
    fn kinds_and_states() {
        let ready = Reason::Ready { running: 1, workers: 1, busy: 1, nodes: 1 };
        assert_eq!((ready.kind(), ready.state()), (ReasonKind::Ready, State::Waiting));
        let not_run = Reason::NotRun { running: None };
        assert_eq!((not_run.kind(), not_run.state()), (ReasonKind::NotRun, State::NotRun));
        let names = serde_json::to_value([ReasonKind::TimeRequest, ReasonKind::NotRun]).unwrap();
        assert_eq!(names, serde_json::json!(["time_request", "not_run"]));
        let names = serde_json::to_value((State::NotRun, State::Retrying)).unwrap();
        assert_eq!(names, serde_json::json!(["not_run", "retrying"]));
        let json =
            serde_json::to_value(&Shortfall::Cpus { needs: Amount::whole(4), largest: Amount::whole(2) }).unwrap();
        assert_eq!(json, serde_json::json!({ "resource": "cpus", "needs": 4.0, "largest": 2.0 }));
    }
}
