//! The driver: the one place where tokio meets the scheduler core. It owns
//! the run loop — drain worker completions, feed them to the core, refill
//! free slots, dispatch rendered jobs — and ties the parts of a run
//! together: the [`Recorder`] hands every record to the journal thread and
//! every event to the caller without waiting, [`CacheChecks`] compares
//! instances with earlier runs before dispatch, the [`QueueSide`] runs the
//! allocation queue, [`SendAhead`] keeps the tasks waiting in line on
//! remote workers, and [`WorkersFile`] the list of workers. Each keeps its
//! own state and says what changed; the driver acts on it. Groups known
//! only at run time are expanded in [`expansions`].

mod aside;
mod attempt_end;
mod expansions;
mod gate;
mod membership;
mod reattach;
mod states;

use hashbrown::{HashMap, HashSet};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::alloc::queue_side::{Demand, ManagerAnswer, QUEUE_TICK, QueueSide, Workers};
use super::books::ready_times::ReadyTimes;
use super::books::recorder::{EVENT_DELAY, Recorder};
use super::books::results::Results;
use super::dispatch::job_factory::JobFactory;
use super::dispatch::upstream_failures::{Gate, UpstreamFailures};
use super::driver_event::DriverEvent;
use super::earlier::cache_checks::CacheChecks;
use super::earlier::cache_lookup::Lookup;
use super::earlier::stale::StaleOutputs;
use super::killed::held::Held;
use super::workers::links::Links;
use super::workers::placements;
use super::workers::refusals::Refusals;
use super::workers::send_ahead::SendAhead;
use super::workers::workers_file::{WORKERS_TICK, WorkersFile};
use crate::diag::Source;
use crate::host::now_us;
use crate::ir::{Graph, GroupId, TaskId};
use crate::log::{JournalEvent, OutputLogSender};
use crate::rundir::RunDir;
use crate::rundir::Summary;
use crate::runtime::core::{Allocation, CancelReason, Core, Out, Retry, TaskResult, TaskState, WorkerId};
use crate::runtime::event::Event;
use crate::runtime::protocol::job::Job;
use crate::runtime::protocol::outcome::{Outcome, Status, WorkerEvent};
use crate::runtime::run_options::RunOptions;

/// The longest the end of a run waits for submissions in flight (to cancel them).
const SUBMIT_WAIT: Duration = Duration::from_secs(30);
/// The longest the end of a run waits for workers to leave on their own.
const LEAVE_WAIT: Duration = Duration::from_secs(3);
/// The most events handled between two refills of the workers' slots.
const DRAIN: usize = 256;

/// What the core asked for during one step.
#[derive(Default)]
pub(super) struct Collect {
    starts: Vec<(TaskId, u32, WorkerId, Allocation)>,
    states: Vec<(TaskId, TaskState)>,
    rests: Vec<(GroupId, u64, CancelReason)>,
}

impl Collect {
    fn is_empty(&self) -> bool {
        self.starts.is_empty() && self.states.is_empty() && self.rests.is_empty()
    }
}

impl Out for Collect {
    fn start(&mut self, task: TaskId, attempt: u32, worker: WorkerId, alloc: &Allocation) {
        self.starts.push((task, attempt, worker, alloc.clone()));
    }

    fn state(&mut self, task: TaskId, state: TaskState) {
        self.states.push((task, state));
    }

    fn cancelled_rest(&mut self, group: GroupId, count: u64, reason: CancelReason) {
        self.rests.push((group, count, reason));
    }
}

/// What a driver starts from (built by `run::start`).
pub(super) struct Setup {
    pub(super) core: Core,
    pub(super) factory: JobFactory,
    pub(super) links: Links,
    pub(super) driver_events: mpsc::UnboundedReceiver<DriverEvent>,
    pub(super) recorder: Recorder,
    pub(super) checks: CacheChecks,
    pub(super) queue: QueueSide,
    pub(super) stale: StaleOutputs,
    pub(super) options: RunOptions,
    pub(super) run_dir: RunDir,
    pub(super) source: Arc<Source>,
    pub(super) summary: Summary,
    /// Instances held for the remote workers of a killed run to bring back.
    pub(super) held: Held,
    /// Where the killed runs' output of the instances adopted is copied (while some are held).
    pub(super) earlier_log: Option<OutputLogSender>,
}

