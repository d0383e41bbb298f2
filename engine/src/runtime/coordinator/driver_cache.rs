//! The driver's side of the cache decided before dispatch: each ready
//! instance of a group an earlier run finished is compared with its last
//! success here, on the coordinator, before any worker is sought. Hashing
//! input files runs off the loop, a few files at a time; an instance whose
//! fingerprint matches and whose outputs exist is recorded as unchanged
//! without a worker, so a rerun with nothing to do needs none, and a queue
//! submits nothing while comparisons are still under way.

use std::collections::VecDeque;

use super::cache_lookup::{Lookup, candidates, lookup};
use super::driver::{Collect, Driver, DriverEvent};
use crate::ir::TaskId;
use crate::log::JournalEvent;
use crate::runtime::event::Event;
use crate::runtime::protocol::job::Job;
use crate::runtime::protocol::worker::Status;

/// How many instances' inputs are hashed at once.
const PARALLEL_HASHES: usize = 4;

/// Comparisons waiting for a hashing thread, and how many are running.
#[derive(Default)]
pub(super) struct Checks {
    waiting: VecDeque<(TaskId, Vec<Job>)>,
    running: usize,
}

impl Checks {
    /// Whether no comparison is waiting or running.
    pub(super) fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.running == 0
    }
}

impl Driver {
    /// Compares every newly ready instance of a prechecked group.
    pub(super) fn check_ready(&mut self, out: &mut Collect) {
        for task in self.core.take_unchecked() {
            // Rendered in the variants earlier successes ran in: the
            // fingerprint covers the command, which may name its resources.
            let jobs = candidates(&self.factory, &self.previous, task);
            if jobs.is_empty() || self.dry_upstream(task) {
                self.core.on_checked(task, false, out);
            } else if jobs.iter().all(|job| job.inputs.is_empty() && job.implicit.is_empty()) {
                let found = lookup(&jobs, &self.previous, &self.graph().group(task.group).name, &self.hidden);
                self.checked(task, found, out);
            } else {
                self.checks.waiting.push_back((task, jobs));
            }
        }
        self.start_hashing();
    }

    /// Under `--dry-exec`, whether an instance `task` waits for "ran" in
    /// this run: its outputs would have changed, so `task` would run too.
    fn dry_upstream(&self, task: TaskId) -> bool {
        self.options.dry_exec
            && self.graph().upstream(task).iter().any(|up| {
                let Some(ran) = self.dry_ran.get(&up.group) else { return false };
                if (ran.len() as u64) < up.count() {
                    ran.iter().any(|p| up.instances.iter().any(|r| r.contains(p)))
                } else {
                    up.positions().any(|p| ran.contains(&p))
                }
            })
    }

    /// Starts hashing waiting instances' inputs, up to [`PARALLEL_HASHES`] at once.
    fn start_hashing(&mut self) {
        while self.checks.running < PARALLEL_HASHES {
            let Some((task, jobs)) = self.checks.waiting.pop_front() else { break };
            self.checks.running += 1;
            let tx = self.self_tx.clone();
            let (previous, hidden) = (self.previous.clone(), self.hidden.clone());
            let name = self.graph().group(task.group).name.clone();
            tokio::task::spawn_blocking(move || {
                let found = lookup(&jobs, &previous, &name, &hidden);
                let _ = tx.send(DriverEvent::Checked { task, found });
            });
        }
    }

    /// A hashing thread compared `task`.
    pub(super) fn hashed(&mut self, task: TaskId, found: Lookup, out: &mut Collect) {
        self.checks.running -= 1;
        self.checked(task, found, out);
        self.start_hashing();
    }

    /// Acts on a comparison: an unchanged instance is recorded as such.
    fn checked(&mut self, task: TaskId, found: Lookup, out: &mut Collect) {
        let unchanged = matches!(found, Lookup::Unchanged { .. });
        if !self.core.on_checked(task, unchanged, out) {
            return;
        }
        let Lookup::Unchanged { fingerprint, wrote } = found else { return };
        self.summary.cached += 1;
        self.journal(task, 0, JournalEvent::Cached { fingerprint, wrote });
        let location = self.source_location(self.graph().group(task.group).span.start);
        self.event_batch.push(Event::TaskFinished {
            task,
            label: self.factory.label(task),
            attempt: 0,
            status: Status::Cached,
            retrying: false,
            duration: std::time::Duration::ZERO,
            stderr_tail: String::new(),
            location,
        });
    }
}
