//! [`RunEvent`]: a `flow run --json` line, an engine [`Event`] told in the
//! shared vocabulary. The engine's own serialization of its types serves
//! the remote-worker protocol and the run files; this view is the output's.

use flow_engine::ir::{Graph, GroupId, TaskId};
use flow_engine::runtime::Status;
use flow_engine::runtime::{Event, MoveReason, Summary};
use std::path::Path;

use flow_engine::rundir::AllocState;
use schemars::JsonSchema;
use serde::Serialize;

use super::{AttemptUsage, Counts, RunState, State, TaskRef, WorkerRef, micros};

/// One event of `flow run --json`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent<'a> {
    /// The run began.
    RunStarted {
        /// The run's id.
        run_id: &'a str,
        /// Its directory, absolute.
        run_dir: &'a Path,
        /// Instances known at the start.
        total: u64,
        /// Tasks of the file dropped from the run by a false `when`, or
        /// because they need a dropped task.
        #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
        dropped: &'a [String],
    },
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
        /// How it ended: `succeeded`, `cached`, `failed`, `cancelled`, or
        /// `skipped` (it did not run: its `when` was false, or it waits on a
        /// skipped instance; `reason` says which).
        state: State,
        /// A failed attempt's exit code, if it exited.
        exit_code: Option<i32>,
        /// The signal that killed a failed attempt, if one did.
        signal: Option<i32>,
        /// Why it failed.
        reason: Option<&'a str>,
        /// Whether it runs again.
        retrying: bool,
        /// When it runs again, if it waits (`retry_delay`), in µs since the Unix epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_at_us: Option<u64>,
        /// How long it ran, in µs.
        duration_us: u64,
        /// The end of its stderr (failures only).
        stderr_tail: &'a str,
        /// `file:line:column` of the task in the workflow.
        location: &'a str,
        /// Where it ran and what its process used; `null` if no process
        /// ran (cached, cancelled, `--dry-exec`) or its worker was lost.
        metrics: Option<Box<AttemptUsage<'a>>>,
    },
    /// An instance will not run.
    TaskCancelled {
        /// Which instance.
        #[serde(flatten)]
        task: TaskRef,
        /// Why.
        reason: &'a str,
    },
    /// The instances of a task that never started were cancelled together:
    /// the run was stopped (Ctrl-C, `--max-fails`). One event for all of
    /// them, where each instance that ran has its own `task_cancelled`.
    RestCancelled {
        /// The task's name.
        task: &'a str,
        /// How many instances.
        count: u64,
        /// Why: `interrupted`, `--max-fails reached`.
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
    /// A connection was refused (a wrong or missing secret, or garbage).
    WorkerRefused {
        /// Where it came from.
        peer: &'a str,
        /// What went wrong.
        reason: &'a str,
        /// Connections from the same address refused and not reported one by one.
        more: u64,
    },
    /// Connections refused from one address and not reported yet.
    RefusedQuietly {
        /// The address.
        address: &'a str,
        /// How many.
        count: u64,
    },
    /// An allocation of the run's queue changed state.
    Allocation {
        /// Its number in this run.
        id: u32,
        /// The manager's job id (empty if submission failed).
        job_id: &'a str,
        /// Its new state.
        state: AllocState,
        /// Why it failed or ended, if known.
        reason: Option<&'a str>,
    },
    /// The queue stopped submitting after repeated failures.
    QueuePaused {
        /// Why.
        reason: &'a str,
    },
    /// A task can never run on the run's queue.
    QueueUnschedulable {
        /// The task's name.
        task: &'a str,
        /// Why.
        reason: &'a str,
    },
    /// Recorded outputs of instances that no longer exist, or that did
    /// not succeed in this run, were moved aside.
    OutputsMoved {
        /// The task.
        task: &'a str,
        /// Why: `vanished` (no instance declares them now), `skipped`,
        /// `failed` or `cancelled` (their instance, in this run).
        reason: MoveReason,
        /// The instances (vanished ones by their labels then).
        labels: &'a [String],
        /// The files, relative to the workflow directory.
        files: &'a [String],
        /// Those of `files` changed since flow wrote them: moved all the same.
        changed: &'a [String],
        /// Where they are now, relative to the workflow directory.
        dir: &'a str,
        /// Under `--dry-exec`: they would be moved, and were left.
        dry: bool,
    },
    /// Something worth knowing that does not stop the run.
    Warning {
        /// What happened.
        message: &'a str,
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
        match event {
            Event::TaskStarted { task, label, attempt } => {
                RunEvent::TaskStarted { task: task_ref(graph, *task, label), attempt: *attempt }
            }
            Event::TaskFinished {
                task,
                label,
                attempt,
                status,
                retrying,
                retry_at_us,
                duration,
                stderr_tail,
                location,
                metrics,
            } => {
                let (exit_code, signal, reason) = match status {
                    Status::Failed { exit_code, signal, reason } => (*exit_code, *signal, Some(reason.as_str())),
                    _ => (None, None, None),
                };
                RunEvent::TaskFinished {
                    task: task_ref(graph, *task, label),
                    attempt: *attempt,
                    state: finished_state(status),
                    exit_code,
                    signal,
                    reason,
                    retrying: *retrying,
                    retry_at_us: *retry_at_us,
                    duration_us: duration.as_micros() as u64,
                    stderr_tail,
                    location,
                    metrics: metrics.as_deref().map(|m| Box::new(AttemptUsage::of(m))),
                }
            }
            Event::TaskCancelled { task, label, reason } => {
                RunEvent::TaskCancelled { task: task_ref(graph, *task, label), reason }
            }
            Event::RestCancelled { name, count, reason, .. } => {
                RunEvent::RestCancelled { task: name, count: *count, reason }
            }
            Event::TaskSkipped { task, label, reason, location } => RunEvent::TaskFinished {
                task: task_ref(graph, *task, label),
                attempt: 0,
                state: State::Skipped,
                exit_code: None,
                signal: None,
                reason: Some(reason),
                retrying: false,
                retry_at_us: None,
                duration_us: 0,
                stderr_tail: "",
                location,
                metrics: None,
            },
            Event::Expanded { name, file, count, .. } => RunEvent::Expanded { task: name, file, count: *count },
            Event::PartExpanded { group, label, file, count } => RunEvent::PartExpanded {
                task: TaskRef::labelled(name(graph, *group), label.clone()),
                file,
                count: *count,
            },
            Event::WorkerJoined { worker, hostname, allocation, peer, cpus, gpus } => RunEvent::WorkerJoined {
                worker: worker_ref(*worker, hostname, allocation),
                peer,
                cpus: *cpus,
                gpus: *gpus,
            },
            Event::WorkerLost { worker, hostname, allocation, reason, tasks } => {
                RunEvent::WorkerLost { worker: worker_ref(*worker, hostname, allocation), reason, tasks: *tasks }
            }
            Event::RunFinished { summary } => finished(summary),
            Event::RunStarted { run_id, run_dir, total, dropped, .. } => {
                RunEvent::RunStarted { run_id, run_dir, total: *total, dropped }
            }
            Event::WorkerRefused { peer, reason, more } => RunEvent::WorkerRefused { peer, reason, more: *more },
            Event::RefusedQuietly { address, count } => RunEvent::RefusedQuietly { address, count: *count },
            Event::Allocation { id, job_id, state, reason } => {
                RunEvent::Allocation { id: *id, job_id, state: *state, reason: reason.as_deref() }
            }
            Event::QueuePaused { reason } => RunEvent::QueuePaused { reason },
            Event::QueueUnschedulable { task, reason } => RunEvent::QueueUnschedulable { task, reason },
            Event::OutputsMoved { task, reason, labels, files, changed, dir, dry } => {
                RunEvent::OutputsMoved { task, reason: *reason, labels, files, changed, dir, dry: *dry }
            }
            Event::Warning { message } => RunEvent::Warning { message },
        }
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

fn finished(summary: &Summary) -> RunEvent<'_> {
    RunEvent::RunFinished {
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
