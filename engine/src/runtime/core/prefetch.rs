//! Sending tasks ahead to workers across a network. Between one task ending
//! on a remote worker and the next one arriving, its slot would sit empty
//! for a round trip (the result travels to the coordinator, the next job
//! back). For a worker marked with [`Core::set_prefetch`], each running
//! task of the top-ranked ready group gets the next ready instance of that
//! group sent ahead on the same resources ([`super::Allocation::after`]);
//! the worker starts it the moment the first ends, and the resources pass
//! from one to the other without being freed.
//!
//! Only for groups marked short ([`Core::set_short`]): a round trip matters
//! next to a task of milliseconds, not next to one of minutes — and a long
//! task held ahead on a busy worker could wait there while another worker
//! idles.

use crate::ir::TaskId;

use super::out::Out;
use super::scheduler::{Core, Running};
use super::worker::WorkerId;

impl Core {
    /// Sends tasks ahead (or not) to worker `worker`.
    pub fn set_prefetch(&mut self, worker: WorkerId, prefetch: bool) {
        if let Some(w) = self.workers.get_mut(worker.0 as usize).and_then(Option::as_mut) {
            w.prefetch = prefetch;
        }
    }

    /// Marks group `group` as short: its instances may be sent ahead.
    pub fn set_short(&mut self, group: crate::ir::GroupId) {
        if let Some(g) = self.groups.get_mut(group.index()) {
            g.prefetch = true;
        }
    }

    /// Gives each running task on a prefetch worker, of the group that
    /// ranks first among those with ready instances, a successor. Only that
    /// group, so sending ahead never starts work out of rank order; and
    /// never for a group with several nodes or a `time_request` (its start
    /// is later than it looks).
    pub(super) fn prefetch(&mut self, out: &mut impl Out) {
        if self.stopped.is_some() {
            return;
        }
        let Some((g, _)) = self.order.next_active(0) else { return };
        let group = &self.groups[g];
        if !group.prefetch || group.nodes > 1 || group.variants.iter().any(|r| r.time.is_some()) {
            return;
        }
        let mut heads = std::mem::take(&mut self.heads);
        heads.retain(|head| {
            let Some(run) = self.running.get(head) else { return false };
            if run.next.is_some() || run.alloc.after.is_some() {
                return false;
            }
            if head.group.index() != g {
                return true;
            }
            let Some(i) = self.groups[g].take() else { return true };
            self.pending -= 1;
            let task = TaskId::new(Self::group_id(g), i);
            let (worker, mut alloc) = (run.worker, run.alloc.clone());
            alloc.after = Some(*head);
            let attempt = self.attempt_of(task);
            out.start(task, attempt, worker, &alloc);
            if let Some(run) = self.running.get_mut(head) {
                run.next = Some(task);
            }
            self.running.insert(task, Running { worker, attempt, alloc, next: None });
            false
        });
        self.heads = heads;
        self.sync_active(g);
    }
}
