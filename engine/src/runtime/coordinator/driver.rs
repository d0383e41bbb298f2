//! The driver: the one place where tokio meets the scheduler core. It owns
//! the run loop — drain worker completions, feed them to the core, refill
//! free slots, dispatch rendered jobs — and hands every bookkeeping record
//! to the journal thread and every event to the caller without waiting.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::Instant;

use tokio::sync::mpsc;

use tokio::sync::oneshot;

use super::alloc::queue::AllocQueue;
use super::job_factory::JobFactory;
use super::links::{Link, Links};
use super::resume::Previous;
use crate::diag::Source;
use crate::host::now_us;
use crate::ir::{Graph, GroupId, TaskId};
use crate::log::{JournalEvent, JournalRecord, LogHealth, Wrote};
use crate::resources::Deadline;
use crate::rundir::Summary;
use crate::runtime::core::{Allocation, CancelReason, Core, Out, TaskResult, TaskState, WorkerId};
use crate::runtime::event::Event;
use crate::runtime::options::RunOptions;
use crate::runtime::protocol::job::Job;
use crate::runtime::protocol::messages::{Offer, ToWorker};
use crate::runtime::protocol::worker::{Outcome, Status, WorkerEvent};

/// Instances of a group measured before it may count as short.
const SHORT_SAMPLE: u32 = 8;
/// The mean duration under which a group counts as short: a round trip to a
/// remote worker matters next to it, so its tasks are sent ahead.
const SHORT_TASK: std::time::Duration = std::time::Duration::from_millis(100);
/// How much work waits in line behind each running task of a short group
/// on a remote worker: enough to cover a round trip and the worker's
/// [`crate::runtime::protocol::messages::REPORT_HOLD`], little enough that a run's last tasks
/// still end together on all workers.
const LINE: std::time::Duration = std::time::Duration::from_millis(10);
/// The most tasks in line behind one (at least two always are).
const MAX_LINE: u8 = 8;

/// The longest events wait before going to the display.
const EVENT_DELAY: std::time::Duration = std::time::Duration::from_millis(20);

