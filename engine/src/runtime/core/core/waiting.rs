//! Instances waiting to be retried: a failed attempt whose task has a
//! `retry_delay` waits, holding no worker, until its time; the core has no
//! clock, so the driver passes the time to [`Core::schedule`] and wakes it
//! at [`Core::next_wake_us`].

use std::cmp::Reverse;

use crate::ir::TaskId;

use super::Core;

impl Core {
    /// Makes every instance whose wait ended by `now_us` ready.
    pub(super) fn wake_due(&mut self, now_us: u64) {
        while let Some(&Reverse((until_us, task))) = self.waiting.peek() {
            if until_us > now_us {
                break;
            }
            self.waiting.pop();
            let g = task.group.index();
            if self.groups[g].wake(task.instance) {
                self.sync_active(g);
            }
        }
    }

    /// When the earliest waiting instance may start (µs since the Unix
    /// epoch), if one waits; the driver calls [`Core::schedule`] then.
    pub fn next_wake_us(&self) -> Option<u64> {
        self.waiting.peek().map(|r| r.0.0)
    }

    /// Puts `task`, waiting to run again as attempt `attempt` of this run,
    /// in line for `until_us`.
    pub(super) fn wait(&mut self, task: TaskId, until_us: u64) {
        self.waiting.push(Reverse((until_us, task)));
    }

    /// Resuming: pending `task` keeps the schedule of the run before, which
    /// failed it and meant to retry it at `until_us`; it starts no earlier.
    /// Call before scheduling; false (and nothing done) unless `task` is pending.
    pub fn wait_until(&mut self, task: TaskId, until_us: u64) -> bool {
        let g = task.group.index();
        if !self.groups.get_mut(g).is_some_and(|group| group.delay_pending(task.instance)) {
            return false;
        }
        self.sync_active(g);
        self.wait(task, until_us);
        true
    }

    /// Held `task` need wait no longer (nobody can bring it back): it is
    /// ready at once, its dependencies done. False unless it waits.
    pub fn end_wait(&mut self, task: TaskId) -> bool {
        let g = task.group.index();
        if !self.groups.get_mut(g).is_some_and(|group| task.instance < group.count() && group.wake(task.instance)) {
            return false;
        }
        self.sync_active(g);
        true
    }
}
