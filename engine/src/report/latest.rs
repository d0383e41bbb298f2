//! [`Latest`]: the last attempt of every instance and where it got to, in
//! eight bytes per instance, folded from the journal as
//! [`crate::log::JournalState`] folds it (a later attempt starts afresh, a
//! record of an earlier one is ignored), for runs of millions of instances.

use crate::ir::{Graph, TaskId};
use crate::log::{JournalEvent, JournalRecord, JournalStatus};

/// The last attempt and status of each instance, per group.
pub(super) struct Latest {
    groups: Vec<Vec<(u32, Option<JournalStatus>)>>,
}

impl Latest {
    /// No record yet of any instance of `graph`.
    pub fn new(graph: &Graph) -> Latest {
        Latest { groups: graph.groups.iter().map(|g| vec![(0, None); g.count as usize]).collect() }
    }

    /// Folds in the next record; one of an instance the graph does not have is left out.
    pub fn apply(&mut self, r: &JournalRecord) {
        let groups = &mut self.groups;
        let Some(slot) = groups.get_mut(r.task.group.index()).and_then(|g| g.get_mut(r.task.instance as usize)) else {
            return;
        };
        // A retry's time leaves the failed attempt's status as it is.
        if (slot.1.is_none() || r.attempt >= slot.0) && !matches!(r.event, JournalEvent::RetryAt { .. }) {
            *slot = (r.attempt, Some(status(&r.event)));
        }
    }

    /// The last attempt and status of each instance of group `group` that has a record.
    pub fn of(&self, group: usize) -> impl Iterator<Item = (TaskId, u32, JournalStatus)> + '_ {
        let id = crate::ir::GroupId(group as u32);
        self.groups[group]
            .iter()
            .enumerate()
            .filter_map(move |(i, &(attempt, status))| Some((TaskId::new(id, i as u64), attempt, status?)))
    }
}

/// Where an attempt got to after `event` (a `RetryAt` is no change: failed).
fn status(event: &JournalEvent) -> JournalStatus {
    match event {
        JournalEvent::Started { .. } => JournalStatus::Running,
        JournalEvent::Succeeded { .. } => JournalStatus::Succeeded,
        JournalEvent::Cached { .. } => JournalStatus::Cached,
        JournalEvent::Failed { .. } | JournalEvent::RetryAt { .. } => JournalStatus::Failed,
        JournalEvent::Cancelled { .. } => JournalStatus::Cancelled,
        JournalEvent::Lost { .. } => JournalStatus::Lost,
    }
}
