//! Events from the outside world: a task finished ([`Core::on_finished`]),
//! a worker was lost ([`Core::remove_worker`]), the run is stopped
//! ([`Core::stop`]) — and what follows from them: retries, failures and the
//! cancellation of everything that depended on a failed task (except what
//! waits for its failure, or for it whatever happened: that is released).

use crate::ir::TaskId;

use super::{Core, Running};
use crate::runtime::core::deps::Link;
use crate::runtime::core::group_state::Instance;
use crate::runtime::core::out::{CancelReason, Out, TaskResult, TaskState};
use crate::runtime::core::retry::Retry;
use crate::runtime::core::worker_id::WorkerId;

/// A step of a cancellation cascade.
#[derive(Debug, Clone, Copy)]
enum Cascade {
    /// Instance `.1` of group `.0` is cancelled: cancel what waits for it.
    Instance(usize, u64),
    /// Group `.0` waits for a failed group as a whole: cancel all of it.
    Group(usize),
}

impl Core {
    /// An attempt of `task` ended at `now_us`: frees its resources and
    /// updates its dependents. A failed attempt is retried while the task
    /// has retries left and its `retry_on` lists the failure — at once
    /// (state `Retrying`), or after its `retry_delay` (state `Delayed`,
    /// holding no worker); otherwise the task fails and everything that
    /// depends on it, directly or not, is cancelled (with
    /// `continue_on_failure` the failure is ignored and its dependents run).
    /// Reports for tasks that are not running (already reported, or lost
    /// with their worker) are ignored. Returns whether the task runs again,
    /// and if not, why.
    pub fn on_finished(&mut self, task: TaskId, result: TaskResult, now_us: u64, out: &mut impl Out) -> Retry {
        let Some(run) = self.running.remove(&task) else { return Retry::NotRunning };
        self.release(task, &run);
        let retry = match result {
            TaskResult::Succeeded => {
                self.groups[task.group.index()].finish(task.instance, Instance::Succeeded);
                self.forget(task);
                out.state(task, TaskState::Succeeded);
                self.release_dependents(task);
                Retry::NotFailed
            }
            TaskResult::Skipped => {
                self.skip(task, out);
                Retry::NotFailed
            }
            TaskResult::Failed | TaskResult::NotRetryable => {
                let history = self.history.entry(task).or_default();
                history.failures += 1;
                let left = history.failures <= self.groups[task.group.index()].settings().retries;
                let retry = match (self.stopped, left, result) {
                    (Some(_), _, _) => Retry::Stopped,
                    (None, false, _) => Retry::OutOfAttempts,
                    (None, true, TaskResult::NotRetryable) => Retry::NotRetryable,
                    (None, true, _) => self.retry(task, run.attempt, Some(now_us), None, out),
                };
                if !retry.runs_again() {
                    self.fail(task, out);
                }
                retry
            }
        };
        self.recycle(run);
        retry
    }

    /// Removes a worker that is gone. Each task it was running is
    /// rescheduled as its next attempt (a lost worker is not the task's
    /// failure, so `retry_delay` does not apply): at once (state
    /// `Retrying`), or, given `fence_until_us`, not before then (state
    /// `Delayed`: the worker may still be stopping it) — unless the task
    /// has now been on `crash_limit` lost workers: then it fails. After a
    /// stop, such tasks are cancelled instead. A multi-node task is lost
    /// with any of its workers; the others are freed.
    pub fn remove_worker(&mut self, worker: WorkerId, fence_until_us: Option<u64>, out: &mut impl Out) {
        let Some(slot) = self.workers.get_mut(worker.0 as usize) else { return };
        if slot.take().is_none() {
            return;
        }
        self.share_lines();
        let mut lost: Vec<TaskId> = self
            .running
            .iter()
            .filter(|(_, r)| r.worker == worker || r.alloc.nodes.contains(&worker))
            .map(|(&t, _)| t)
            .collect();
        lost.sort_unstable();
        for task in lost {
            let Some(run) = self.running.remove(&task) else { continue };
            if run.alloc.after.is_none() {
                self.free(task, &run);
            }
            let history = self.history.entry(task).or_default();
            history.crashes += 1;
            let crashed_out = history.crashes >= self.groups[task.group.index()].settings().crash_limit;
            if let Some(reason) = self.stopped {
                self.groups[task.group.index()].finish(task.instance, Instance::Cancelled);
                self.forget(task);
                out.state(task, TaskState::Cancelled(reason));
            } else if crashed_out || !self.retry(task, run.attempt, None, fence_until_us, out).runs_again() {
                self.fail(task, out);
            }
            self.recycle(run);
        }
    }