/// The run loop's state.
pub(super) struct Driver {
    core: Core,
    factory: JobFactory,
    links: Links,
    driver_events: mpsc::UnboundedReceiver<DriverEvent>,
    recorder: Recorder,
    checks: CacheChecks,
    queue: QueueSide,
    ahead: SendAhead,
    workers: WorkersFile,
    /// Refused connections, to say so once a minute per address.
    refusals: Refusals,
    /// Earlier successes not yet known to still exist (their outputs are
    /// moved out of the way when they are known not to).
    stale: StaleOutputs,
    /// Outputs moved aside in this step, to be said at its end.
    moved: Vec<super::earlier::stale::Moved>,
    /// The finished instances of final tasks: where the results are.
    results: Results,
    /// Nested groups already warned about a missing file under `--dry-exec`.
    dry_warned: HashSet<GroupId>,
    options: RunOptions,
    run_dir: RunDir,
    source: Arc<Source>,
    /// Where each group is defined, once asked for.
    locations: RefCell<Vec<Option<Arc<str>>>>,
    summary: Summary,
    /// Attempt and worker of each running task.
    running: HashMap<TaskId, (u32, WorkerId)>,
    /// Tasks killed by Ctrl-C: they count as cancelled, not failed.
    stopped: HashSet<TaskId>,
    /// The attempt of each task lost with a worker that left without a
    /// word: should the worker come back with it before it runs again, it
    /// is taken over (`driver/reattach.rs`).
    fenced: HashMap<TaskId, u32>,
    /// How the instances that tasks wait for the failure of failed.
    failures: UpstreamFailures,
    /// When instances became ready, for their start records.
    ready: ReadyTimes,
    /// Instances held for the remote workers of a killed run to bring back.
    held: Held,
    /// Where the killed runs' output of the instances adopted is copied.
    earlier_log: Option<OutputLogSender>,
}

impl Driver {
    /// A driver for `setup`, before its loop runs.
    pub(super) fn new(setup: Setup) -> Self {
        let Setup {
            core,
            factory,
            links,
            driver_events,
            recorder,
            checks,
            queue,
            stale,
            options,
            run_dir,
            source,
            summary,
            held,
            earlier_log,
        } = setup;
        Self {
            results: Results::new(factory.graph()),
            failures: UpstreamFailures::new(factory.graph()),
            ready: ReadyTimes::new(factory.graph(), now_us()),
            workers: WorkersFile::new(run_dir.clone()),
            core,
            factory,
            links,
            driver_events,
            recorder,
            checks,
            queue,
            ahead: SendAhead::default(),
            refusals: Refusals::default(),
            stale,
            moved: Vec::new(),
            dry_warned: HashSet::new(),
            options,
            run_dir,
            source,
            locations: RefCell::default(),
            summary,
            running: HashMap::new(),
            stopped: HashSet::new(),
            fenced: HashMap::new(),
            held,
            earlier_log,
        }
    }

    fn graph(&self) -> &Arc<Graph> {
        self.factory.graph()
    }

    /// Runs until every task has ended or the run is stopped.
    pub(super) async fn run(mut self) -> Summary {
        let started = Instant::now();
        let mut out = Collect::default();
        let known: Vec<GroupId> =
            (0..self.graph().groups.len() as u32).map(GroupId).filter(|&g| !self.graph().is_deferred(g)).collect();
        self.settle_stale(&known, None);
        let demand = self.queue.start(&self.core, self.factory.graph());
        self.act_on(demand, &mut out);
        // The embedded worker is there from the start; remote ones update the file as they come and go.
        self.write_workers(true);
        self.step(&mut out);
        let mut interrupt = std::pin::pin!(super::signals::interrupted());
        let mut tick = tokio::time::interval(EVENT_DELAY);
        let mut queue_tick = tokio::time::interval(QUEUE_TICK);
        let mut workers_tick = tokio::time::interval(WORKERS_TICK);
        while !self.core.is_finished() {
            // Instances waiting to be retried become ready at their time.
            let wake = self.core.next_wake_us();
            let retry_due = tokio::time::sleep(Duration::from_micros(wake.unwrap_or(0).saturating_sub(now_us())));
            tokio::select! {
                () = retry_due, if wake.is_some() => {}
                event = self.driver_events.recv() => {
                    let Some(event) = event else { break };
                    self.handle(event, &mut out);
                    // Take what is ready before refilling slots, but not so
                    // much that the workers wait for the jobs it frees.
                    for _ in 1..DRAIN {
                        let Ok(event) = self.driver_events.try_recv() else { break };
                        self.handle(event, &mut out);
                    }
                }
                _ = tick.tick(), if self.recorder.has_events() => self.flush_events(),
                _ = queue_tick.tick(), if self.queue.has_queue() => {
                    let workers = Workers { allocations: self.links.allocations().collect(), none: self.links.is_empty() };
                    let demand = self.queue.tick(&self.core, &workers, self.factory.graph(), !self.checks.is_idle());
                    self.act_on(demand, &mut out);
                }
                _ = workers_tick.tick() => self.write_workers(false),
                () = &mut interrupt, if !self.summary.interrupted => self.stop(&mut out),
            }
            self.step(&mut out);
            if !self.summary.interrupted && self.storage_failed() {
                // Nothing more can be recorded: stop as on Ctrl-C.
                self.stop(&mut out);
                self.step(&mut out);
            }
        }
        self.end(started).await
    }

