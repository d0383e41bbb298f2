//! The driver: the one place where tokio meets the scheduler core. It owns
//! the run loop — drain worker completions, feed them to the core, refill
//! free slots, dispatch rendered jobs — and hands every bookkeeping record
//! to the journal thread and every event to the caller without waiting.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::Instant;

use tokio::sync::mpsc;

use super::core::{Allocation, CancelReason, Core, Out, TaskResult, TaskState, WorkerId};
use super::event::{Event, Summary};
use super::job::JobFactory;
use super::local::{LocalWorker, now_us};
use super::options::RunOptions;
use super::resume::Previous;
use super::worker::{Outcome, Status, WorkerEvent};
use crate::diag::Source;
use crate::ir::{Graph, TaskId};
use crate::log::{JournalEvent, JournalRecord};

/// What the core asked for during one step.
#[derive(Default)]
struct Collect {
    starts: Vec<(TaskId, u32, WorkerId, Allocation)>,
    states: Vec<(TaskId, TaskState)>,
}

impl Out for Collect {
    fn start(&mut self, task: TaskId, attempt: u32, worker: WorkerId, alloc: &Allocation) {
        self.starts.push((task, attempt, worker, alloc.clone()));
    }

    fn state(&mut self, task: TaskId, state: TaskState) {
        self.states.push((task, state));
    }
}

/// The run loop's state.
pub(super) struct Driver {
    pub core: Core,
    pub factory: JobFactory,
    pub worker: LocalWorker,
    pub worker_events: mpsc::UnboundedReceiver<WorkerEvent>,
    pub journal: std_mpsc::Sender<Vec<JournalRecord>>,
    pub events: std_mpsc::Sender<Vec<Event>>,
    /// Records and events of the current step, sent together.
    pub journal_batch: Vec<JournalRecord>,
    pub event_batch: Vec<Event>,
    pub previous: Previous,
    pub options: RunOptions,
    pub source: Arc<Source>,
    pub summary: Summary,
    /// Attempt each running task is on.
    pub running: HashMap<TaskId, u32>,
    /// Tasks killed by Ctrl-C: they count as cancelled, not failed.
    pub stopped: std::collections::HashSet<TaskId>,
}

impl Driver {
    fn graph(&self) -> &Arc<Graph> {
        self.factory.graph()
    }

    /// Runs until every task has ended or the run is stopped.
    pub async fn run(mut self) -> Summary {
        let started = Instant::now();
        let mut out = Collect::default();
        self.step(&mut out);
        let mut interrupt = std::pin::pin!(interrupted());
        while !self.core.is_finished() {
            tokio::select! {
                event = self.worker_events.recv() => {
                    let Some(event) = event else { break };
                    self.finished(event, &mut out);
                    // Drain everything that is ready before refilling slots.
                    while let Ok(event) = self.worker_events.try_recv() {
                        self.finished(event, &mut out);
                    }
                }
                () = &mut interrupt, if !self.summary.interrupted => {
                    self.summary.interrupted = true;
                    self.core.stop(&mut out);
                    self.worker.stop_all();
                }
            }
            self.step(&mut out);
        }
        self.summary.seconds = started.elapsed().as_secs_f64();
        self.summary
    }

    /// Fills free slots and acts on the result, until nothing changes: with
    /// `--dry-exec` tasks end as they start, freeing slots for the next ones.
    fn step(&mut self, out: &mut Collect) {
        loop {
            self.core.schedule(Instant::now(), out);
            if out.starts.is_empty() && out.states.is_empty() {
                break;
            }
            self.apply(out);
            if self.event_batch.len() >= 4096 {
                self.flush();
            }
        }
        self.flush();
    }

    /// Acts on what the core asked for: start jobs, record state changes.
    fn apply(&mut self, out: &mut Collect) {
        while !out.starts.is_empty() || !out.states.is_empty() {
            for (task, state) in std::mem::take(&mut out.states) {
                self.state(task, state);
            }
            for (task, attempt, _worker, alloc) in std::mem::take(&mut out.starts) {
                self.start(task, attempt, &alloc, out);
            }
        }
    }

