//! The cache decided before dispatch: a group whose instances an earlier run
//! finished is *prechecked*. Its ready instances go to the driver first
//! ([`Core::take_unchecked`]), which compares each with its last success
//! without a worker; unchanged ones succeed there and then
//! ([`Core::on_checked`]), and only changed ones wait for a worker. A retry
//! or a lost task is not compared again: it started in this run.

use crate::ir::{GroupId, TaskId};

use super::Core;
use crate::runtime::core::out::{Out, TaskState};

impl Core {
    /// Compares the ready instances of `group` with an earlier run before
    /// they go to a worker. Call before scheduling.
    pub fn set_precheck(&mut self, group: GroupId) {
        let g = group.index();
        if self.groups[g].enable_precheck() {
            self.prechecked.push(g);
            self.sync_active(g);
        }
    }

    /// Ready instances of prechecked groups, each returned once, for the
    /// driver to compare; they start nowhere until [`Core::on_checked`].
    pub fn take_unchecked(&mut self) -> Vec<TaskId> {
        let mut tasks = Vec::new();
        if self.stopped.is_some() {
            return tasks;
        }
        for k in 0..self.prechecked.len() {
            let g = self.prechecked[k];
            while let Some(i) = self.groups[g].take_unchecked() {
                tasks.push(TaskId::new(Self::group_id(g), i));
            }
            self.sync_active(g);
        }
        tasks
    }

    /// `task` was compared with its last success: `unchanged`, it succeeds
    /// without running; otherwise it waits for a worker. A task cancelled
    /// in the meantime stays cancelled: then this returns false.
    pub fn on_checked(&mut self, task: TaskId, unchanged: bool, out: &mut impl Out) -> bool {
        let g = task.group.index();
        if !self.groups[g].checked(task.instance, unchanged) {
            return false;
        }
        if unchanged {
            self.pending -= 1;
            out.state(task, TaskState::Succeeded);
            self.release_dependents(task);
        }
        self.sync_active(g);
        true
    }
}