    /// Stops the run: nothing starts any more, running tasks are killed.
    fn stop(&mut self, out: &mut Collect) {
        self.summary.interrupted = true;
        self.ahead.clear();
        self.core.stop(out);
        self.links.stop_all();
    }

    /// Ends the run that started at `started`: parts with the workers and
    /// the queue, sends the last events, and sums up.
    async fn end(mut self, started: Instant) -> Summary {
        self.write_workers(false);
        self.links.shutdown();
        self.flush();
        for (address, count) in self.refusals.held() {
            self.recorder.event(Event::RefusedQuietly { address, count });
        }
        self.part_with_workers().await;
        for event in self.queue.finish().await {
            self.recorder.event(event);
        }
        self.flush_events();
        self.summary.seconds = started.elapsed().as_secs_f64();
        if !self.options.dry_exec {
            (self.summary.results, self.summary.more_results) = self.results.paths(&self.factory);
        }
        self.summary
    }

    /// Acts on one event from a worker or the listener.
    fn handle(&mut self, event: DriverEvent, out: &mut Collect) {
        match event {
            DriverEvent::Worker { worker, event: WorkerEvent::Finished { task, attempt, outcome } } => {
                self.finished(worker, task, attempt, outcome, out);
            }
            DriverEvent::Manager(answer) => {
                for event in self.queue.answer(answer) {
                    self.recorder.event(event);
                }
            }
            DriverEvent::Checked { task, found } => {
                self.checks.hashed();
                self.checked(task, found, out);
                self.checks.start_hashing(self.factory.graph());
            }
            DriverEvent::Joined { offer, link, peer, reply } => self.joined(offer, link, peer, reply, out),
            DriverEvent::Lost { worker, reason, clean } => self.lost(worker, reason, clean, out),
            DriverEvent::Refused { peer, reason } => {
                if let Some(more) = self.refusals.note(&peer, Instant::now()) {
                    self.recorder.event(Event::WorkerRefused { peer, reason, more });
                }
            }
        }
    }

    /// Shows the queue side's events and cancels the groups it gave up on.
    fn act_on(&mut self, demand: Demand, out: &mut Collect) {
        for event in demand.events {
            self.recorder.event(event);
        }
        if !demand.cancel.is_empty() {
            self.core.cancel_groups(&demand.cancel, out);
        }
    }

    /// Fills free slots and acts on the result, until nothing changes: with
    /// `--dry-exec` tasks end as they start, freeing slots for the next ones.
    fn step(&mut self, out: &mut Collect) {
        loop {
            // What the last events ended first: the outputs of an instance
            // that did not succeed go aside before its dependents are compared.
            self.apply(out);
            self.expand_ready(out);
            self.check_ready(out);
            self.core.schedule(now_us(), out);
            if out.is_empty() {
                break;
            }
            if self.recorder.is_full() {
                self.flush();
            }
        }
        self.say_moved();
        self.flush();
    }

    /// Compares every newly ready instance of a prechecked group with its last success.
    fn check_ready(&mut self, out: &mut Collect) {
        for task in self.core.take_unchecked() {
            // A skip, or a reaction to a failure, is decided afresh each run.
            let fresh = !matches!(self.gate(task), Ok(Gate::Runs));
            if let Some(found) = self.checks.admit(task, &self.factory, fresh) {
                self.checked(task, found, out);
            }
        }
        self.checks.start_hashing(self.factory.graph());
    }

    /// Acts on a comparison: an unchanged instance is recorded as such.
    fn checked(&mut self, task: TaskId, found: Lookup, out: &mut Collect) {
        let unchanged = matches!(found, Lookup::Unchanged { .. });
        if !self.core.on_checked(task, unchanged, out) {
            return;
        }
        let Lookup::Unchanged { fingerprint, wrote } = found else {
            self.ready.ready_again(task, now_us());
            return;
        };
        self.ready.ended(task, now_us());
        self.summary.cached += 1;
        self.recorder.journal(task, 0, JournalEvent::Cached { fingerprint, wrote });
        self.recorder.event(self.ended_at_once(task, Status::Cached));
    }

