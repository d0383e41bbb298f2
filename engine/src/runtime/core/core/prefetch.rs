//! Sending tasks ahead to workers across a network. Between one task ending
//! on a remote worker and the next one arriving, its slot would sit empty
//! for a round trip (the result travels to the coordinator, the next job
//! back). For a worker marked with [`Core::set_prefetch`], each running
//! task of the top-ranked ready group gets the next ready instance of that
//! group sent ahead on the same resources ([`super::Allocation::after`]);
//! the worker starts it the moment the first ends, and the resources pass
//! from one to the other without being freed. The line behind each running
//! task is as deep as [`Core::set_short`] said for the group.
//!
//! Only for groups marked short: a round trip matters next to a task of
//! milliseconds, not next to one of minutes — and a long task held ahead on
//! a busy worker could wait there while another worker idles.
//!
//! The lines of all workers together hold about [`LINE_BUDGET`] tasks: each
//! worker's lines are cut to its share, though never under one task. Many
//! big workers keep the coordinator busy with their running tasks alone,
//! and tasks in line past what it hands out in a round trip only cost
//! memory and time on both sides.

use crate::ir::TaskId;

use super::{Core, Running};
use crate::runtime::core::out::Out;
use crate::runtime::core::worker_id::WorkerId;

/// About how many tasks wait in line on all workers together.
const LINE_BUDGET: u32 = 16_384;

impl Core {
    /// Sends tasks ahead (or not) to worker `worker`.
    pub fn set_prefetch(&mut self, worker: WorkerId, prefetch: bool) {
        if let Some(w) = self.workers.get_mut(worker.0 as usize).and_then(Option::as_mut) {
            w.prefetch = prefetch;
        }
        self.share_lines();
    }

    /// Gives each prefetch worker its share of [`LINE_BUDGET`], as the
    /// deepest line behind one of its running tasks; called when the
    /// workers change.
    pub(super) fn share_lines(&mut self) {
        let prefetching = self.workers.iter().flatten().filter(|w| w.prefetch).count().max(1) as u32;
        for worker in self.workers.iter_mut().flatten() {
            let share = LINE_BUDGET / prefetching / worker.cpu_count();
            worker.line_cap = share.clamp(1, u32::from(u8::MAX)) as u8;
        }
    }

    /// Marks group `group` as short: up to `line` of its instances may be
    /// sent ahead behind each running one (0: none).
    pub fn set_short(&mut self, group: crate::ir::GroupId, line: u8) {
        let Some(g) = self.groups.get_mut(group.index()) else { return };
        let was = g.set_line(line);
        // Its tasks already running on prefetch workers may get a line now.
        if was == 0 && line > 0 {
            let workers = &self.workers;
            let prefetching =
                |w: WorkerId| workers.get(w.0 as usize).and_then(Option::as_ref).is_some_and(|w| w.prefetch);
            let holders = self
                .running
                .iter()
                .filter(|(t, r)| t.group == group && r.alloc.after.is_none() && prefetching(r.worker));
            self.heads.extend(holders.map(|(t, _)| *t));
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
        let line = group.line();
        // Nor for one whose requests grow with the attempt: a retry sent
        // ahead would get its predecessor's resources.
        let grows = group.settings().grows_with_attempt();
        if line == 0
            || group.settings().nodes > 1
            || grows
            || group.settings().variants.iter().any(|r| r.time.is_some())
        {
            return;
        }
        // `heads` holds the tasks holding resources whose line may grow; the
        // holder knows its line's last task and length, so a line grows,
        // and moves up when its holder ends, without being walked.
        let mut heads = std::mem::take(&mut self.heads);
        // Each pass lengthens every line by one, up to the group's depth.
        for _ in 0..line {
            if !self.groups[g].is_active() {
                break;
            }
            heads.retain(|&head| {
                let Some(run) = self.running.get(&head) else { return false };
                let cap = self.workers.get(run.worker.0 as usize).and_then(Option::as_ref).map_or(0, |w| w.line_cap);
                if run.alloc.after.is_some() || run.behind >= line.min(cap) {
                    return false;
                }
                if head.group.index() != g {
                    return true;
                }
                let Some(i) = self.groups[g].take() else { return true };
                self.pending -= 1;
                let task = TaskId::new(Self::group_id(g), i);
                let (worker, tail) = (run.worker, run.tail);
                // Reuse a finished task's buffers, as matching does.
                let mut alloc = self.spare.pop().unwrap_or_default();
                alloc.clone_from(&run.alloc);
                alloc.after = Some(tail);
                let attempt = self.attempt_of(task);
                out.start(task, attempt, worker, &alloc);
                if let Some(run) = self.running.get_mut(&tail) {
                    run.next = Some(task);
                }
                if let Some(run) = self.running.get_mut(&head) {
                    run.tail = task;
                    run.behind += 1;
                }
                self.running.insert(task, Running::new(task, worker, attempt, alloc));
                true
            });
        }
        self.heads = heads;
        self.sync_active(g);
    }

    /// A task in line ended without starting: the ones behind it move up.
    pub(super) fn leave_line(&mut self, run: &Running) {
        let before = run.alloc.after;
        if let Some(b) = before.and_then(|b| self.running.get_mut(&b)) {
            b.next = run.next;
        }
        if let Some(first) = run.next.and_then(|n| self.running.get_mut(&n)) {
            first.alloc.after = before;
        }
        // The task holding the resources is found back along the line.
        let mut holder = before;
        while let Some(after) = holder.and_then(|h| self.running.get(&h)).and_then(|r| r.alloc.after) {
            holder = Some(after);
        }
        let Some(head) = holder else { return };
        if let Some(h) = self.running.get_mut(&head) {
            h.behind = h.behind.saturating_sub(1);
            if run.next.is_none() {
                // It was the last in line: the one before it is now.
                h.tail = before.unwrap_or(head);
            }
            self.heads.push(head);
        }
    }

    /// `ended` held the resources and `next` was sent ahead behind it:
    /// `next` now holds them, with the rest of the line behind it.
    pub(super) fn hand_over(&mut self, next: TaskId, ended: &Running) {
        if let Some(run) = self.running.get_mut(&next) {
            run.alloc.after = None;
            run.tail = ended.tail;
            run.behind = ended.behind.saturating_sub(1);
            self.heads.push(next);
        }
    }
}
