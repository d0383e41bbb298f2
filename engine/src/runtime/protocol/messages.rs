//! The messages between the coordinator and a remote worker (sent over an
//! encrypted [`crate::net`] channel).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::job::Job;
use super::outcome::Outcome;
use crate::ir::TaskId;
use crate::log::OutputRecord;
use crate::resources::WorkerShape;

/// How often a worker says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(2);
/// Silence after which the coordinator considers a worker lost, and after
/// which a worker that has not heard its coordinator stops its tasks.
pub const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the tasks of a worker lost without a word wait, after it is
/// declared lost, before they may run elsewhere: time for the worker (or
/// its guard) to have stopped them — the heartbeats' interval, the guard's
/// grace between SIGTERM and SIGKILL, and a second to spare.
pub const FENCE_MARGIN: Duration = Duration::from_secs(5);
/// How long a worker with tasks in line holds a result back so that the
/// results of that moment travel together: the coordinator then wakes once
/// for several tasks, not once for each. A worker with nothing in line
/// sends each result at once, since the coordinator's answer is what it
/// waits for.
pub const REPORT_HOLD: Duration = Duration::from_millis(4);

/// What a worker offers when it joins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Offer {
    /// The worker's host name (for `FLOW_HOSTS` and `flow workers`).
    pub hostname: String,
    /// What it has. Postcard writes a struct's fields in order, so the
    /// message is the one that listed CPUs, GPUs, memory and custom
    /// resources after the host name.
    pub shape: WorkerShape,
    /// How long the worker will live from now (`--time-limit`, or its allocation's).
    pub time_limit: Option<Duration>,
    /// The cluster job the worker runs in (`SLURM_JOB_ID`, `PBS_JOBID`), if any.
    pub allocation: Option<String>,
    /// A zero-execution worker (`flow worker --dry-exec`): it completes each
    /// job at once without starting a process, so it may join only a
    /// `--dry-exec` run, and a `--dry-exec` run takes only such workers.
    pub dry_exec: bool,
    /// The tasks the worker still carries from a coordinator it lost (empty
    /// when it first joins): a resumed run adopts those it held for them,
    /// and has the worker forget the others. Added last, so an older
    /// worker's hello does not decode here, nor this one's there: workers
    /// and coordinator must be the same version.
    pub carried: Vec<CarriedTask>,
}

/// A task a worker kept running (or finished and did not get to report)
/// after its connection to the coordinator dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedTask {
    /// Which instance, in the run that started it.
    pub task: TaskId,
    /// Which attempt.
    pub attempt: u32,
    /// Its `name[index]`, to check the instance is the same one in the resumed run.
    pub label: String,
    /// Whether it ended: its report follows the hello.
    pub finished: bool,
    /// The CPU ids it was given, which it may be pinned to: the run that
    /// adopts it takes these. Postcard writes fields in order: these two
    /// come last, after what the first carrying workers sent.
    pub cpus: Vec<u32>,
    /// The GPU ids it was given.
    pub gpus: Vec<u32>,
}

/// Coordinator → worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToWorker {
    /// Run a job (whether it is unchanged was decided before it was sent).
    Start {
        /// The rendered job.
        job: Box<Job>,
        /// Start it only when this task, running here on the same resources, ends.
        after: Option<TaskId>,
    },
    /// Stop every running job (the run was interrupted).
    StopAll,
    /// The run is over: stop and exit.
    Shutdown,
    /// The worker may not join this run, for this reason (said instead of
    /// any job; the connection closes after it).
    Refuse(String),
    /// The first answer to a hello that carried tasks: the run adopted
    /// them, except these, which the worker stops (if they run) and
    /// reports nothing of — the run did not hold them for it.
    Forget(Vec<TaskId>),
    /// Said just before [`ToWorker::Forget`]: how much of the output of
    /// the tasks it adopted the run already has (the killed run's log held
    /// it); the worker sends only what follows. Added last, so the other
    /// messages keep their numbers.
    Stored(Vec<StoredOutput>),
    /// Still there: a worker that hears nothing from its coordinator for
    /// [`HEARTBEAT_TIMEOUT`] stops its tasks (they may run elsewhere soon).
    Heartbeat,
}

/// How much of an adopted task's output a resumed run already has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredOutput {
    /// Which instance.
    pub task: TaskId,
    /// Which attempt.
    pub attempt: u32,
    /// Bytes of its stdout, from the start.
    pub stdout: u64,
    /// Bytes of its stderr, from the start.
    pub stderr: u64,
}

/// Worker → coordinator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToCoordinator {
    /// The first message: what the worker offers.
    Hello(Offer),
    /// A job ended.
    Finished {
        /// Which instance.
        task: TaskId,
        /// Which attempt.
        attempt: u32,
        /// How it ended.
        outcome: Outcome,
    },
    /// A chunk of a job's output.
    Output(OutputRecord),
    /// Still alive.
    Heartbeat,
    /// The worker is leaving on its own: the jobs it still runs are being
    /// killed and must run again elsewhere (their reports that follow are void).
    Leaving {
        /// Why it leaves.
        reason: String,
        /// Whether it planned to (idle, time limit) rather than being killed (a signal).
        planned: bool,
    },
}
