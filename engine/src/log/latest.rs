//! [`Latest`]: the last attempt of every instance of a graph, where it got
//! to and when it started and ended, in 24 bytes per instance, folded from
//! the journal as [`super::JournalState`] folds it (a later attempt starts
//! afresh, a record of an earlier one is ignored), for the readers of runs
//! of millions of instances: `flow report`, `flow log summary`, `flow status`.

use std::num::NonZeroU64;

use super::{JournalEvent, JournalRecord, State};
use crate::ir::{Graph, GroupId, TaskId};

/// The last attempt of one instance, as [`Latest`] keeps it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Slot {
    attempt: u32,
    /// `None` before any record.
    status: Option<State>,
    /// A failed attempt that waits to be retried (a `RetryAt` record).
    retrying: bool,
    started_us: Option<NonZeroU64>,
    ended_us: Option<NonZeroU64>,
}

impl Slot {
    fn duration_us(&self) -> Option<u64> {
        Some(self.ended_us?.get().saturating_sub(self.started_us?.get()))
    }
}

/// The last attempt of one instance with a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastAttempt {
    /// The instance.
    pub task: TaskId,
    /// The attempt, 0 for the first.
    pub attempt: u32,
    /// Where it got to.
    pub status: State,
    /// How long it ran, if it both started and ended.
    pub duration_us: Option<u64>,
    /// It failed and waits to be retried.
    pub retrying: bool,
}

/// The last attempt of each instance, per group.
#[derive(Debug, Clone)]
pub struct Latest {
    groups: Vec<Vec<Slot>>,
}

impl Latest {
    /// No record yet of any instance of `graph`.
    pub fn new(graph: &Graph) -> Latest {
        Latest { groups: graph.groups.iter().map(|g| vec![Slot::default(); g.count as usize]).collect() }
    }

    /// Folds in the next record; one of an instance the graph does not have is left out.
    pub fn apply(&mut self, r: &JournalRecord) {
        if matches!(r.event, JournalEvent::CancelledRest { .. }) {
            self.cancel_rest(r);
            return;
        }
        let groups = &mut self.groups;
        let Some(slot) = groups.get_mut(r.task.group.index()).and_then(|g| g.get_mut(r.task.instance as usize)) else {
            return;
        };
        if slot.status.is_some() && r.attempt < slot.attempt {
            return;
        }
        if slot.status.is_none() || r.attempt > slot.attempt {
            *slot = Slot { attempt: r.attempt, ..Slot::default() };
        }
        // A retry's time leaves the failed attempt as it is, waiting.
        if matches!(r.event, JournalEvent::RetryAt { .. }) {
            slot.retrying = true;
            return;
        }
        // An untrusted success is still this run's success; what it read changes nothing here.
        if matches!(r.event, JournalEvent::Untrusted { .. } | JournalEvent::Read { .. }) {
            return;
        }
        let time = NonZeroU64::new(r.time_us);
        let status = match r.event {
            JournalEvent::Started { .. } => {
                slot.started_us = time;
                State::Running
            }
            JournalEvent::Succeeded { .. } => State::Succeeded,
            JournalEvent::Cached { .. } => State::Cached,
            JournalEvent::Failed { .. } | JournalEvent::RetryAt { .. } => State::Failed,
            JournalEvent::Cancelled { .. } => State::Cancelled,
            JournalEvent::Lost { .. } => State::Lost,
            JournalEvent::Skipped { .. } => State::Skipped,
            JournalEvent::Untrusted { .. } | JournalEvent::Read { .. } | JournalEvent::CancelledRest { .. } => return,
        };
        if status != State::Running {
            slot.ended_us = time;
        }
        slot.status = Some(status);
    }

    /// Cancels every instance of the group `r` names that has no record yet.
    fn cancel_rest(&mut self, r: &JournalRecord) {
        let ended_us = NonZeroU64::new(r.time_us);
        let Some(slots) = self.groups.get_mut(r.task.group.index()) else { return };
        for slot in slots.iter_mut().filter(|s| s.status.is_none()) {
            *slot = Slot { status: Some(State::Cancelled), ended_us, ..Slot::default() };
        }
    }

