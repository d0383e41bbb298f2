//! The states the core reports, as the run's books and events see them.

use super::Driver;
use crate::ir::{GroupId, TaskId};
use crate::log::JournalEvent;
use crate::runtime::core::{CancelReason, SkipReason, TaskState};
use crate::runtime::event::{Event, MoveReason};

impl Driver {
    /// Acts on a state the core reported for `task`: counts it, journals
    /// a cancellation or skip, and shows it.
    pub(super) fn state(&mut self, task: TaskId, state: TaskState) {
        match state {
            TaskState::Failed | TaskState::Ignored if self.stopped.contains(&task) => {}
            TaskState::Failed | TaskState::Ignored => {
                if state == TaskState::Failed {
                    self.summary.failed += 1;
                } else {
                    self.summary.ignored += 1;
                }
                self.settle_unsucceeded(task, MoveReason::Failed);
            }
            TaskState::Cancelled(reason) => {
                // As for skips: parts and groups whose instances were never
                // known are no instances, so the counts add up to the total.
                if task.is_instance() {
                    self.summary.cancelled += 1;
                }
                // A stopped run reads nothing more: what is left stays for the next one.
                if !matches!(reason, CancelReason::Stopped | CancelReason::MaxFails) {
                    self.settle_unsucceeded(task, MoveReason::Cancelled);
                }
                let stopped = matches!(reason, CancelReason::Stopped);
                let reason = self.cancel_reason(task, reason);
                // Labelled only where a later task reads it: Ctrl-C cancels millions at once.
                self.failures.cancelled(task, || self.factory.label(task), &reason);
                // After a storage failure the journal's last space is kept
                // for what matters: instances that ended, and lost output.
                // An instance that never started needs no record to resume,
                // nor does a group whose instances were never known.
                if (self.summary.io_errors.is_empty() || !stopped) && task.is_instance() {
                    self.recorder.journal(task, 0, JournalEvent::Cancelled { reason: reason.clone() });
                }
                self.recorder.event(Event::TaskCancelled { task, label: self.factory.label(task), reason });
            }
            TaskState::Skipped(why) => {
                self.settle_unsucceeded(task, MoveReason::Skipped);
                // Parts and groups whose instances were never known are no instances.
                if task.is_instance() {
                    self.summary.skipped += 1;
                }
                if let SkipReason::Upstream(up) = why {
                    let reason = format!("{} was skipped", self.factory.label(up));
                    if task.is_instance() {
                        self.recorder.journal(task, 0, JournalEvent::Skipped { reason: reason.clone() });
                    }
                    let (label, location) = (self.factory.label(task), self.location(task));
                    self.recorder.event(Event::TaskSkipped { task, label, reason, location });
                }
            }
            TaskState::Succeeded | TaskState::Retrying { .. } | TaskState::Delayed { .. } => {}
        }
    }

    /// `count` instances of `group` that never started were cancelled
    /// together: counted, journaled and shown once for all of them. They
    /// never ran, so none has outputs to move aside, and nothing reads them
    /// any more (the run stopped).
    pub(super) fn cancelled_rest(&mut self, group: GroupId, count: u64, reason: CancelReason) {
        self.summary.cancelled += count;
        let stopped = matches!(reason, CancelReason::Stopped);
        let reason = self.cancel_reason(TaskId::whole(group), reason);
        // As for one instance: after a storage failure the journal's last
        // space is kept for what matters.
        if self.summary.io_errors.is_empty() || !stopped {
            let record = JournalEvent::CancelledRest { reason: reason.clone() };
            self.recorder.journal(TaskId::whole(group), 0, record);
        }
        let name = self.graph().group(group).name.clone();
        self.recorder.event(Event::RestCancelled { group, name, count, reason });
    }

    /// Why `task` was cancelled, in words.
    fn cancel_reason(&self, task: TaskId, reason: CancelReason) -> String {
        match reason {
            CancelReason::DependencyFailed(dep) => format!("{} failed", self.factory.label(dep)),
            CancelReason::DependencyCancelled(dep) if self.core.reached_max_fails(dep.group) => {
                format!("{} was cancelled: its task reached its max_fails", self.factory.label(dep))
            }
            CancelReason::DependencyCancelled(dep) => {
                format!("{} was cancelled: no worker can run it", self.factory.label(dep))
            }
            CancelReason::TaskMaxFails => "its task reached its max_fails".to_owned(),
            CancelReason::MaxFails => "--max-fails reached".to_owned(),
            CancelReason::Stopped => "interrupted".to_owned(),
            CancelReason::Unschedulable => {
                self.queue.why(task.group).unwrap_or("no worker can satisfy its resources").to_owned()
            }
        }
    }
}
