//! [`JournalState`]: the latest [`JournalEntry`] of every task instance, folded from
//! journal records. Resume asks it which instances already succeeded;
//! `flow log cat --failed` reads it. [`fold_attempt`] folds one attempt
//! instead, for `flow log list`.

use std::collections::BTreeMap;

use super::{AttemptMetrics, FileHashes, JournalEvent, JournalRecord, State, Wrote};
use crate::ir::{GroupId, TaskId};

/// The latest known state of one task instance: its last attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEntry {
    /// The last attempt seen (0 for the first).
    pub attempt: u32,
    /// Where that attempt got to.
    pub status: State,
    /// The worker it ran on.
    pub worker: Option<u32>,
    /// When it started, in µs since the Unix epoch.
    pub started_us: Option<u64>,
    /// When it became ready to start (see [`JournalEvent::Started`]).
    pub ready_us: Option<u64>,
    /// When it ended (succeeded, failed, was cancelled, cached or lost).
    pub ended_us: Option<u64>,
    /// The exit code of a failed attempt, if it exited.
    pub exit_code: Option<i32>,
    /// The signal that killed a failed attempt, if one did.
    pub signal: Option<i32>,
    /// The fingerprint of a succeeded or cached attempt.
    pub fingerprint: Option<[u8; 32]>,
    /// Why it failed or was cancelled.
    pub reason: Option<String>,
    /// The variant and outputs of a succeeded or cached attempt.
    pub wrote: Option<Wrote>,
    /// Where it ran and what it used, once it ended on a worker that reported it.
    pub metrics: Option<Box<AttemptMetrics>>,
    /// When the next attempt of a failed one may start (`retry_delay`),
    /// in µs since the Unix epoch.
    pub retry_at_us: Option<u64>,
    /// A file a succeeded attempt reads that changed while it ran: the
    /// success is not to be taken as done by a later run.
    pub untrusted: Option<String>,
    /// What each file a succeeded attempt read held; `None` when no
    /// record says (it reads no file, or the journal is older).
    pub reads: Option<FileHashes>,
}

impl JournalEntry {
    fn new(attempt: u32) -> Self {
        Self {
            attempt,
            status: State::Running,
            worker: None,
            started_us: None,
            ready_us: None,
            ended_us: None,
            exit_code: None,
            signal: None,
            fingerprint: None,
            reason: None,
            wrote: None,
            metrics: None,
            retry_at_us: None,
            untrusted: None,
            reads: None,
        }
    }

    /// Applies a record of this attempt.
    fn apply(&mut self, record: &JournalRecord) {
        let time = Some(record.time_us);
        match &record.event {
            JournalEvent::Started { worker, ready_us } => {
                (self.status, self.worker, self.started_us) = (State::Running, Some(*worker), time);
                self.ready_us = *ready_us;
            }
            JournalEvent::Succeeded { fingerprint, wrote } => {
                // Success means exit code 0 (and the declared outputs exist).
                (self.status, self.fingerprint, self.ended_us, self.exit_code) =
                    (State::Succeeded, Some(*fingerprint), time, Some(0));
                self.wrote = Some(wrote.clone());
            }
            JournalEvent::Cached { fingerprint, wrote } => {
                (self.status, self.fingerprint, self.ended_us) = (State::Cached, Some(*fingerprint), time);
                self.wrote = Some(wrote.clone());
            }
            JournalEvent::Failed { exit_code, signal, reason } => {
                (self.status, self.exit_code, self.signal) = (State::Failed, *exit_code, *signal);
                (self.reason, self.ended_us) = (Some(reason.clone()), time);
            }
            JournalEvent::Lost { worker } => {
                (self.status, self.worker, self.ended_us) = (State::Lost, Some(*worker), time);
            }
            JournalEvent::RetryAt { until_us } => self.retry_at_us = Some(*until_us),
            JournalEvent::Untrusted { file } => self.untrusted = Some(file.clone()),
            JournalEvent::Read { files } => self.reads = Some(files.clone()),
            JournalEvent::Skipped { reason } => {
                (self.status, self.reason, self.ended_us) = (State::Skipped, Some(reason.clone()), time);
            }
            JournalEvent::Cancelled { reason } | JournalEvent::CancelledRest { reason } => {
                (self.status, self.reason, self.ended_us) = (State::Cancelled, Some(reason.clone()), time);
            }
        }
        if record.metrics.is_some() {
            self.metrics.clone_from(&record.metrics);
        }
    }