    /// The last attempt of each instance of group `group` that has a record.
    pub fn of(&self, group: usize) -> impl Iterator<Item = LastAttempt> + '_ {
        let id = GroupId(group as u32);
        let slots = self.groups.get(group).map_or(&[][..], Vec::as_slice);
        slots.iter().enumerate().filter_map(move |(i, slot)| {
            Some(LastAttempt {
                task: TaskId::new(id, i as u64),
                attempt: slot.attempt,
                status: slot.status?,
                duration_us: slot.duration_us(),
                retrying: slot.retrying,
            })
        })
    }

    /// The last attempt of instance `task`, if it has a record.
    pub fn get(&self, task: TaskId) -> Option<LastAttempt> {
        let slot = self.groups.get(task.group.index())?.get(task.instance as usize)?;
        Some(LastAttempt {
            task,
            attempt: slot.attempt,
            status: slot.status?,
            duration_us: slot.duration_us(),
            retrying: slot.retrying,
        })
    }

    /// The last attempt of every instance that has a record, in graph order.
    pub fn iter(&self) -> impl Iterator<Item = LastAttempt> + '_ {
        (0..self.groups.len()).flat_map(|g| self.of(g))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{JournalState, Wrote};

    fn graph() -> Graph {
        let text = "[[tasks]]\nname = \"a\"\ncommand = \"true\"\n\n[[tasks]]\nname = \"b\"\nrange = \"1-3\"\ncommand = \"true\"\n";
        crate::compile::compile_toml(text)
    }

    fn at(group: u32, instance: u64, attempt: u32, time_us: u64, event: JournalEvent) -> JournalRecord {
        JournalRecord::new(time_us, TaskId::new(GroupId(group), instance), attempt, event)
    }

    /// The records of `JournalState`'s own test, folded both ways.
    #[test]
    fn folds_as_the_journal_state_does() {
        let failed = JournalEvent::Failed { exit_code: Some(3), signal: None, reason: "exit code 3".into() };
        let records = [
            at(1, 0, 0, 100, JournalEvent::Started { worker: 1, ready_us: None }),
            at(0, 0, 0, 100, JournalEvent::Cached { fingerprint: [1; 32], wrote: Wrote::default() }),
            at(1, 0, 0, 250, failed),
            at(1, 0, 1, 300, JournalEvent::Started { worker: 2, ready_us: None }),
            at(1, 1, 0, 310, JournalEvent::Started { worker: 1, ready_us: None }),
            at(1, 0, 1, 900, JournalEvent::Succeeded { fingerprint: [2; 32], wrote: Wrote::default() }),
            // A late record of an old attempt changes nothing.
            at(1, 0, 0, 950, JournalEvent::Lost { worker: 1 }),
            at(1, 2, 0, 960, JournalEvent::Cancelled { reason: "interrupted".into() }),
            // An instance the graph does not have is left out.
            at(1, 7, 0, 970, JournalEvent::Started { worker: 1, ready_us: None }),
        ];
        let mut latest = Latest::new(&graph());
        records.iter().for_each(|r| latest.apply(r));
        let state = JournalState::from_records(&records[..8]);
        let folded: Vec<_> = latest.iter().map(|a| (a.task, a.attempt, a.status, a.duration_us)).collect();
        let expected: Vec<_> = state.iter().map(|(&t, e)| (t, e.attempt, e.status, e.duration_us())).collect();
        assert_eq!(folded, expected);
        assert_eq!(folded[1], (TaskId::new(GroupId(1), 0), 1, State::Succeeded, Some(600)));
        assert_eq!(latest.of(5).count(), 0);
    }

    /// Issue 29: a stopped run cancels the instances of a group that never
    /// started with one record; both folds read it alike.
    #[test]
    fn a_rest_record_cancels_the_instances_without_a_record() {
        let rest = JournalRecord::new(
            400,
            TaskId::whole(GroupId(1)),
            0,
            JournalEvent::CancelledRest { reason: "interrupted".into() },
        );
        let records = [
            at(1, 0, 0, 100, JournalEvent::Started { worker: 1, ready_us: None }),
            at(1, 1, 0, 200, JournalEvent::Succeeded { fingerprint: [1; 32], wrote: Wrote::default() }),
            rest,
            // The running instance was killed after the rest was cancelled.
            at(1, 0, 0, 500, JournalEvent::Cancelled { reason: "interrupted".into() }),
        ];
        let mut latest = Latest::new(&graph());
        records.iter().for_each(|r| latest.apply(r));
        let folded: Vec<_> = latest.iter().map(|a| (a.task.group.0, a.task.instance, a.status)).collect();
        assert_eq!(folded, [(1, 0, State::Cancelled), (1, 1, State::Succeeded), (1, 2, State::Cancelled)]);
        assert_eq!(latest.get(TaskId::new(GroupId(0), 0)), None, "another group keeps its instances");
        let state = JournalState::from_records(&records);
        let status = |i| state.get(TaskId::new(GroupId(1), i)).map(|e| (e.status, e.ended_us));
        assert_eq!(status(0), Some((State::Cancelled, Some(500))));
        assert_eq!(status(1), Some((State::Succeeded, Some(200))));
        assert_eq!(status(2), Some((State::Cancelled, Some(400))));
        assert_eq!(state.get(TaskId::new(GroupId(0), 0)), None);
        assert_eq!(state.get(TaskId::whole(GroupId(1))), None, "the group itself is no instance");
    }
}
