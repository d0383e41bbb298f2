//! Nested groups ([`crate::ir::Domain::Nested`]): a part of instances per
//! instance of the parent group. Each part is a pending placeholder until
//! its parent instance has succeeded (and the group's `All` sources are
//! done); then the driver reads the part's file and calls
//! [`Core::add_part`]. A part whose parent fails is cancelled, and what
//! waits for the whole nested group with it.

use std::ops::Range;

use crate::ir::{Graph, GroupId, TaskId};

use super::Core;
use crate::runtime::core::deps::Link;
use crate::runtime::core::group_state::PartState;
use crate::runtime::core::out::{CancelReason, Out, TaskState};

impl Core {
    /// Sets up the parts of every nested group of `graph`.
    pub(super) fn expect_parts(&mut self, graph: &Graph) {
        for g in 0..self.groups.len() {
            let id = Self::group_id(g);
            let crate::ir::Domain::Nested { parent, .. } = graph.base_domain(id) else { continue };
            let parents = graph.group(*parent).count;
            self.groups[g].expect_parts(parents);
            self.pending += parents;
            self.groups[graph.base_group(id).index()].add_member(g);
        }
    }

    /// Parts whose files can be read now, as (nested group, parent
    /// instance). Each is returned once.
    pub fn take_parts(&mut self) -> Vec<(GroupId, u64)> {
        let mut parts = std::mem::take(&mut self.parts_ready);
        parts.retain(|&(g, outer)| self.groups[g.index()].read_part(outer));
        parts
    }

    /// Parent instance `outer` of nested group `to` succeeded.
    pub(super) fn parent_done(&mut self, to: usize, outer: u64) {
        let group = &mut self.groups[to];
        if group.parent_done(outer) && !group.is_blocked() {
            self.parts_ready.push((Self::group_id(to), outer));
        }
    }

    /// The `All` sources of nested group `g` are done: its ready parts can be read.
    pub(super) fn unblock_parts(&mut self, g: usize) {
        let ready = self.groups[g].ready_parts().map(|outer| (Self::group_id(g), outer));
        self.parts_ready.extend(ready);
    }

    /// Gives `members` (a nested group and its mirrors) the instances at
    /// `added`, which the file of parent instance `outer` gave; `graph`
    /// holds them already. A group complete with this part releases what
    /// waits for it.
    pub fn add_part(&mut self, members: &[GroupId], outer: u64, added: Range<u64>) {
        let n = added.end - added.start;
        for &id in members {
            let g = id.index();
            if !self.groups[g].end_part(outer, PartState::Known) {
                continue;
            }
            let deps = self.per_instance_sources(g);
            self.groups[g].add_instances(n, deps);
            self.pending = self.pending - 1 + n;
        }
        for &id in members {
            let g = id.index();
            if self.groups[g].is_complete() {
                self.release_all(g);
            }
            self.sync_active(g);
        }
    }

    /// How many per-instance edges each instance of group `g` waits on.
    fn per_instance_sources(&self, g: usize) -> u32 {
        let links = self.links.iter().flatten();
        links.filter(|l| l.to() == g && l.is_per_instance() && !matches!(l, Link::Parts { .. })).count() as u32
    }

    /// The part of parent instance `outer` of nested group `to` will never
    /// be known; the groups that share it, to be doomed.
    pub(super) fn cancel_part(&mut self, to: usize, outer: u64, why: CancelReason, out: &mut impl Out) -> Vec<usize> {
        let members = self.groups[to].members().to_vec();
        let mut ended = Vec::new();
        for g in members {
            if self.groups[g].end_part(outer, PartState::Cancelled) {
                self.pending -= 1;
                out.state(TaskId::part(Self::group_id(g), outer), TaskState::Cancelled(why));
                ended.push(g);
            }
        }
        ended
    }

    /// The file of part `outer` of nested group `base` could not be read:
    /// the part fails as one (its mirrors' parts are cancelled), and what
    /// waits for the whole group is cancelled.
    pub fn fail_part(&mut self, base: GroupId, outer: u64, out: &mut impl Out) {
        let part = TaskId::part(base, outer);
        if !self.groups[base.index()].end_part(outer, PartState::Failed) {
            return;
        }
        self.pending -= 1;
        self.failed += 1;
        out.state(part, TaskState::Failed);
        let why = CancelReason::DependencyFailed(part);
        let members = self.groups[base.index()].members().to_vec();
        for &g in members.iter().filter(|&&g| g != base.index()) {
            if self.groups[g].end_part(outer, PartState::Cancelled) {
                self.pending -= 1;
                out.state(TaskId::part(Self::group_id(g), outer), TaskState::Cancelled(why));
            }
        }
        for g in members {
            self.cancel_dependents(TaskId::part(Self::group_id(g), outer), why, out);
        }
    }

    /// Cancels every part not known yet of group `g` — and, for a nested
    /// group, of its mirrors, which cannot get parts without it — (the
    /// group is cancelled, or the run stopped); returns the groups that had one.
    pub(super) fn cancel_parts(&mut self, g: usize, why: CancelReason, out: &mut impl Out) -> Vec<usize> {
        let family = if self.groups[g].members().is_empty() { vec![g] } else { self.groups[g].members().to_vec() };
        let mut ended = Vec::new();
        for m in family {
            for outer in 0..self.groups[m].part_count() {
                if self.groups[m].end_part(outer, PartState::Cancelled) {
                    self.pending -= 1;
                    out.state(TaskId::part(Self::group_id(m), outer), TaskState::Cancelled(why));
                    if ended.last() != Some(&m) {
                        ended.push(m);
                    }
                }
            }
        }
        ended
    }
}
