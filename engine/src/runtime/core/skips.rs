//! Skips: an instance whose `when` rendered false ([`TaskResult::Skipped`]
//! through [`Core::on_finished`]) did not run, and counts as done for what
//! waits on it. Along an element-wise or explicit edge the waiting instance
//! is skipped too, and so is the nested part it is the parent of; a group
//! waiting for a whole group runs once that group is done, unless every
//! instance of it was skipped: then it is skipped as a whole. An edge that
//! waits for a failure, or for its source whatever happened, is released
//! by a skip instead.
//!
//! [`TaskResult::Skipped`]: super::TaskResult::Skipped

use crate::ir::TaskId;

use super::core::Core;
use super::deps::Link;
use super::group_state::{Instance, PartState};
use super::out::{Out, SkipReason, TaskState};

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
                for m in self.groups[to].members.clone() {
                    if self.groups[m].end_part(i, PartState::Skipped) {
                        self.pending -= 1;
                        out.state(TaskId::part(Self::group_id(m), i), state);
                        self.group_ended(m, why, work);
                    }
                }
                continue;
            }
            let dependents = self.links[g][l].dependents(&i, self.groups[to].count).to_vec();
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

    /// Skips every group that waits for the whole of `g`, nothing of which
    /// ran (`why` is its last skip), and everything of such a group.
    fn skip_waiting_on_group(&mut self, g: usize, why: TaskId, work: &mut Vec<Step>, out: &mut impl Out) {
        let state = TaskState::Skipped(SkipReason::Upstream(why));
        for l in 0..self.links[g].len() {
            let link = &self.links[g][l];
            let to = link.to();
            // A group whose instances are not known yet waits as a whole;
            // one waiting for `g` to end, however, is released by `ended`.
            if link.any_end() || (link.is_per_instance() && !self.groups[to].deferred) {
                continue;
            }
            let mut ended = false;
            for t in 0..self.groups[to].count {
                if self.groups[to].end_pending(t, Instance::Skipped) {
                    self.pending -= 1;
                    out.state(TaskId::new(Self::group_id(to), t), state);
                    work.push(Step::Instance(to, t));
                    ended = true;
                }
            }
            if self.groups[to].end_deferred(Instance::Skipped) {
                self.pending -= 1;
                out.state(TaskId::whole(Self::group_id(to)), state);
                ended = true;
            }
            for outer in 0..self.groups[to].parts.len() as u64 {
                if self.groups[to].end_part(outer, PartState::Skipped) {
                    self.pending -= 1;
                    out.state(TaskId::part(Self::group_id(to), outer), state);
                    ended = true;
                }
            }
            if ended {
                self.group_ended(to, why, work);
            }
            self.sync_active(to);
        }
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
