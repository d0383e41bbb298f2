//! Skips: an instance whose `when` rendered false ([`TaskResult::Skipped`]
//! through [`Core::on_finished`]) did not run, and counts as done for what
//! waits on it. Along an element-wise or explicit edge the waiting instance
//! is skipped too, and so is the nested part it is the parent of; a group
//! waiting for whole groups runs once they are done, ignoring skipped
//! instances, and an instance of it is skipped only if every instance it
//! waits for was: every task it waits for as a whole ended with nothing of
//! it run, and it waits for no single instance. An edge that waits for a
//! failure, or for its source whatever happened, is released by a skip
//! instead.
//!
//! [`TaskResult::Skipped`]: super::TaskResult::Skipped

use crate::ir::TaskId;

use super::Core;
use crate::runtime::core::deps::Link;
use crate::runtime::core::group_state::{Instance, PartState};
use crate::runtime::core::out::{Out, SkipReason, TaskState};

/// A step of a skip cascade.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Instance `.1` of group `.0` was skipped: skip what waits for it.
    Instance(usize, u64),
    /// Group `.0` ended with nothing of it run, the last skip being `.1`:
    /// skip what waits for it as a whole.
    Group(usize, TaskId),
}

impl Core {
    /// Running `task` is skipped by its own condition: it frees nothing
    /// more than a finished run (the caller released it), and what waits on
    /// it is skipped or released.
    pub(super) fn skip(&mut self, task: TaskId, out: &mut impl Out) {
        let g = task.group.index();
        self.groups[g].finish(task.instance, Instance::Skipped);
        self.forget(task);
        out.state(task, TaskState::Skipped(SkipReason::Condition));
        let mut work = vec![Step::Instance(g, task.instance)];
        self.group_ended(g, task, &mut work);
        while let Some(step) = work.pop() {
            match step {
                Step::Instance(g, i) => self.skip_waiting_on(g, i, &mut work, out),
                Step::Group(g, why) => self.skip_waiting_on_group(g, why, &mut work, out),
            }
            self.sync_active(g_of(step));
        }
    }

    /// Skips the instances and parts that wait for skipped instance `i` of `g`.
    fn skip_waiting_on(&mut self, g: usize, i: u64, work: &mut Vec<Step>, out: &mut impl Out) {
        let why = TaskId::new(Self::group_id(g), i);
        let state = TaskState::Skipped(SkipReason::Upstream(why));
        for l in 0..self.links[g].len() {
            let to = self.links[g][l].to();
            if matches!(self.links[g][l], Link::All { .. }) {
                continue;
            }
            if matches!(self.links[g][l], Link::Parts { .. }) {
                for m in self.groups[to].members().to_vec() {
                    if self.groups[m].end_part(i, PartState::Skipped) {
                        self.pending -= 1;
                        out.state(TaskId::part(Self::group_id(m), i), state);
                        self.group_ended(m, why, work);
                    }
                }
                continue;
            }
            let dependents = self.links[g][l].dependents(&i, self.groups[to].count()).to_vec();
            let any_end = self.links[g][l].any_end();
            for t in dependents {
                if any_end {
                    // It waits for this instance to end, however.
                    self.groups[to].release(t);
                } else if self.groups[to].end_pending(t, Instance::Skipped) {
                    self.pending -= 1;
                    out.state(TaskId::new(Self::group_id(to), t), state);
                    work.push(Step::Instance(to, t));
                    self.group_ended(to, why, work);
                }
            }
            self.sync_active(to);
        }
    }

    /// Group `g` ended with nothing of it run (`why` is its last skip): a
    /// group waiting for the whole of it skips the instances that wait for
    /// nothing but skipped ones — once every task it waits for as a whole
    /// ended so, those that wait for no single instance — and releases the rest.
    fn skip_waiting_on_group(&mut self, g: usize, why: TaskId, work: &mut Vec<Step>, out: &mut impl Out) {
        let state = TaskState::Skipped(SkipReason::Upstream(why));
        for l in 0..self.links[g].len() {
            let link = &self.links[g][l];
            let (to, whole) = (link.to(), !link.is_per_instance());
            // A group whose instances are not known yet waits as a whole;
            // one waiting for `g` to end, however, is released by `ended`.
            if link.any_end() || (!whole && !self.groups[to].is_deferred()) {
                continue;
            }
            let Some(skip) = self.only_skipped_upstream(to) else {
                if whole {
                    self.source_done(to);
                    self.sync_active(to);
                }
                continue;
            };
            let mut ended = false;
            for t in (0..self.groups[to].count()).filter(|&t| skip[t as usize]) {
                if self.groups[to].end_pending(t, Instance::Skipped) {
                    self.pending -= 1;
                    out.state(TaskId::new(Self::group_id(to), t), state);
                    work.push(Step::Instance(to, t));
                    ended = true;
                }
            }
            if skip.iter().all(|&s| s) {
                if self.groups[to].end_deferred(Instance::Skipped) {
                    self.pending -= 1;
                    out.state(TaskId::whole(Self::group_id(to)), state);
                    ended = true;
                }
                for outer in 0..self.groups[to].part_count() {
                    if self.groups[to].end_part(outer, PartState::Skipped) {
                        self.pending -= 1;
                        out.state(TaskId::part(Self::group_id(to), outer), state);
                        ended = true;
                    }
                }
            } else if whole {
                // The others wait for single instances too: they decide.
                self.source_done(to);
            }
            if ended {
                self.group_ended(to, why, work);
            }
            self.sync_active(to);
        }
    }

    /// Which instances of group `to` wait for nothing but skipped
    /// instances, by position: `None` while a task it waits for as a
    /// whole has not ended with nothing of it run, or when its instances
    /// follow parent instances (a per-instance fan-out). An instance that
    /// waits for a single instance is not one of them: it follows that
    /// instance, skipped with it.
    fn only_skipped_upstream(&self, to: usize) -> Option<Vec<bool>> {
        let (count, deferred) = (self.groups[to].count(), self.groups[to].is_deferred());
        let mut skip = vec![true; count as usize];
        for (from, links) in self.links.iter().enumerate() {
            for link in links.iter().filter(|l| l.to() == to && !l.any_end()) {
                match link {
                    Link::Parts { .. } => return None,
                    Link::All { .. } if !self.groups[from].is_all_skipped() => return None,
                    Link::All { .. } => {}
                    _ if deferred && !self.groups[from].is_all_skipped() => return None,
                    _ => {
                        for s in 0..self.groups[from].count() {
                            link.dependents(&s, count).iter().for_each(|&t| skip[t as usize] = false);
                        }
                    }
                }
            }
        }
        Some(skip)
    }

    /// Something of group `g` just ended by a skip (the last being `why`):
    /// if that made the group complete, what waits for all of it is
    /// released — or skipped, when nothing of the group ran.
    fn group_ended(&mut self, g: usize, why: TaskId, work: &mut Vec<Step>) {
        if self.groups[g].is_all_skipped() {
            work.push(Step::Group(g, why));
        } else if self.groups[g].is_complete() {
            for l in 0..self.links[g].len() {
                if let Link::All { to, any_end: false } = self.links[g][l] {
                    self.source_done(to);
                    self.sync_active(to);
                }
            }
        }
    }
}

/// The group a step is about.
fn g_of(step: Step) -> usize {
    match step {
        Step::Instance(g, _) | Step::Group(g, _) => g,
    }
}
