//! [`Core::unschedulable`]: groups that no current worker could ever run,
//! each with a reason a user can act on, and [`Core::cancel_unschedulable`].

use crate::ir::{GroupId, Resources, TaskId};

use super::Core;
use crate::resources::{Capacity, Holder, Shortfall, Unfit};
use crate::runtime::core::group_state::{GroupState, Instance};
use crate::runtime::core::out::{CancelReason, Out, TaskState};

impl Core {
    /// Groups with tasks left to run none of whose variants fits the total
    /// resources of any current worker (or that need more nodes than there
    /// are fitting workers), each with why, such as
    /// "needs 2 gpus, the largest worker has 0".
    pub fn unschedulable(&self) -> Vec<(GroupId, Unfit)> {
        self.find_unschedulable(true)
    }

    /// Like [`Core::unschedulable`], but only groups no single current
    /// worker could run (whatever their node count): more workers of the
    /// same kind would not help them.
    pub fn unfit(&self) -> Vec<(GroupId, Unfit)> {
        self.find_unschedulable(false)
    }

    fn find_unschedulable(&self, count_nodes: bool) -> Vec<(GroupId, Unfit)> {
        let workers: Vec<Capacity> = self.workers.iter().flatten().map(|w| w.capacity()).collect();
        let mut found = Vec::new();
        for (g, group) in self.groups.iter().enumerate() {
            if group.pending() == 0 {
                continue;
            }
            if let Some(reason) = self.reason(group, &workers, count_nodes) {
                found.push((Self::group_id(g), reason));
            }
        }
        found
    }

    /// Cancels the groups [`Core::unschedulable`] reports (state
    /// `Cancelled(Unschedulable)`) and everything that depends on them
    /// (`Cancelled(DependencyCancelled(..))`); returns them with their reasons.
    pub fn cancel_unschedulable(&mut self, out: &mut impl Out) -> Vec<(GroupId, Unfit)> {
        let found = self.unschedulable();
        let groups: Vec<GroupId> = found.iter().map(|(g, _)| *g).collect();
        self.cancel_groups(&groups, out);
        found
    }

    /// Cancels the pending instances of `groups`, which can never run
    /// (`Cancelled(Unschedulable)`), and everything that depends on them.
    pub fn cancel_groups(&mut self, groups: &[GroupId], out: &mut impl Out) {
        self.cancel_groups_for(groups, CancelReason::Unschedulable, out);
    }

    /// Cancels the pending instances of `groups` for `why` (they can never
    /// run, or their task reached its `max_fails`), and everything that
    /// depends on them.
    pub(super) fn cancel_groups_for(&mut self, groups: &[GroupId], why: CancelReason, out: &mut impl Out) {
        let mut cancelled = Vec::new();
        for id in groups {
            let g = id.index();
            self.groups[g].doom();
            for i in 0..self.groups[g].count() {
                if self.groups[g].end_pending(i, Instance::Cancelled) {
                    self.pending -= 1;
                    out.state(TaskId::new(*id, i), TaskState::Cancelled(why));
                    cancelled.push(TaskId::new(*id, i));
                }
            }
            if self.groups[g].is_deferred() {
                self.cancel_deferred(g, why, out);
                cancelled.push(TaskId::whole(*id));
            }
            for m in self.cancel_parts(g, why, out) {
                cancelled.push(TaskId::whole(Self::group_id(m)));
            }
            self.sync_active(g);
        }
        for task in cancelled {
            self.cancel_dependents(task, CancelReason::DependencyCancelled(task), out);
        }
    }

    /// Why no worker can run `group`, if none can.
    fn reason(&self, group: &GroupState, workers: &[Capacity], count_nodes: bool) -> Option<Unfit> {
        if workers.is_empty() {
            return Some(Unfit::NoWorkers);
        }
        if group.settings().variants.is_empty() {
            return Some(Unfit::NoRequest);
        }
        let variants: Vec<Resources> = group.settings().variants.iter().map(|r| r.resources(&self.names)).collect();
        let nodes = if count_nodes { group.settings().nodes.max(1) as usize } else { 1 };
        let fitting = workers.iter().filter(|w| variants.iter().any(|r| w.fits(r))).count();
        if fitting >= nodes {
            return None;
        }
        if fitting > 0 {
            return Some(Unfit::TooFewWorkers { needs: nodes as u64, fitting, workers: workers.len() });
        }
        let shortfalls: Vec<Shortfall> = variants.iter().map(|r| Capacity::shortfall_among(workers, r)).collect();
        Some(Unfit::Short { shortfalls, holder: Holder::Largest })
    }
}
