//! The end of an attempt, for the books: whether its failure is one the
//! task retries (`retry_on`), the counts of the run's summary, why it is
//! not retried, and its journal records — the end of the attempt, and
//! when a retry that waits may start.

use super::Driver;
use crate::ir::{Failure, RetryOn, TaskId};
use crate::log::{AttemptMetrics, JournalEvent, JournalRecord, Wrote};
use crate::runtime::Event;
use crate::runtime::core::{Retry, TaskResult};
use crate::runtime::protocol::outcome::{Outcome, Status};

impl Driver {
    /// Counts how an attempt of `task` ended as `status`, and says what
    /// the core is told: a failure the task's `retry_on` does not list is
    /// not retried.
    pub(super) fn count_end(&mut self, task: TaskId, status: &Status) -> TaskResult {
        match status {
            Status::Succeeded => {
                self.summary.succeeded += 1;
                TaskResult::Succeeded
            }
            Status::Cached => {
                self.summary.cached += 1;
                TaskResult::Succeeded
            }
            Status::Failed { exit_code, signal, reason } => {
                let failure = Failure::of(*exit_code, *signal, reason);
                if RetryOn::retries(&self.graph().group(task.group).retry_on, failure) {
                    TaskResult::Failed
                } else {
                    TaskResult::NotRetryable
                }
            }
            Status::Stopped => {
                self.stopped.insert(task);
                self.summary.cancelled += 1;
                TaskResult::Failed
            }
        }
    }

    /// Journals how attempt `attempt` of `task` ended at `now` (taking the
    /// outputs it wrote, and adding to a failure's reason why it is not
    /// retried), with its `metrics`, and, when it waits to be retried,
    /// from when its next attempt may start.
    pub(super) fn record_end(
        &mut self,
        task: TaskId,
        attempt: u32,
        outcome: &mut Outcome,
        now: u64,
        retry: Retry,
        metrics: Option<Box<AttemptMetrics>>,
    ) {
        not_retried(retry, self.graph().group(task.group).continue_on_failure, &mut outcome.status);
        let fingerprint = outcome.fingerprint.unwrap_or_default();
        let variant = metrics.as_ref().map_or(0, |m| m.variant);
        let wrote = Wrote { variant, outputs: Some(std::mem::take(&mut outcome.outputs)) };
        let journal = match &outcome.status {
            Status::Succeeded => JournalEvent::Succeeded { fingerprint, wrote },
            Status::Cached => JournalEvent::Cached { fingerprint, wrote },
            Status::Failed { exit_code, signal, reason } => {
                if !retry.runs_again() {
                    self.failures.failed(task, self.factory.label(task), *exit_code, *signal, reason);
                }
                JournalEvent::Failed { exit_code: *exit_code, signal: *signal, reason: reason.clone() }
            }
            Status::Stopped => JournalEvent::Cancelled { reason: "interrupted".to_owned() },
        };
        self.recorder.record(JournalRecord { metrics, ..JournalRecord::new(now, task, attempt, journal) });
        if let (Status::Succeeded, Some(files)) = (&outcome.status, outcome.reads.take()) {
            self.recorder.journal(task, attempt, JournalEvent::Read { files });
        }
        if let (Status::Succeeded, Some(file)) = (&outcome.status, outcome.untrusted.take()) {
            let label = self.factory.label(task);
            let message =
                format!("`{file}` changed while {label} ran: its result is not trusted, and it runs again next time");
            self.recorder.event(Event::Warning { message });
            self.recorder.journal(task, attempt, JournalEvent::Untrusted { file });
        }
        match retry {
            Retry::Delayed { until_us, .. } => {
                self.recorder.journal(task, attempt, JournalEvent::RetryAt { until_us });
                self.ready.ready_again(task, until_us);
            }
            Retry::Retrying { .. } => self.ready.ready_again(task, now),
            _ => self.ready.ended(task, now),
        }
    }
}

/// Adds to a failure's reason why the core does not retry it, when that is
/// not plain (out of attempts, or the run stopping), and that it is
/// ignored when its task has `continue_on_failure` (`ignores`).
fn not_retried(retry: Retry, ignores: bool, status: &mut Status) {
    let Status::Failed { reason, .. } = status else { return };
    let mut add = |note: &str| *reason = if reason.is_empty() { note.to_owned() } else { format!("{reason}; {note}") };
    match retry {
        Retry::TooBig { attempt } => add(&format!("not retried: attempt {attempt} asks for more than any worker has")),
        Retry::NotRetryable => add("not retried: retry_on does not list it"),
        _ => {}
    }
    if ignores && !retry.runs_again() {
        add("ignored (continue_on_failure)");
    }
}
