//! Groups known only at run time ([`crate::ir::Domain::Deferred`]): each
//! counts as one pending placeholder until the tasks that write its
//! expansion file are done; then the driver reads the file and calls
//! [`Core::resolve`] with the graph that now holds the instances, or
//! [`Core::fail_deferred`] when the file cannot be expanded.

use crate::ir::{Graph, GroupId, TaskId};

use super::Core;
use crate::runtime::core::deps::{Deps, Link};
use crate::runtime::core::group_state::Instance;
use crate::runtime::core::out::{CancelReason, Out, TaskState};

impl Core {
    /// Groups whose instances can be read now: every task they wait for
    /// as a whole is done. Each is returned once.
    pub fn take_resolvable(&mut self) -> Vec<GroupId> {
        let mut groups = std::mem::take(&mut self.resolvable);
        groups.retain(|g| self.groups[g.index()].is_deferred());
        groups
    }

    /// Gives `groups` (a deferred group and its `for_each` mirrors) the
    /// instances `graph` now holds for them. Nothing of theirs has started:
    /// their states are built afresh, keeping what counts the groups they
    /// wait for as a whole. A group with no instances is done at once.
    pub fn resolve(&mut self, graph: &Graph, groups: &[GroupId]) {
        let mut deps = Deps::new(graph);
        let mut empty = Vec::new();
        for &id in groups {
            let g = id.index();
            if !self.groups[g].is_deferred() {
                continue;
            }
            let state = self.groups[g].resolved(graph.group(id), std::mem::take(&mut deps.remaining[g]));
            self.pending = self.pending - 1 + state.pending();
            if state.count() == 0 {
                empty.push(g);
            }
            self.groups[g] = state;
            self.links[g] = std::mem::take(&mut deps.links[g]);
        }
        for g in empty {
            self.release_all(g);
        }
        for &id in groups {
            self.sync_active(id.index());
        }
    }

    /// Releases what waits for group `g` as a whole, which is complete
    /// without any instance finishing (it has none, or its last part
    /// became known).
    pub(super) fn release_all(&mut self, g: usize) {
        for l in 0..self.links[g].len() {
            if let Link::All { to, any_end: false } = self.links[g][l] {
                self.source_done(to);
                self.sync_active(to);
            }
        }
        self.ended(g);
    }

    /// The expansion file of deferred group `id` could not be read: the
    /// group fails as one, and what waits for it is cancelled.
    pub fn fail_deferred(&mut self, id: GroupId, out: &mut impl Out) {
        if !self.groups[id.index()].end_deferred(Instance::Failed) {
            return;
        }
        self.pending -= 1;
        self.failed += 1;
        let whole = TaskId::whole(id);
        out.state(whole, TaskState::Failed);
        self.cancel_dependents(whole, CancelReason::DependencyFailed(whole), out);
    }

    /// Ends the placeholder of group `g`, if it has one, as cancelled.
    pub(super) fn cancel_deferred(&mut self, g: usize, reason: CancelReason, out: &mut impl Out) {
        if self.groups[g].end_deferred(Instance::Cancelled) {
            self.pending -= 1;
            out.state(TaskId::whole(Self::group_id(g)), TaskState::Cancelled(reason));
        }
    }
}