    /// The event saying that `task` ended with `status` without running.
    fn ended_at_once(&self, task: TaskId, status: Status) -> Event {
        Event::TaskFinished {
            task,
            label: self.factory.label(task),
            attempt: 0,
            status,
            retrying: false,
            retry_at_us: None,
            duration: Duration::ZERO,
            stderr_tail: String::new(),
            location: self.location(task),
            metrics: None,
        }
    }

    /// Whether the journal or the output log can no longer be written; the
    /// first time, says which in the summary.
    fn storage_failed(&mut self) -> bool {
        let Some(what) = self.recorder.storage_failure() else { return false };
        if self.summary.io_errors.is_empty() {
            self.summary.io_errors.push(what.to_owned());
        }
        true
    }

    /// Acts on what the core asked for: start jobs, record state changes.
    fn apply(&mut self, out: &mut Collect) {
        while !out.is_empty() {
            for (task, state) in std::mem::take(&mut out.states) {
                self.state(task, state);
            }
            for (group, count, reason) in std::mem::take(&mut out.rests) {
                self.cancelled_rest(group, count, reason);
            }
            // The list's room is kept for the next round: starts come by the thousand.
            let mut starts = std::mem::take(&mut out.starts);
            for (task, attempt, worker, alloc) in starts.drain(..) {
                self.start(task, attempt, worker, &alloc, out);
            }
            if out.starts.is_empty() {
                out.starts = starts;
            }
        }
    }

