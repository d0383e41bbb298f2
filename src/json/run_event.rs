//! [`RunEvent`]: a `flow run --json` line, an engine [`Event`] told in the
//! shared vocabulary. The engine's own serialization of its types serves
//! the remote-worker protocol and the run files; this view is the output's.

use flow_engine::ir::{Graph, GroupId, TaskId};
use flow_engine::runtime::Status;
use flow_engine::runtime::{Event, Summary};
use serde::Serialize;

use super::{Counts, RunState, State, TaskRef, WorkerRef, micros};

/// One event of `flow run --json`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum RunEvent<'a> {
    /// An event this view retells.
    Told(Told<'a>),
    /// An event whose own fields already speak the vocabulary.
    As(&'a Event),
}

/// The events about instances and the run's end.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Told<'a> {
    /// An attempt started.
    TaskStarted {
        /// Which instance.
        #[serde(flatten)]
        task: TaskRef,
        /// The attempt, 0 first.
        attempt: u32,
    },
    /// An attempt ended.
    TaskFinished {
        /// Which instance.
        #[serde(flatten)]
        task: TaskRef,
        /// The attempt, 0 first.
        attempt: u32,
        /// How it ended: `succeeded`, `cached`, `failed` or `cancelled`.
        state: State,
        /// A failed attempt's exit code, if it exited.
        exit_code: Option<i32>,
        /// The signal that killed a failed attempt, if one did.
        signal: Option<i32>,
        /// Why it failed.
        reason: Option<&'a str>,
        /// Whether it runs again.
        retrying: bool,
        /// How long it ran, in µs.
        duration_us: u64,
        /// The end of its stderr (failures only).
        stderr_tail: &'a str,
        /// `file:line:column` of the task in the workflow.
        location: &'a str,
    },
    /// An instance will not run.
    TaskCancelled {
        /// Which instance.
        #[serde(flatten)]
        task: TaskRef,
        /// Why.
        reason: &'a str,
    },
    /// A task known only at run time got its instances.
    Expanded {
        /// The task's name.
        task: &'a str,
        /// The file its instances come from.
        file: &'a str,
        /// How many instances it has.
        count: u64,
    },
    /// A part of a nested task became known: the file one of its parent's
    /// instances wrote was read.
    PartExpanded {
        /// The part: `label` is `name[index.?]`, `index` the parent instance's.
        #[serde(flatten)]
        task: TaskRef,
        /// The file its instances come from.
        file: &'a str,
        /// How many instances it has.
        count: u64,
    },
    /// A remote worker joined.
    WorkerJoined {
        /// Which worker.
        worker: WorkerRef,
        /// The address it connected from.
        peer: &'a str,
        /// How many CPUs it offers.
        cpus: usize,
        /// How many GPUs it offers.
        gpus: usize,
    },
    /// A worker left or fell silent; its running tasks run again elsewhere.
    WorkerLost {
        /// Which worker.
        worker: WorkerRef,
        /// Why it is considered gone.
        reason: &'a str,
        /// How many of its tasks were running.
        tasks: usize,
    },
    /// The run ended.
    RunFinished {
        /// The run's id.
        run_id: &'a str,
        /// How it ended.
        state: RunState,
        /// Its instances by state.
        counts: Counts,
        /// A `--dry-exec` run: nothing was executed.
        dry_exec: bool,
        /// Its wall time, in µs.
        duration_us: u64,
        /// Run files that could not be written.
        io_errors: &'a [String],
    },
}

impl<'a> RunEvent<'a> {
    /// `event` of a run of `graph`.
    pub fn new(event: &'a Event, graph: &Graph) -> Self {
        RunEvent::Told(match event {
            Event::TaskStarted { task, label, attempt } => {
                Told::TaskStarted { task: task_ref(graph, *task, label), attempt: *attempt }
            }
            Event::TaskFinished { task, label, attempt, status, retrying, duration, stderr_tail, location } => {
                let (exit_code, signal, reason) = match status {
                    Status::Failed { exit_code, signal, reason } => (*exit_code, *signal, Some(reason.as_str())),
                    _ => (None, None, None),
                };
                Told::TaskFinished {
                    task: task_ref(graph, *task, label),
                    attempt: *attempt,
                    state: finished_state(status),
                    exit_code,
                    signal,
                    reason,
                    retrying: *retrying,
                    duration_us: duration.as_micros() as u64,
                    stderr_tail,
                    location,
                }
            }
            Event::TaskCancelled { task, label, reason } => {
                Told::TaskCancelled { task: task_ref(graph, *task, label), reason }
            }
            Event::Expanded { name, file, count, .. } => Told::Expanded { task: name, file, count: *count },
            Event::PartExpanded { group, label, file, count } => {
                Told::PartExpanded { task: TaskRef::labelled(name(graph, *group), label.clone()), file, count: *count }
            }
            Event::WorkerJoined { worker, hostname, allocation, peer, cpus, gpus } => {
                Told::WorkerJoined { worker: worker_ref(*worker, hostname, allocation), peer, cpus: *cpus, gpus: *gpus }
            }
            Event::WorkerLost { worker, hostname, allocation, reason, tasks } => {
                Told::WorkerLost { worker: worker_ref(*worker, hostname, allocation), reason, tasks: *tasks }
            }
            Event::RunFinished { summary } => finished(summary),
            other => return RunEvent::As(other),
        })
    }
}

/// Instance `task`, labelled by the runtime: the graph given when the run
/// started does not know the instances of nested tasks.
fn task_ref(graph: &Graph, task: TaskId, label: &str) -> TaskRef {
    TaskRef::labelled(name(graph, task.group), label.to_owned())
}

fn worker_ref(id: u32, host: &str, allocation: &Option<String>) -> WorkerRef {
    WorkerRef { id, host: Some(host.to_owned()), allocation: allocation.clone() }
}

fn name(graph: &Graph, group: GroupId) -> &str {
    graph.groups.get(group.index()).map_or("?", |g| g.name.as_str())
}

fn finished(summary: &Summary) -> Told<'_> {
    Told::RunFinished {
        run_id: &summary.run_id,
        state: RunState::of_summary(summary),
        counts: Counts::of_summary(summary),
        dry_exec: summary.dry_exec,
        duration_us: micros(summary.seconds),
        io_errors: &summary.io_errors,
    }
}

/// The state an attempt that ended with `status` is in: one killed because
/// the run stopped is `cancelled`, as the journal records it.
fn finished_state(status: &Status) -> State {
    match status {
        Status::Succeeded => State::Succeeded,
        Status::Cached => State::Cached,
        Status::Failed { .. } => State::Failed,
        Status::Stopped => State::Cancelled,
    }
}