/// What the core asked for during one step.
#[derive(Default)]
pub(super) struct Collect {
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

/// What reaches the run loop from workers and the listener.
pub enum DriverEvent {
    /// A worker reported on a job.
    Worker {
        /// Which worker.
        worker: WorkerId,
        /// What it said.
        event: WorkerEvent,
    },
    /// A remote worker connected and introduced itself.
    Joined {
        /// What it offers.
        offer: Offer,
        /// Where to send it jobs.
        link: mpsc::UnboundedSender<ToWorker>,
        /// Its address.
        peer: String,
        /// Gets the id the worker was given.
        reply: oneshot::Sender<WorkerId>,
    },
    /// A remote worker disconnected or fell silent.
    Lost {
        /// Which worker.
        worker: WorkerId,
        /// Why.
        reason: String,
        /// Whether the worker planned to leave (idle, time limit) rather than being killed or vanishing.
        clean: bool,
    },
    /// The manager answered a submission: the job id, or its error.
    Submitted {
        /// The allocation's number.
        id: u32,
        /// The job id or the error.
        result: Result<String, String>,
    },
    /// The manager listed which of `ids` are still queued or running.
    Polled {
        /// The job ids asked about.
        ids: Vec<String>,
        /// Those still alive, or the manager's error.
        result: super::driver_queue::Alive,
    },
    /// An instance was compared with its last success before dispatch:
    /// its fingerprint if unchanged.
    Checked {
        /// Which instance.
        task: TaskId,
        /// What the cache had for it.
        found: super::cache_lookup::Lookup,
    },
    /// A peer failed the handshake (wrong or no secret) and was turned away.
    Refused {
        /// Its address.
        peer: String,
        /// What went wrong.
        reason: String,
    },
}

/// The run loop's state.
pub(super) struct Driver {
    pub core: Core,
    pub factory: JobFactory,
    pub links: Links,
    pub driver_events: mpsc::UnboundedReceiver<DriverEvent>,
    pub journal: std_mpsc::Sender<Vec<JournalRecord>>,
    /// Set when the journal thread stopped taking records (a write failed).
    pub journal_broken: bool,
    /// Whether the output log could write everything.
    pub log_health: Arc<LogHealth>,
    /// Workers that left before the run ended (`workers-left.json`).
    pub left_workers: Vec<crate::rundir::WorkerInfo>,
    /// Refused connections, to say so once a minute per address.
    pub refusals: super::refusals::Refusals,
    pub events: std_mpsc::Sender<Vec<Event>>,
    /// Records and events of the current step, sent together.
    pub journal_batch: Vec<JournalRecord>,
    pub event_batch: Vec<Event>,
    /// Nested groups already warned about a missing file under `--dry-exec`.
    pub dry_warned: std::collections::HashSet<crate::ir::GroupId>,
    pub previous: Arc<Previous>,
    /// Under `--dry-exec`, the instances of each group that "ran".
    pub dry_ran: HashMap<GroupId, std::collections::HashSet<u64>>,
    /// Earlier successes not yet known to still exist (their outputs are
    /// moved out of the way when they are known not to).
    pub stale: super::stale::StaleOutputs,
    /// Under `--dry-exec`, the outputs a real run would have moved aside:
    /// the cache compares as if they were gone.
    pub hidden: Arc<std::collections::HashSet<std::path::PathBuf>>,
    pub options: RunOptions,
    /// The run's directory.
    pub run_dir: crate::rundir::RunDir,
    pub source: Arc<Source>,
    pub summary: Summary,
    /// Attempt and worker of each running task.
    pub running: HashMap<TaskId, (u32, WorkerId)>,
    /// The variant and the CPU and GPU ids each running task was given,
    /// completed into its journaled metrics when it ends.
    pub placements: super::placements::Placements,
    /// When events were last sent.
    pub last_events: Instant,
    /// Tasks killed by Ctrl-C: they count as cancelled, not failed.
    pub stopped: std::collections::HashSet<TaskId>,
    /// The run's allocation queue, if it has one.
    pub queue: Option<AllocQueue>,
    /// Sends events to this loop (answers of the resource manager).
    pub self_tx: mpsc::UnboundedSender<DriverEvent>,
    /// Why groups were cancelled as unschedulable, when more is known than "no worker fits".
    pub unschedulable: HashMap<GroupId, String>,
    /// Tasks sent ahead to a remote worker, by the task they start after,
    /// with their label, to record their start when it comes.
    pub ahead: HashMap<TaskId, (TaskId, String)>,
    /// Successful runs and their total duration, per group, until it is known to be short.
    pub durations: HashMap<GroupId, (u32, std::time::Duration)>,
    /// The run log, for copying allocations' output into it as the run ends.
    pub log: Option<crate::runtime::agent::output_sink::OutputSink>,
    /// Instances being compared with their last success before dispatch.
    pub checks: super::driver_cache::Checks,
    /// Running tasks per worker as `workers.json` last said.
    pub workers_written: Vec<(u32, u64)>,
    /// The finished instances of final tasks: where the results are.
    pub results: super::results::Results,
}

impl Driver {
    pub(super) fn graph(&self) -> &Arc<Graph> {
        self.factory.graph()
    }

