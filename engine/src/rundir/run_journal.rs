//! [`RunJournal`]: a run's journal folded per instance, and
//! [`JournalHealth`]: what of it could not be read.

use std::collections::HashMap;

use crate::ir::{Failure, Graph, RetryOn, TaskId};
use crate::log::{Damage, JournalEvent, JournalRecord, JournalState, TornTail};

/// What of a journal (or an output log) could not be read, by
/// [`super::RunView`]'s rule: damaged stretches are skipped and the
/// records around them kept; an incomplete record at the end is left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JournalHealth {
    /// Damaged stretches, skipped.
    pub damage: Vec<Damage>,
    /// The incomplete record at the end of a run that is not live (on a
    /// live run it is the record being written, and not reported).
    pub torn: Option<TornTail>,
    /// Whether the run ended having written everything (its summary
    /// names no storage failure): a torn tail is then damage.
    pub wrote_all: bool,
}

impl JournalHealth {
    /// Stretches whose records are lost: the damaged ones, and a torn tail
    /// of a run that ended having written everything (such a run writes
    /// whole records before it ends).
    pub fn lost_stretches(&self) -> usize {
        self.damage.len() + usize::from(self.wrote_all && self.torn.is_some())
    }
}

/// A run's journal, folded: the latest state of each instance and the
/// failed attempts of each.
#[derive(Debug, Clone, Default)]
pub struct RunJournal {
    /// The latest state of each instance with a journal record.
    pub state: JournalState,
    /// Failed attempts per instance, for instances that failed at least once.
    pub failures: HashMap<TaskId, u32>,
    /// What could not be read.
    pub health: JournalHealth,
    /// Whether the run is in progress, so failed instances may run again.
    pub live: bool,
}

impl RunJournal {
    /// The journal of a run (`live` or not) whose records are `records`, in order.
    pub fn from_records(records: &[JournalRecord], live: bool) -> Self {
        let mut journal = RunJournal { live, ..RunJournal::default() };
        for record in records {
            journal.apply(record);
        }
        journal
    }

    /// Folds in the next record.
    pub(super) fn apply(&mut self, record: &JournalRecord) {
        if matches!(record.event, JournalEvent::Failed { .. }) {
            *self.failures.entry(record.task).or_insert(0) += 1;
        }
        self.state.apply(record);
    }

    /// Failed attempts of `task` so far.
    pub fn failures(&self, task: TaskId) -> u32 {
        self.failures.get(&task).copied().unwrap_or(0)
    }

    /// Whether a failed `task` of `graph` will not run again: it used up
    /// its retries, its task's `retry_on` does not list the failure, or the
    /// run is over. (The scheduler retries while failures <= retries.)
    pub fn failed_for_good(&self, graph: &Graph, task: TaskId) -> bool {
        let group = graph.group(task.group);
        let not_listed = || {
            self.state.get(task).is_some_and(|e| {
                let failure = Failure::of(e.exit_code, e.signal, e.reason.as_deref().unwrap_or_default());
                !RetryOn::retries(&group.retry_on, failure)
            })
        };
        !self.live || self.failures(task) > group.retries || not_listed()
    }
}