    fn start(&mut self, task: TaskId, attempt: u32, worker: WorkerId, alloc: &Allocation, out: &mut Collect) {
        let gate = self.gate(task);
        if let Ok(Gate::Skipped(reason)) = gate {
            // Decided before dispatch: the instance never reaches its worker.
            self.recorder.journal(task, attempt, JournalEvent::Skipped { reason: reason.clone() });
            self.ready.ended(task, now_us());
            let (label, location) = (self.factory.label(task), self.location(task));
            self.recorder.event(Event::TaskSkipped { task, label, reason, location });
            self.core.on_finished(task, TaskResult::Skipped, now_us(), out);
            return;
        }
        self.running.insert(task, (attempt, worker));
        if !self.fenced.is_empty() {
            // Started again: the lost worker's attempt is no longer taken over.
            self.fenced.remove(&task);
        }
        let job = gate.and_then(|gate| {
            let mut job = self.factory.job(task, attempt, alloc)?;
            if let Gate::Reacts(failed) = &gate {
                self.react(&mut job, failed)?;
            }
            Ok(job)
        });
        let mut job = match job {
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
        // Every attempt starts from what a clean run would give it.
        self.clear_outputs(&job);
        let ready_us = self.ready.take(task, self.factory.graph());
        match alloc.after {
            Some(before) => {
                // Sent ahead: it starts when `before` ends, and is recorded
                // again then; recorded now too, before the job leaves, since
                // the worker starts it without asking.
                self.recorder.journal(
                    task,
                    attempt,
                    JournalEvent::Started { worker: worker.0, ready_us: Some(ready_us) },
                );
                self.ahead.hold(before, task, job.label.clone(), ready_us);
            }
            None => self.started(task, attempt, worker, job.label.clone(), ready_us),
        }
        if self.options.dry_exec {
            self.checks.ran(task);
        }
        if self.options.dry_exec && self.links.is_local(worker) {
            let outcome = Outcome::instant(Status::Succeeded);
            self.finished(worker, task, attempt, outcome, out);
        } else if let Err(e) = self.links.start(worker, job, alloc.after) {
            if let Some(before) = alloc.after {
                self.ahead.forget(before);
            }
            let reason = format!("its job cannot be sent to its worker: {e}");
            self.finished(worker, task, attempt, Outcome::instant(Status::failed(None, None, reason)), out);
        }
    }

    /// A job has begun on its worker, ready since `ready_us`: its process
    /// runs (whether it was unchanged was decided before dispatch, by
    /// [`CacheChecks`], so a crash while inputs are hashed leaves no start
    /// behind to undo an earlier success). A remote worker is sent the job
    /// only once this record is written.
    fn started(&mut self, task: TaskId, attempt: u32, worker: WorkerId, label: String, ready_us: u64) {
        let ready_us = Some(ready_us);
        self.recorder.journal(task, attempt, JournalEvent::Started { worker: worker.0, ready_us });
        self.recorder.event(Event::TaskStarted { task, label, attempt });
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

    /// Attempt `attempt` of `task` ended on `worker`: tell the core,
    /// journal it with why it is not retried when the core says so, show
    /// it, and start the task waiting in line behind it.
    fn finished(&mut self, worker: WorkerId, task: TaskId, attempt: u32, outcome: Outcome, out: &mut Collect) {
        // A late report from a worker that lost the task (or an older attempt) changes nothing.
        match self.running.remove(&task) {
            Some(run) if run == (attempt, worker) => {}
            Some(other) => {
                self.running.insert(task, other);
                return;
            }
            None => return,
        }
        let mut outcome = outcome;
        if outcome.status == Status::Succeeded && self.recorder.log_broken() {
            // Its output may not all be in the log: not a success to build on.
            outcome.status =
                Status::failed(None, None, "its output could not be stored: output.log cannot be written".into());
        }
        let now = now_us();
        let result = self.count_end(task, &outcome.status);
        // Only an attempt whose process ran has metrics.
        let metrics = outcome
            .usage
            .and_then(|usage| Some(placements::metrics(self.core.allocation(task)?, worker, usage, &self.links)));
        let retry = self.core.on_finished(task, result, now, out);
        self.record_end(task, attempt, &mut outcome, now, retry, metrics.clone());
        if outcome.status == Status::Succeeded
            && let Some(line) = self.ahead.measure(task.group, outcome.duration)
        {
            // Short enough that a round trip matters: sent ahead to remote workers.
            self.core.set_short(task.group, line);
        }
        let failed = matches!(outcome.status, Status::Failed { .. });
        self.recorder.event(Event::TaskFinished {
            task,
            label: self.factory.label(task),
            attempt,
            status: outcome.status,
            retrying: retry.runs_again(),
            retry_at_us: match retry {
                Retry::Delayed { until_us, .. } => Some(until_us),
                _ => None,
            },
            duration: outcome.duration,
            stderr_tail: if failed { outcome.stderr_tail } else { String::new() },
            location: self.location(task),
            metrics,
        });
        self.start_next_in_line(task);
    }

    /// The task sent ahead behind `task`, which ended, starts now (a
    /// stopped run has no line any more: what was in it is stopped too).
    fn start_next_in_line(&mut self, task: TaskId) {
        if let Some((next, label, ready_us)) = self.ahead.release(task)
            && let Some(&(attempt, worker)) = self.running.get(&next)
        {
            self.started(next, attempt, worker, label, ready_us);
        }
    }

    /// Hands this step's records and events to their threads.
    fn flush(&mut self) {
        let messages = self.links.take_messages();
        self.recorder.flush(messages, |event| self.results.see(event));
    }

    /// Sends the waiting events now.
    fn flush_events(&mut self) {
        self.recorder.flush_events(|event| self.results.see(event));
    }

    /// Where `task`'s group is defined, as `file:line:col` (found once per group).
    fn location(&self, task: TaskId) -> Arc<str> {
        let mut known = self.locations.borrow_mut();
        let g = task.group.index();
        if known.len() <= g {
            known.resize(g + 1, None);
        }
        let found =
            known[g].get_or_insert_with(|| self.source.position(self.graph().group(task.group).span.start).into());
        found.clone()
    }

    /// The run is over: waits briefly for remote workers to leave and for
    /// submissions in flight (so the queue can cancel every allocation).
    async fn part_with_workers(&mut self) {
        // Workers were told the run is over: let them leave on their own
        // (briefly) — so the goodbye reaches them before this process exits,
        // and a worker whose connection drops without one knows its
        // coordinator was lost — and let submissions in flight return their
        // job ids.
        let mut out = Collect::default();
        let (leave_by, submit_by) = (Instant::now() + LEAVE_WAIT, Instant::now() + SUBMIT_WAIT);
        loop {
            let submitting = self.queue.submitting();
            if submitting == 0 && !self.links.has_remote() {
                break;
            }
            let deadline = if submitting > 0 { submit_by } else { leave_by };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match tokio::time::timeout(left, self.driver_events.recv()).await {
                Ok(Some(event @ DriverEvent::Manager(ManagerAnswer::Submitted { .. }))) => self.handle(event, &mut out),
                // Told to leave, it did: that is no failure of its allocation.
                Ok(Some(DriverEvent::Lost { worker, .. })) if self.queue.has_queue() => {
                    self.lost(worker, "the run ended".to_owned(), true, &mut out);
                }
                // Without a queue, `flow workers` keeps showing who took part.
                Ok(Some(DriverEvent::Lost { worker, .. })) => {
                    self.links.remove(worker);
                }
                Ok(None) => break,
                Ok(Some(_)) | Err(_) => {}
            }
        }
    }
}