    /// Stops the run (Ctrl-C): every task that is not running is cancelled
    /// (`Cancelled(Stopped)`) and nothing starts any more. The driver kills
    /// the running tasks and reports them through [`Core::on_finished`];
    /// they are not retried.
    pub fn stop(&mut self, out: &mut impl Out) {
        self.stop_with(CancelReason::Stopped, out);
    }

    /// Cancels every pending task for `reason` and stops scheduling. The
    /// instances that never started are reported together, per group
    /// ([`Out::cancelled_rest`]); those that ran before (waiting for a
    /// retry, or to run again after their worker was lost) one by one.
    fn stop_with(&mut self, reason: CancelReason, out: &mut impl Out) {
        self.stopped.get_or_insert(reason);
        for g in 0..self.groups.len() {
            if self.groups[g].pending() == 0 {
                continue;
            }
            let mut rest = 0;
            for i in 0..self.groups[g].count() {
                let task = TaskId::new(Self::group_id(g), i);
                let ran = self.groups[g].state(i) == Instance::Delayed || self.attempt_of(task) > 0;
                if self.groups[g].end_pending(i, Instance::Cancelled) {
                    self.pending -= 1;
                    if ran {
                        out.state(task, TaskState::Cancelled(reason));
                    } else {
                        rest += 1;
                    }
                }
            }
            if rest > 0 {
                out.cancelled_rest(Self::group_id(g), rest, reason);
            }
            self.cancel_deferred(g, reason, out);
            self.cancel_parts(g, reason, out);
            self.sync_active(g);
        }
    }

    /// Gives back what the ended run of `task` held, or hands it to the
    /// task sent ahead to run on it next (which is starting now).
    fn release(&mut self, task: TaskId, run: &Running) {
        if run.alloc.after.is_some() {
            // Ended in line, before it started (stopped): it held nothing.
            self.leave_line(run);
        } else if let Some(next) = run.next.filter(|n| self.running.contains_key(n)) {
            self.hand_over(next, run);
        } else {
            self.free(task, run);
        }
    }

    /// Gives back what the run of `task` held.
    fn free(&mut self, task: TaskId, run: &Running) {
        if run.alloc.nodes.is_empty() {
            let request = &self.groups[task.group.index()].settings().requests(run.attempt)[run.alloc.variant];
            if let Some(worker) = self.workers.get_mut(run.worker.0 as usize).and_then(Option::as_mut) {
                worker.give(request, &run.alloc);
            }
            return;
        }
        for node in &run.alloc.nodes {
            if let Some(worker) = self.workers.get_mut(node.0 as usize).and_then(Option::as_mut) {
                worker.reserved = false;
                worker.stale = None;
            }
        }
    }

    /// Keeps the buffers of a finished run's allocation.
    fn recycle(&mut self, run: Running) {
        let mut alloc = run.alloc;
        alloc.clear();
        self.spare.push(alloc);
    }

    /// Drops the history of `task`, which reached its final state.
    pub(super) fn forget(&mut self, task: TaskId) {
        if !self.history.is_empty() {
            self.history.remove(&task);
        }
    }

    /// Puts `task`, whose attempt `attempt` ended, back to run again —
    /// after its `retry_delay` from `failed_us` if it has one and the
    /// attempt failed then, and not before `not_before_us` — unless the next attempt asks for more than any
    /// worker has (the caller then fails it).
    fn retry(
        &mut self,
        task: TaskId,
        attempt: u32,
        failed_us: Option<u64>,
        not_before_us: Option<u64>,
        out: &mut impl Out,
    ) -> Retry {
        let (g, next) = (task.group.index(), attempt + 1);
        if !self.attempt_fits(g, next) {
            return Retry::TooBig { attempt: next };
        }
        self.history.entry(task).or_default().attempt = next;
        self.pending += 1;
        let wait = failed_us.zip(self.groups[g].settings().retry_delay).map(|(at, b)| (at, b.delay_us(next)));
        let delayed = wait.filter(|&(_, delay)| delay > 0).map(|(at, delay)| at.saturating_add(delay));
        if let Some(until_us) = delayed.max(not_before_us) {
            self.groups[g].delay(task.instance);
            self.wait(task, until_us);
            out.state(task, TaskState::Delayed { attempt: next, until_us });
            return Retry::Delayed { attempt: next, until_us };
        }
        self.groups[g].requeue(task.instance);
        self.sync_active(g);
        out.state(task, TaskState::Retrying { attempt: next });
        Retry::Retrying { attempt: next }
    }

