//! The driver's side of the cache decided before dispatch: each ready
//! instance of a group an earlier run finished is compared with its last
//! success here, on the coordinator, before any worker is sought. Hashing
//! input files runs off the loop, a few files at a time; an instance whose
//! fingerprint matches and whose outputs exist is recorded as unchanged
//! without a worker, so a rerun with nothing to do needs none, and a queue
//! submits nothing while comparisons are still under way.

use std::collections::VecDeque;

use super::driver::{Collect, Driver, DriverEvent};
use crate::ir::TaskId;
use crate::log::JournalEvent;
use crate::runtime::core::Allocation;
use crate::runtime::event::Event;
use crate::runtime::protocol::fingerprint::{Fingerprint, fingerprint, missing_output};
use crate::runtime::protocol::job::Job;
use crate::runtime::protocol::worker::Status;

/// How many instances' inputs are hashed at once.
const PARALLEL_HASHES: usize = 4;

/// Comparisons waiting for a hashing thread, and how many are running.
#[derive(Default)]
pub(super) struct Checks {
    waiting: VecDeque<(TaskId, Job, Fingerprint)>,
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
            // Rendered as its first variant would run it: the fingerprint
            // covers the command, which may name its resources.
            let job = match self.factory.job(task, 0, &Allocation::default()) {
                Ok(job) => job,
                Err(_) => {
                    // The worker's attempt reports the template error.
                    self.core.on_checked(task, false, out);
                    continue;
                }
            };
            let Some(previous) = self.previous.fingerprint(task, &job.label) else {
                self.core.on_checked(task, false, out);
                continue;
            };
            if job.inputs.is_empty() {
                let unchanged = compare(&job, previous);
                self.checked(task, unchanged, out);
            } else {
                self.checks.waiting.push_back((task, job, previous));
            }
        }
        self.start_hashing();
    }

    /// Starts hashing waiting instances' inputs, up to [`PARALLEL_HASHES`] at once.
    fn start_hashing(&mut self) {
        while self.checks.running < PARALLEL_HASHES {
            let Some((task, job, previous)) = self.checks.waiting.pop_front() else { break };
            self.checks.running += 1;
            let tx = self.self_tx.clone();
            tokio::task::spawn_blocking(move || {
                let unchanged = compare(&job, previous);
                let _ = tx.send(DriverEvent::Checked { task, unchanged });
            });
        }
    }

    /// A hashing thread compared `task`.
    pub(super) fn hashed(&mut self, task: TaskId, unchanged: Option<Fingerprint>, out: &mut Collect) {
        self.checks.running -= 1;
        self.checked(task, unchanged, out);
        self.start_hashing();
    }

    /// Acts on a comparison: an unchanged instance is recorded as such.
    fn checked(&mut self, task: TaskId, unchanged: Option<Fingerprint>, out: &mut Collect) {
        if !self.core.on_checked(task, unchanged.is_some(), out) {
            return;
        }
        let Some(fingerprint) = unchanged else { return };
        self.summary.cached += 1;
        self.journal(task, 0, JournalEvent::Cached { fingerprint });
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

/// The job's fingerprint if it matches `previous` and its outputs exist.
fn compare(job: &Job, previous: Fingerprint) -> Option<Fingerprint> {
    let fp = fingerprint(job);
    (fp == previous && missing_output(job).is_none()).then_some(fp)
}
