//! The driver's side of an allocation queue: submit allocations as work
//! waits, learn their state from workers and rare polls, give up on tasks
//! the queue can never run, and cancel every allocation when the run ends.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::alloc::manager;
use super::alloc::planner::{self, Fit};
use super::alloc::queue::Change;
use super::driver::{Collect, Driver, DriverEvent};
use crate::ir::GroupId;
use crate::runtime::core::WorkerId;
use crate::runtime::event::Event;

/// How often the queue looks at the waiting work.
pub(super) const QUEUE_TICK: Duration = Duration::from_secs(1);
/// The longest the end of a run waits for submissions in flight (to cancel them).
const SUBMIT_WAIT: Duration = Duration::from_secs(30);
/// How long a finished allocation may linger in the manager's queue before it is cancelled too.
const STRAGGLER_WAIT: Duration = Duration::from_secs(2);
/// The longest the end of a run waits for workers to leave on their own.
const LEAVE_WAIT: Duration = Duration::from_secs(3);
/// The longest the end of a run waits for cancelled allocations to leave the manager's queue.
const CANCEL_WAIT: Duration = Duration::from_secs(15);

impl Driver {
    /// At the start: report the tasks the queue can never run; without an
    /// embedded worker nothing else could run them either, so cancel them.
    pub(super) fn queue_start(&mut self, out: &mut Collect) {
        let Some(queue) = self.queue.as_ref() else { return };
        let never = self
            .core
            .backlog(|_| true)
            .into_iter()
            .filter_map(|b| match &queue.fits[b.group.index()] {
                Fit::Never(reason) => Some((b.group, reason.to_string())),
                Fit::Slots(_) => None,
            })
            .collect();
        self.never_runs(never, "the queue cannot run it: ", out);
    }

    /// Reports each of `groups` once (in `allocs.json` and as an event) as a
    /// task the queue can never run, with why; without an embedded worker,
    /// nothing else could run them either, so they are cancelled, the
    /// reason after `cancelled`.
    fn never_runs(&mut self, groups: Vec<(GroupId, String)>, cancelled: &str, out: &mut Collect) {
        let Some(queue) = self.queue.as_mut() else { return };
        let graph = self.factory.graph();
        queue.unschedulable(groups.iter().map(|(g, why)| format!("`{}`: {why}", graph.group(*g).name)));
        for (g, why) in &groups {
            let task = graph.group(*g).name.clone();
            self.event_batch.push(Event::QueueUnschedulable { task, reason: why.clone() });
        }
        if !self.options.local {
            let groups = groups.into_iter().map(|(g, why)| (g, format!("{cancelled}{why}"))).collect();
            self.cancel_for(groups, out);
        }
    }

    /// Submits what the waiting work needs, polls when due, and gives up on
    /// the remaining work once the queue is paused and nothing is left to run it.
    pub(super) fn queue_tick(&mut self, out: &mut Collect) {
        let Some(queue) = self.queue.as_mut() else { return };
        // While instances are still compared with earlier runs, what is
        // left to do is not known: a rerun with nothing to do submits nothing.
        if queue.paused().is_none() && self.core.stopped().is_none() && self.checks.is_idle() {
            // Instances running on the embedded worker or on workers started
            // by hand need nothing from the queue.
            let own: HashSet<WorkerId> =
                self.links.allocations().filter(|(_, job)| queue.owns(job)).map(|(w, _)| w).collect();
            let backlog = self.core.backlog(|w| own.contains(&w));
            let wanted = planner::wanted_workers(self.factory.graph(), &backlog, &queue.fits);
            for _ in 0..planner::submissions(&queue.queue, queue.load(), wanted) {
                let (id, script) = match queue.prepare() {
                    Ok(prepared) => prepared,
                    Err(e) => {
                        let reason = format!("cannot write a submission script: {e}");
                        queue.pause(reason.clone());
                        self.event_batch.push(Event::QueuePaused { reason });
                        break;
                    }
                };
                let (settings, cwd, tx) = (queue.queue.clone(), self.options.base_dir.clone(), self.self_tx.clone());
                tokio::spawn(async move {
                    let result = manager::submit(&settings, &script, &cwd).await;
                    let _ = tx.send(DriverEvent::Submitted { id, result });
                });
                let record = queue.record(id);
                self.event_batch.push(Event::Allocation { id, job_id: String::new(), state: record, reason: None });
            }
        }
        if let Some(ids) = queue.poll_due() {
            let (manager, name, tx) = (queue.queue.settings.manager, queue.job_name(), self.self_tx.clone());
            tokio::spawn(async move {
                let result = manager::alive(manager, &name, &ids).await;
                let _ = tx.send(DriverEvent::Polled { ids, result });
            });
        }
        if let Some(reason) = queue.paused()
            && !queue.has_active()
            && self.links.is_empty()
        {
            let why = format!("no worker is left and {}", lowercase_first(reason));
            let groups = self.core.backlog(|_| true).into_iter().map(|b| (b.group, why.clone())).collect();
            self.cancel_for(groups, out);
        }
    }