    /// Runs until every task has ended or the run is stopped.
    pub async fn run(mut self) -> Summary {
        let started = Instant::now();
        let mut out = Collect::default();
        let known: Vec<GroupId> =
            (0..self.graph().groups.len() as u32).map(GroupId).filter(|&g| !self.graph().is_deferred(g)).collect();
        self.settle_stale(&known, None);
        self.queue_start(&mut out);
        // The embedded worker is there from the start; remote ones update the file as they come and go.
        self.write_workers();
        self.step(&mut out);
        let mut interrupt = std::pin::pin!(super::signals::interrupted());
        let mut tick = tokio::time::interval(EVENT_DELAY);
        let mut queue_tick = tokio::time::interval(super::driver_queue::QUEUE_TICK);
        let mut workers_tick = tokio::time::interval(super::driver_workers::WORKERS_TICK);
        while !self.core.is_finished() {
            tokio::select! {
                event = self.driver_events.recv() => {
                    let Some(event) = event else { break };
                    self.handle(event, &mut out);
                    // Drain everything that is ready before refilling slots.
                    while let Ok(event) = self.driver_events.try_recv() {
                        self.handle(event, &mut out);
                    }
                }
                _ = tick.tick(), if !self.event_batch.is_empty() => self.flush_events(),
                _ = queue_tick.tick(), if self.queue.is_some() => self.queue_tick(&mut out),
                _ = workers_tick.tick() => self.refresh_workers(),
                () = &mut interrupt, if !self.summary.interrupted => {
                    self.summary.interrupted = true;
                    self.core.stop(&mut out);
                    self.links.stop_all();
                }
            }
            self.step(&mut out);
            if !self.summary.interrupted && self.storage_failed() {
                // Nothing more can be recorded: stop as on Ctrl-C.
                self.summary.interrupted = true;
                self.core.stop(&mut out);
                self.links.stop_all();
                self.step(&mut out);
            }
        }
        self.refresh_workers();
        self.links.shutdown();
        for (address, count) in self.refusals.held() {
            self.event_batch.push(Event::RefusedQuietly { address, count });
        }
        self.part_with_workers().await;
        self.flush_events();
        self.summary.seconds = started.elapsed().as_secs_f64();
        if !self.options.dry_exec {
            (self.summary.results, self.summary.more_results) = self.results.paths(&self.factory);
        }
        self.summary
    }

    /// Acts on one event from a worker or the listener.
    pub(super) fn handle(&mut self, event: DriverEvent, out: &mut Collect) {
        match event {
            DriverEvent::Worker { worker, event: WorkerEvent::Finished { task, attempt, outcome } } => {
                self.finished(worker, task, attempt, outcome, out);
            }
            event @ (DriverEvent::Submitted { .. } | DriverEvent::Polled { .. }) => self.queue_event(event),
            DriverEvent::Checked { task, found } => self.hashed(task, found, out),
            DriverEvent::Joined { offer, link, peer, reply } => {
                let change = offer.allocation.as_deref().and_then(|job| self.queue.as_mut()?.joined(job));
                let deadline = offer.time_limit.map(|t| Deadline::after(now_us(), t));
                let id = self.core.add_worker(offer.shape.clone(), deadline);
                // Across a network, the next task is sent before a slot frees.
                self.core.set_prefetch(id, true);
                self.event_batch.push(Event::WorkerJoined {
                    worker: id.0,
                    hostname: offer.hostname.clone(),
                    peer: peer.clone(),
                    cpus: offer.shape.cpus.len(),
                    gpus: offer.shape.gpus.len(),
                });
                self.links.insert(id, Link::Remote { tx: link, offer, peer, deadline, joined: Instant::now() });
                let _ = reply.send(id);
                self.write_workers();
                if let Some(change) = change {
                    self.queue_change(change);
                }
                if self.queue.is_some() && self.links.allocation(id).is_some() {
                    self.queue_worker_joined(out);
                }
            }
            DriverEvent::Lost { worker, reason, clean } => {
                let hostname = self.links.hostname(worker);
                self.remember_left(worker);
                let Some(link) = self.links.remove(worker) else { return };
                if let Link::Remote { offer: Offer { allocation: Some(job), .. }, joined, .. } = &link
                    && let Some(change) =
                        self.queue.as_mut().and_then(|q| q.left(job, joined.elapsed(), clean, &reason))
                {
                    self.queue_change(change);
                }
                let lost: Vec<(TaskId, u32)> =
                    self.running.iter().filter(|(_, (_, w))| *w == worker).map(|(t, (a, _))| (*t, *a)).collect();
                let tasks = lost.len();
                for (task, attempt) in lost {
                    self.running.remove(&task);
                    self.placements.forget(task);
                    self.ahead.remove(&task);
                    self.journal(task, attempt, JournalEvent::Lost { worker: worker.0 });
                }
                self.core.remove_worker(worker, out);
                self.event_batch.push(Event::WorkerLost { worker: worker.0, hostname, reason, tasks });
                self.write_workers();
            }
            DriverEvent::Refused { peer, reason } => {
                if let Some(more) = self.refusals.note(&peer, Instant::now()) {
                    self.event_batch.push(Event::WorkerRefused { peer, reason, more });
                }
            }
        }
    }