    /// `task` (running until now) failed for good. With its task's
    /// `continue_on_failure` the failure is ignored: its dependents are
    /// released as after a success, and the run's `max_fails` does not
    /// count it. A task's own `max_fails` counts every failure.
    fn fail(&mut self, task: TaskId, out: &mut impl Out) {
        let g = task.group.index();
        let ignored = self.groups[g].finish_failed(task.instance);
        self.forget(task);
        if ignored {
            out.state(task, TaskState::Ignored);
            self.release_dependents(task);
        } else {
            self.failed += 1;
            out.state(task, TaskState::Failed);
            self.cancel_dependents(task, CancelReason::DependencyFailed(task), out);
        }
        if self.groups[g].reached_max_fails() && !self.groups[g].is_doomed() {
            self.cancel_groups_for(&[task.group], CancelReason::TaskMaxFails, out);
        }
        let instances = self.groups.iter().map(|g| g.count()).sum();
        if self.options.max_fails.is_some_and(|max| self.failed >= max.limit(instances)) && self.stopped.is_none() {
            self.stop_with(CancelReason::MaxFails, out);
        }
    }

    /// Whether some current worker could run attempt `attempt` of group `g`
    /// (true while there are no workers: they may come).
    fn attempt_fits(&self, g: usize, attempt: u32) -> bool {
        let group = &self.groups[g];
        if !group.settings().grows_with_attempt() || self.workers.iter().all(Option::is_none) {
            return true;
        }
        let requests: Vec<_> = group.settings().requests(attempt).iter().map(|r| r.resources(&self.names)).collect();
        self.workers.iter().flatten().any(|w| {
            let capacity = w.capacity();
            requests.iter().any(|r| capacity.fits(r))
        })
    }

    /// Cancels every pending task that depends on `root`, transitively,
    /// for `why`: single instances through element-wise and explicit edges,
    /// whole groups through `All` edges.
    pub(super) fn cancel_dependents(&mut self, root: TaskId, why: CancelReason, out: &mut impl Out) {
        let reason = TaskState::Cancelled(why);
        let mut work = vec![Cascade::Instance(root.group.index(), root.instance)];
        while let Some(step) = work.pop() {
            let (g, instance) = match step {
                Cascade::Instance(g, i) => (g, Some(i)),
                Cascade::Group(g) => (g, None),
            };
            if let Some(i) = instance {
                let nested: Vec<usize> =
                    self.links[g].iter().filter(|l| matches!(l, Link::Parts { .. })).map(Link::to).collect();
                for to in nested {
                    // What waits for the whole nested group cannot run now.
                    for member in self.cancel_part(to, i, why, out) {
                        self.doom_waiting(member, &mut work);
                    }
                }
                for link in &self.links[g] {
                    let to = link.to();
                    for &t in link.dependents(&i, self.groups[to].count()) {
                        if link.any_end() {
                            // It waits for this instance to end, however.
                            self.groups[to].release(t);
                        } else if self.groups[to].end_pending(t, Instance::Cancelled) {
                            self.pending -= 1;
                            out.state(TaskId::new(Self::group_id(to), t), reason);
                            work.push(Cascade::Instance(to, t));
                        }
                    }
                }
            } else {
                let per_instance = self.links[g].iter().any(|l| l.is_per_instance());
                for t in 0..self.groups[g].count() {
                    if self.groups[g].end_pending(t, Instance::Cancelled) {
                        self.pending -= 1;
                        out.state(TaskId::new(Self::group_id(g), t), reason);
                        if per_instance {
                            work.push(Cascade::Instance(g, t));
                        }
                    }
                }
                if let TaskState::Cancelled(why) = reason {
                    self.cancel_deferred(g, why, out);
                    for m in self.cancel_parts(g, why, out) {
                        self.doom_waiting(m, &mut work);
                    }
                }
            }
            self.doom_waiting(g, &mut work);
            for l in 0..self.links[g].len() {
                let to = self.links[g][l].to();
                self.sync_active(to);
            }
            self.sync_active(g);
        }
    }

    /// Dooms the groups that wait for group `g` as a whole, which cannot
    /// fully succeed any more (not those waiting for it to end, however).
    fn doom_waiting(&mut self, g: usize, work: &mut Vec<Cascade>) {
        for l in 0..self.links[g].len() {
            let link = &self.links[g][l];
            let to = link.to();
            if link.any_end() {
                continue;
            }
            // A group whose instances are not known yet waits as a whole.
            let whole = !link.is_per_instance() || self.groups[to].is_deferred();
            if whole && self.groups[to].doom() {
                work.push(Cascade::Group(to));
            }
        }
    }
}