    /// How long the attempt waited between becoming ready and starting
    /// (being dispatched to its worker), both by the coordinator's clock.
    pub fn queue_wait_us(&self) -> Option<u64> {
        Some(self.started_us?.saturating_sub(self.ready_us?))
    }

    /// How long the attempt ran, if it both started and ended.
    pub fn duration_us(&self) -> Option<u64> {
        Some(self.ended_us?.saturating_sub(self.started_us?))
    }
}

/// Folds the records of one attempt, in journal order, into its entry:
/// each attempt's last record wins, as in [`JournalState`] (a success whose
/// output was lost afterwards is failed), except a `cancelled` record for an
/// attempt that already ended: the one written for an instance stopped while
/// waiting to be retried names attempt 0.
pub fn fold_attempt(entry: &mut Option<JournalEntry>, r: &JournalRecord) {
    let entry = entry.get_or_insert_with(|| JournalEntry::new(r.attempt));
    if entry.ended_us.is_none() || !matches!(r.event, JournalEvent::Cancelled { .. }) {
        entry.apply(r);
    }
}

/// The latest state of every task instance that has a journal record, in
/// graph order, and of the instances of each group a `CancelledRest`
/// record cancelled without a record of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalState {
    tasks: BTreeMap<TaskId, JournalEntry>,
    rest: BTreeMap<GroupId, JournalEntry>,
}

impl JournalState {
    /// The state after `records`, applied in order.
    pub fn from_records(records: &[JournalRecord]) -> Self {
        let mut state = Self::default();
        records.iter().for_each(|r| state.apply(r));
        state
    }

    /// Applies one record. A record of a later attempt starts afresh; one of
    /// an earlier attempt than the latest seen is ignored.
    pub fn apply(&mut self, record: &JournalRecord) {
        if matches!(record.event, JournalEvent::CancelledRest { .. }) {
            self.rest.entry(record.task.group).or_insert_with(|| JournalEntry::new(0)).apply(record);
            return;
        }
        let state = self.tasks.entry(record.task).or_insert_with(|| JournalEntry::new(record.attempt));
        if record.attempt < state.attempt {
            return;
        }
        if record.attempt > state.attempt {
            *state = JournalEntry::new(record.attempt);
        }
        state.apply(record);
    }

    /// The state of `task`: its own records', or else that of the
    /// `CancelledRest` record of its group, if any.
    pub fn get(&self, task: TaskId) -> Option<&JournalEntry> {
        self.tasks.get(&task).or_else(|| self.rest.get(&task.group).filter(|_| task.is_instance()))
    }

    /// Every task instance with a record of its own, in graph order.
    pub fn iter(&self) -> impl Iterator<Item = (&TaskId, &JournalEntry)> {
        self.tasks.iter()
    }