    /// Fills free slots and acts on the result, until nothing changes: with
    /// `--dry-exec` tasks end as they start, freeing slots for the next ones.
    fn step(&mut self, out: &mut Collect) {
        loop {
            self.expand_ready(out);
            self.check_ready(out);
            self.core.schedule(now_us(), out);
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

    /// Whether the journal or the output log can no longer be written; the
    /// first time, says which in the summary.
    fn storage_failed(&mut self) -> bool {
        let what = if self.journal_broken {
            "the journal could not be written; the run stopped"
        } else if self.log_health.is_broken() {
            "output.log could not be written; the run stopped"
        } else {
            return false;
        };
        if self.summary.io_errors.is_empty() {
            self.summary.io_errors.push(what.to_owned());
        }
        true
    }

    /// Acts on what the core asked for: start jobs, record state changes.
    fn apply(&mut self, out: &mut Collect) {
        while !out.starts.is_empty() || !out.states.is_empty() {
            for (task, state) in std::mem::take(&mut out.states) {
                self.state(task, state);
            }
            for (task, attempt, worker, alloc) in std::mem::take(&mut out.starts) {
                self.start(task, attempt, worker, &alloc, out);
            }
        }
    }

    fn start(&mut self, task: TaskId, attempt: u32, worker: WorkerId, alloc: &Allocation, out: &mut Collect) {
        self.running.insert(task, (attempt, worker));
        self.placements.start(task, alloc);
        let mut job = match self.factory.job(task, attempt, alloc) {
            Ok(job) => job,
            Err(reason) => {
                let outcome = Outcome::instant(Status::failed(None, None, reason));
                self.finished(worker, task, attempt, outcome, out);
                return;
            }
        };
        if !alloc.nodes.is_empty() {
            self.add_nodes(&mut job, alloc);
        }
        match alloc.after {
            // Sent ahead: it starts when `before` ends, and is recorded then.
            Some(before) => {
                self.ahead.insert(before, (task, job.label.clone()));
            }
            None => self.started(task, attempt, worker, job.label.clone()),
        }
        if self.options.dry_exec {
            self.dry_ran.entry(task.group).or_default().insert(task.instance);
            let outcome = Outcome::instant(Status::Succeeded);
            self.finished(worker, task, attempt, outcome, out);
        } else if !self.links.start(worker, job, alloc.after) {
            // The worker left between matching and dispatch; its loss requeues the task.
        }
    }

    /// A job has begun on its worker: its process runs (whether it was
    /// unchanged was decided before dispatch, in `driver_cache.rs`, so a
    /// crash while inputs are hashed leaves no start behind to undo an
    /// earlier success).
    fn started(&mut self, task: TaskId, attempt: u32, worker: WorkerId, label: String) {
        self.journal(task, attempt, JournalEvent::Started { worker: worker.0 });
        self.event_batch.push(Event::TaskStarted { task, label, attempt });
    }

    /// `FLOW_HOSTS` and `FLOW_NODEFILE` for a task holding several workers.
    fn add_nodes(&self, job: &mut Job, alloc: &Allocation) {
        let hosts: Vec<String> = alloc.nodes.iter().map(|&w| self.links.hostname(w)).collect();
        let file = self.run_dir.path.join("nodes").join(format!("{}.{}", job.label, job.attempt));
        let written = self.run_dir.write_file(&file, (hosts.join("\n") + "\n").as_bytes());
        if written.is_ok() {
            job.env.push(("FLOW_NODEFILE".to_owned(), file.display().to_string()));
        }
        job.env.push(("FLOW_HOSTS".to_owned(), hosts.join(",")));
    }

    fn finished(&mut self, worker: WorkerId, task: TaskId, attempt: u32, outcome: Outcome, out: &mut Collect) {
        // A late report from a worker that lost the task (or an older attempt) changes nothing.
        if self.running.get(&task) != Some(&(attempt, worker)) {
            return;
        }
        self.running.remove(&task);
        let metrics = self.placements.end(task, worker, outcome.usage, &self.links);
        let mut outcome = outcome;
        if outcome.status == Status::Succeeded && self.log_health.is_broken() {
            // Its output may not all be in the log: not a success to build on.
            outcome.status =
                Status::failed(None, None, "its output could not be stored: output.log cannot be written".into());
        }
        let fingerprint = outcome.fingerprint.unwrap_or_default();
        let variant = metrics.as_ref().map_or(0, |m| m.variant);
        let wrote = Wrote { variant, outputs: Some(std::mem::take(&mut outcome.outputs)) };
        let (journal, result) = match &outcome.status {
            Status::Succeeded => {
                self.summary.succeeded += 1;
                (JournalEvent::Succeeded { fingerprint, wrote }, TaskResult::Succeeded)
            }
            Status::Cached => {
                self.summary.cached += 1;
                (JournalEvent::Cached { fingerprint, wrote }, TaskResult::Succeeded)
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
        self.journal_batch.push(JournalRecord { metrics, ..JournalRecord::new(now_us(), task, attempt, journal) });
        let failed = matches!(outcome.status, Status::Failed { .. });
        let was_stopped = self.core.stopped().is_some();
        self.core.on_finished(task, result, out);
        let retrying = failed && out.states.iter().any(|(t, s)| *t == task && matches!(s, TaskState::Retrying { .. }));
        // With retries left and the run going on, only a next attempt no
        // worker can hold is not made: say so.
        if failed && !retrying && !was_stopped && attempt < self.graph().group(task.group).retries {
            if let Status::Failed { reason, .. } = &mut outcome.status {
                let not = format!("not retried: attempt {} asks for more than any worker has", attempt + 1);
                *reason = if reason.is_empty() { not } else { format!("{reason}; {not}") };
            }
        }
        if matches!(outcome.status, Status::Succeeded) {
            self.measure(task, outcome.duration);
        }
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
        // The task sent ahead behind this one starts now (unless the run is
        // being stopped: then it is stopped too). Only a stopped run (or
        // `--dry-exec`) ends a task still in line: it is no longer waiting.
        if !self.ahead.is_empty() {
            if self.summary.interrupted || self.options.dry_exec {
                self.ahead.retain(|_, (next, ..)| *next != task);
            }
            if let Some((next, label)) = self.ahead.remove(&task)
                && !self.summary.interrupted
                && let Some(&(attempt, worker)) = self.running.get(&next)
            {
                self.started(next, attempt, worker, label);
            }
        }
    }

    /// Counts a successful run of `task` that took `duration`; once enough
    /// instances of its group ran and they are short, the core may send
    /// them ahead to remote workers.
    fn measure(&mut self, task: TaskId, duration: std::time::Duration) {
        let (count, total) = self.durations.entry(task.group).or_default();
        if *count >= SHORT_SAMPLE {
            return;
        }
        *count += 1;
        *total += duration;
        if *count == SHORT_SAMPLE && *total < SHORT_TASK * SHORT_SAMPLE {
            self.core.set_short(task.group, line_depth(*total / SHORT_SAMPLE));
        }
    }

    fn state(&mut self, task: TaskId, state: TaskState) {
        match state {
            TaskState::Failed if self.stopped.contains(&task) => {}
            TaskState::Failed => self.summary.failed += 1,
            TaskState::Cancelled(reason) => {
                self.summary.cancelled += 1;
                let stopped = matches!(reason, CancelReason::Stopped);
                let reason = match reason {
                    CancelReason::DependencyFailed(dep) => format!("{} failed", self.factory.label(dep)),
                    CancelReason::DependencyCancelled(dep) => {
                        format!("{} was cancelled: no worker can run it", self.factory.label(dep))
                    }
                    CancelReason::MaxFails => "--max-fails reached".to_owned(),
                    CancelReason::Stopped => "interrupted".to_owned(),
                    CancelReason::Unschedulable => match self.unschedulable.get(&task.group) {
                        Some(why) => why.clone(),
                        None => "no worker can satisfy its resources".to_owned(),
                    },
                };
                // After a storage failure the journal's last space is kept
                // for what matters: instances that ended, and lost output.
                // An instance that never started needs no record to resume,
                // nor does a group whose instances were never known.
                if (self.summary.io_errors.is_empty() || !stopped) && task.is_instance() {
                    self.journal(task, 0, JournalEvent::Cancelled { reason: reason.clone() });
                }
                self.event_batch.push(Event::TaskCancelled { task, label: self.factory.label(task), reason });
            }
            TaskState::Succeeded | TaskState::Retrying { .. } => {}
        }
    }

    pub(super) fn journal(&mut self, task: TaskId, attempt: u32, event: JournalEvent) {
        self.journal_batch.push(JournalRecord::new(now_us(), task, attempt, event));
    }

    /// Hands this step's records and events to their threads (one wake-up each).
    ///
    /// Journal records go at once: they are what a resumed run trusts.
    /// Events only feed the display, so they wait up to [`EVENT_DELAY`] to
    /// travel together (one wake-up of the display thread, not one per task).
    fn flush(&mut self) {
        if !self.journal_batch.is_empty() && self.journal.send(std::mem::take(&mut self.journal_batch)).is_err() {
            // The journal thread ended on a write error.
            self.journal_broken = true;
        }
        if !self.event_batch.is_empty() && self.last_events.elapsed() >= EVENT_DELAY {
            self.flush_events();
        }
    }

    /// Sends the waiting events now.
    fn flush_events(&mut self) {
        if !self.event_batch.is_empty() {
            self.event_batch.iter().for_each(|event| self.results.see(event));
            let _ = self.events.send(std::mem::take(&mut self.event_batch));
        }
        self.last_events = Instant::now();
    }

    pub(super) fn source_location(&self, offset: usize) -> String {
        let (line, col) = self.source.line_col(offset);
        format!("{}:{line}:{col}", self.source.name)
    }
}

/// How many tasks of a group whose instances take `mean` wait in line
/// behind each running one: [`LINE`]'s worth, between 2 and [`MAX_LINE`].
fn line_depth(mean: std::time::Duration) -> u8 {
    let depth = LINE.as_nanos().div_ceil(mean.as_nanos().max(1));
    depth.clamp(2, u128::from(MAX_LINE)) as u8
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::line_depth;

    #[test]
    fn the_line_holds_about_ten_milliseconds_of_work() {
        assert_eq!(line_depth(Duration::from_micros(700)), 8, "capped");
        assert_eq!(line_depth(Duration::from_millis(2)), 5);
        assert_eq!(line_depth(Duration::from_millis(3)), 4);
        assert_eq!(line_depth(Duration::from_millis(50)), 2, "never under two");
        assert_eq!(line_depth(Duration::ZERO), 8);
    }
}