    fn start(&mut self, task: TaskId, attempt: u32, alloc: &Allocation, out: &mut Collect) {
        let job = match self.factory.job(task, attempt, alloc) {
            Ok(job) => job,
            Err(reason) => {
                let outcome = Outcome::instant(Status::failed(None, None, reason));
                self.finished(WorkerEvent::Finished { task, attempt, outcome }, out);
                return;
            }
        };
        self.running.insert(task, attempt);
        self.journal(task, attempt, JournalEvent::Started { worker: 0 });
        self.event_batch.push(Event::TaskStarted { task, label: job.label.clone(), attempt });
        let previous = self.previous.fingerprint(task, &job.label);
        if self.options.dry_exec {
            let outcome = Outcome::instant(Status::Succeeded);
            self.finished(WorkerEvent::Finished { task, attempt, outcome }, out);
        } else {
            self.worker.start(job, previous);
        }
    }

    fn finished(&mut self, event: WorkerEvent, out: &mut Collect) {
        let WorkerEvent::Finished { task, attempt, outcome } = event;
        self.running.remove(&task);
        let fingerprint = outcome.fingerprint.unwrap_or_default();
        let (journal, result) = match &outcome.status {
            Status::Succeeded => {
                self.summary.succeeded += 1;
                (JournalEvent::Succeeded { fingerprint }, TaskResult::Succeeded)
            }
            Status::Cached => {
                self.summary.cached += 1;
                (JournalEvent::Cached { fingerprint }, TaskResult::Succeeded)
            }
            Status::Failed { exit_code, signal, reason } => (
                JournalEvent::Failed { exit_code: *exit_code, signal: *signal, reason: reason.clone() },
                TaskResult::Failed,
            ),
            Status::Stopped => {
                self.stopped.insert(task);
                self.summary.cancelled += 1;
                (JournalEvent::Cancelled { reason: "interrupted".to_owned() }, TaskResult::Failed)
            }
        };
        self.journal(task, attempt, journal);
        let failed = matches!(outcome.status, Status::Failed { .. });
        self.core.on_finished(task, result, out);
        let retrying = failed && out.states.iter().any(|(t, s)| *t == task && matches!(s, TaskState::Retrying { .. }));
        let group = self.graph().group(task.group);
        let location = self.source_location(group.span.start);
        self.event_batch.push(Event::TaskFinished {
            task,
            label: self.factory.label(task),
            attempt,
            status: outcome.status,
            retrying,
            duration: outcome.duration,
            stderr_tail: if failed { outcome.stderr_tail } else { String::new() },
            location,
        });
    }

    fn state(&mut self, task: TaskId, state: TaskState) {
        match state {
            TaskState::Failed if self.stopped.contains(&task) => {}
            TaskState::Failed => self.summary.failed += 1,
            TaskState::Cancelled(reason) => {
                self.summary.cancelled += 1;
                let reason = match reason {
                    CancelReason::DependencyFailed(dep) => format!("{} failed", self.factory.label(dep)),
                    CancelReason::MaxFails => "--max-fails reached".to_owned(),
                    CancelReason::Stopped => "interrupted".to_owned(),
                    CancelReason::Unschedulable => "no worker can satisfy its resources".to_owned(),
                };
                self.journal(task, 0, JournalEvent::Cancelled { reason: reason.clone() });
                self.event_batch.push(Event::TaskCancelled { task, label: self.factory.label(task), reason });
            }
            TaskState::Succeeded | TaskState::Retrying { .. } => {}
        }
    }

    fn journal(&mut self, task: TaskId, attempt: u32, event: JournalEvent) {
        self.journal_batch.push(JournalRecord { time_us: now_us(), task, attempt, event });
    }

    /// Hands this step's records and events to their threads (one wake-up each).
    fn flush(&mut self) {
        if !self.journal_batch.is_empty() {
            let _ = self.journal.send(std::mem::take(&mut self.journal_batch));
        }
        if !self.event_batch.is_empty() {
            let _ = self.events.send(std::mem::take(&mut self.event_batch));
        }
    }

    fn source_location(&self, offset: usize) -> String {
        let (line, col) = self.source.line_col(offset);
        format!("{}:{line}:{col}", self.source.name)
    }
}

/// Resolves on Ctrl-C (SIGINT), SIGTERM (a CI job cancelled, `kill`) or
/// SIGHUP (the terminal closed): each stops the run the same way.
async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup())) else {
        let _ = tokio::signal::ctrl_c().await;
        return;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
}