    /// Number of task instances with a record of their own.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether no task has a record.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty() && self.rest.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(group: u32, instance: u64, attempt: u32, time_us: u64, event: JournalEvent) -> JournalRecord {
        JournalRecord::new(time_us, TaskId::new(GroupId(group), instance), attempt, event)
    }

    #[test]
    fn the_last_attempt_wins() {
        let failed = JournalEvent::Failed { exit_code: Some(3), signal: None, reason: "exit code 3".into() };
        let records = [
            at(1, 0, 0, 100, JournalEvent::Started { worker: 1, ready_us: None }),
            at(0, 5, 0, 100, JournalEvent::Cached { fingerprint: [1; 32], wrote: Wrote::default() }),
            at(1, 0, 0, 250, failed),
            at(1, 0, 1, 300, JournalEvent::Started { worker: 2, ready_us: None }),
            at(1, 1, 0, 310, JournalEvent::Started { worker: 1, ready_us: None }),
            at(1, 0, 1, 900, JournalEvent::Succeeded { fingerprint: [2; 32], wrote: Wrote::default() }),
            // A late record of an old attempt changes nothing.
            at(1, 0, 0, 950, JournalEvent::Lost { worker: 1 }),
            at(1, 2, 0, 960, JournalEvent::Cancelled { reason: "interrupted".into() }),
        ];
        let state = JournalState::from_records(&records);
        assert_eq!(state.len(), 4);
        let order: Vec<_> = state.iter().map(|(id, s)| (id.group.0, id.instance, s.status.as_str())).collect();
        assert_eq!(order, [(0, 5, "cached"), (1, 0, "succeeded"), (1, 1, "running"), (1, 2, "cancelled")]);

        let retried = state.get(TaskId::new(GroupId(1), 0)).unwrap();
        assert_eq!((retried.attempt, retried.worker, retried.exit_code), (1, Some(2), Some(0)));
        assert_eq!((retried.duration_us(), retried.fingerprint), (Some(600), Some([2; 32])));
        assert_eq!(state.get(TaskId::new(GroupId(1), 1)).unwrap().duration_us(), None);
        let cancelled = state.get(TaskId::new(GroupId(1), 2)).unwrap();
        assert_eq!((cancelled.reason.as_deref(), cancelled.started_us), (Some("interrupted"), None));
        assert!(JournalState::default().is_empty());
    }

    #[test]
    fn a_failure_keeps_its_exit_code_signal_and_reason() {
        let records = [
            at(0, 0, 0, 1, JournalEvent::Started { worker: 0, ready_us: None }),
            at(0, 0, 0, 5, JournalEvent::Failed { exit_code: None, signal: Some(9), reason: "timed out".into() }),
        ];
        let state = JournalState::from_records(&records);
        let s = state.get(TaskId::new(GroupId(0), 0)).unwrap();
        assert_eq!(
            (s.status, s.exit_code, s.signal, s.reason.as_deref()),
            (State::Failed, None, Some(9), Some("timed out"))
        );
        assert_eq!(s.duration_us(), Some(4));
    }

    #[test]
    fn every_attempt_is_kept_with_its_metrics() {
        let failed = JournalEvent::Failed { exit_code: Some(3), signal: None, reason: "exit code 3".into() };
        let mut ended = at(1, 0, 0, 250, failed);
        let metrics = AttemptMetrics { host: "node1".into(), ..AttemptMetrics::default() };
        ended.metrics = Some(Box::new(metrics.clone()));
        let records = [
            at(1, 0, 0, 100, JournalEvent::Started { worker: 1, ready_us: None }),
            ended,
            // Stopped while waiting for its retry: the cancellation names attempt 0.
            at(1, 0, 0, 300, JournalEvent::Cancelled { reason: "interrupted".into() }),
            at(1, 1, 0, 310, JournalEvent::Cancelled { reason: "`prep` failed".into() }),
            at(1, 2, 0, 320, JournalEvent::Succeeded { fingerprint: [0; 32], wrote: Wrote::default() }),
            // Its output could not be stored after all.
            at(1, 2, 0, 330, JournalEvent::Failed { exit_code: None, signal: None, reason: "lost".into() }),
        ];
        let mut folded: BTreeMap<(TaskId, u32), Option<JournalEntry>> = BTreeMap::new();
        records.iter().for_each(|r| fold_attempt(folded.entry((r.task, r.attempt)).or_default(), r));
        let rows: Vec<_> = folded
            .into_iter()
            .filter_map(|((t, _), e)| e.map(|e| (t.instance, e.attempt, e.status, e.metrics)))
            .collect();
        assert_eq!(
            rows,
            [
                (0, 0, State::Failed, Some(Box::new(metrics))),
                (1, 0, State::Cancelled, None),
                (2, 0, State::Failed, None)
            ]
        );
        let latest = JournalState::from_records(&records);
        assert_eq!(latest.get(TaskId::new(GroupId(1), 0)).unwrap().metrics.as_ref().unwrap().host, "node1");
    }
}
