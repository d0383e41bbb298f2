//! Outputs moved aside ([`crate::runtime::coordinator::earlier::stale`]), as the
//! run goes: those of instances that no longer exist once their instances
//! are known; those an earlier success left for an instance that does not
//! succeed now, the moment that is known and before what waits for it is
//! released; and every declared output of an instance about to run. What
//! was moved is said once per step, one line per task and reason.

use super::Driver;
use crate::ir::{GroupId, TaskId};
use crate::runtime::coordinator::earlier::stale::{Moved, StaleOutputs};
use crate::runtime::event::{Event, MoveReason};
use crate::runtime::protocol::job::{Job, relative};

impl Driver {
    /// Moves aside the outputs of instances of `groups` (of one part of
    /// them, with `part`) that no longer exist, now that their instances
    /// are known and before any of them, or anything after them, runs;
    /// the first time, also what tasks dropped from the run left.
    pub(super) fn settle_stale(&mut self, groups: &[GroupId], part: Option<i64>) {
        if self.options.keep_stale_outputs {
            return;
        }
        let dir = self.run_dir.path.join("stale");
        let dry = self.options.dry_exec;
        let mut all = self.stale.settle_unfinished(self.factory.base_dir(), &dir, dry);
        all.extend(self.stale.settle_dropped(&self.factory, &dir, dry));
        all.extend(self.stale.settle(&self.factory, groups, part, &dir, dry));
        for moved in all {
            self.note_moved(moved);
        }
        self.say_moved();
    }

    /// `task` did not succeed in this run (`reason`): for an instance, what
    /// an earlier success left at its declared outputs is moved aside, and
    /// for one that failed whatever is there; for
    /// a group or part whose instances will never be known, what its
    /// earlier instances left.
    pub(super) fn settle_unsucceeded(&mut self, task: TaskId, reason: MoveReason) {
        if self.options.keep_stale_outputs {
            return;
        }
        let (dir, dry) = (self.run_dir.path.join("stale"), self.options.dry_exec);
        let moved = if task.is_instance() && reason == MoveReason::Failed {
            StaleOutputs::settle_failed(&self.factory, task, &dir, dry)
        } else if task.is_instance() {
            self.stale.settle_unsucceeded(&self.factory, task, reason, &dir, dry)
        } else {
            let part = task.part_of().and_then(|outer| match *self.graph().base_domain(task.group) {
                crate::ir::Domain::Nested { parent, .. } => Some(self.graph().index(parent, outer)),
                _ => None,
            });
            self.stale.settle_never_known(&self.factory, task.group, part, reason, &dir, dry)
        };
        if let Some(moved) = moved {
            self.note_moved(moved);
        }
    }

    /// `job` is about to run: what its declared outputs name is moved aside.
    pub(super) fn clear_outputs(&self, job: &Job) {
        if !self.options.keep_stale_outputs && !self.options.dry_exec {
            StaleOutputs::clear(&job.outputs, &self.options.base_dir, &self.run_dir.path.join("stale"));
        }
    }

    /// Keeps `moved` to be said; under `--dry-exec`, the cache compares as
    /// if the files were gone.
    fn note_moved(&mut self, moved: Moved) {
        if self.options.dry_exec {
            let base = &self.options.base_dir;
            self.checks.hide(moved.files.iter().map(|f| base.join(f)));
        }
        match self.moved.iter_mut().find(|m| m.task == moved.task && m.reason == moved.reason) {
            Some(m) => {
                m.labels.extend(moved.labels);
                m.files.extend(moved.files);
                m.changed.extend(moved.changed);
            }
            None => self.moved.push(moved),
        }
    }

    /// Says what was moved since the last time.
    pub(super) fn say_moved(&mut self) {
        let dir = self.run_dir.path.join("stale");
        let shown = relative(&dir, &self.options.base_dir).display().to_string();
        for Moved { task, reason, labels, files, changed } in std::mem::take(&mut self.moved) {
            let dry = self.options.dry_exec;
            self.recorder.event(Event::OutputsMoved { task, reason, labels, files, changed, dir: shown.clone(), dry });
        }
    }
}