    /// A worker of the queue joined: its allocations are uniform, so a task
    /// that fits no connected worker never will; without an embedded worker,
    /// cancel it rather than keep submitting allocations that cannot run it.
    pub(super) fn queue_worker_joined(&mut self, out: &mut Collect) {
        if self.options.local || self.queue.is_none() {
            return;
        }
        let groups = self
            .core
            .unfit()
            .into_iter()
            .map(|(g, why)| (g, format!("the queue's workers cannot run it: {why}")))
            .collect();
        self.never_runs(groups, "", out);
    }

    /// Acts on the manager's answer to a submission or a poll.
    pub(super) fn queue_event(&mut self, event: DriverEvent) {
        let Some(queue) = self.queue.as_mut() else { return };
        let changes = match event {
            DriverEvent::Submitted { id, result } => queue.submitted(id, result).into_iter().collect(),
            DriverEvent::Polled { ids, result: Ok(alive) } => queue.polled(&ids, &alive),
            // The manager could not be asked; workers still tell us what happens.
            DriverEvent::Polled { result: Err(_), .. } => Vec::new(),
            _ => Vec::new(),
        };
        for change in changes {
            self.queue_change(change);
        }
    }

    /// Shows an allocation's new state.
    pub(super) fn queue_change(&mut self, change: Change) {
        let Change { record, paused } = change;
        self.event_batch.push(Event::Allocation {
            id: record.id,
            job_id: record.job_id,
            state: record.state,
            reason: record.reason,
        });
        if let Some(reason) = paused {
            self.event_batch.push(Event::QueuePaused { reason });
        }
    }

    /// The run is over: wait briefly for remote workers to leave and for
    /// submissions in flight, then cancel every allocation still queued or
    /// running, so none is left behind.
    pub(super) async fn part_with_workers(&mut self) {
        // Workers were told the run is over: let them leave on their own
        // (briefly) — so the goodbye reaches them before this process exits,
        // and a worker whose connection drops without one knows its
        // coordinator was lost — and let submissions in flight return their
        // job ids.
        let mut out = Collect::default();
        let (leave_by, submit_by) = (Instant::now() + LEAVE_WAIT, Instant::now() + SUBMIT_WAIT);
        loop {
            let submitting = self.queue.as_ref().map_or(0, |q| q.submitting());
            if submitting == 0 && !self.links.has_remote() {
                break;
            }
            let deadline = if submitting > 0 { submit_by } else { leave_by };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match tokio::time::timeout(left, self.driver_events.recv()).await {
                Ok(Some(event @ DriverEvent::Submitted { .. })) => self.queue_event(event),
                // Told to leave, it did: that is no failure of its allocation.
                Ok(Some(DriverEvent::Lost { worker, .. })) if self.queue.is_some() => {
                    let event = DriverEvent::Lost { worker, reason: "the run ended".to_owned(), clean: true };
                    self.handle(event, &mut out);
                }
                // Without a queue, `flow workers` keeps showing who took part.
                Ok(Some(DriverEvent::Lost { worker, .. })) => {
                    self.links.remove(worker);
                }
                Ok(None) => break,
                Ok(Some(_)) | Err(_) => {}
            }
        }
        let Some(queue) = self.queue.as_mut() else { return };
        if let Err(reason) = queue.cancel_all() {
            self.event_batch.push(Event::QueuePaused { reason: format!("cancelling allocations failed: {reason}") });
        }
        // Leave only when the manager lists none of them any more.
        let (manager, name, ids) = (queue.queue.settings.manager, queue.job_name(), queue.job_ids());
        let (started, mut stragglers_cancelled) = (Instant::now(), false);
        while started.elapsed() < CANCEL_WAIT {
            let alive = match manager::alive(manager, &name, &ids).await {
                Ok(alive) if !alive.is_empty() => alive,
                _ => break,
            };
            // A job whose workers left should end by itself; if it lingers, cancel it too.
            if !stragglers_cancelled && started.elapsed() > STRAGGLER_WAIT {
                let alive: Vec<String> = alive.into_iter().collect();
                let _ = manager::cancel(manager, &alive);
                stragglers_cancelled = true;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        // Their output, complete now, joins the run log.
        if let (Some(log), Some(queue)) = (self.log.take(), self.queue.as_ref()) {
            for record in queue.outputs() {
                if !log.send(record).await {
                    break;
                }
            }
        }
    }

    /// Cancels the pending instances of `groups`, remembering why.
    fn cancel_for(&mut self, groups: Vec<(GroupId, String)>, out: &mut Collect) {
        if groups.is_empty() {
            return;
        }
        let ids: Vec<GroupId> = groups.iter().map(|(g, _)| *g).collect();
        self.unschedulable.extend(groups);
        self.core.cancel_groups(&ids, out);
    }
}

/// `The Slurm queue…` → `the Slurm queue…`.
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default()
}

/// Job ids the manager still lists (for [`DriverEvent::Polled`]).
pub(super) type Alive = Result<HashSet<String>, String>;
