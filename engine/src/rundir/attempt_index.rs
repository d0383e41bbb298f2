//! [`AttemptIndex`]: where each attempt's journal records start, sorted by
//! instance and attempt, so that `flow log list` prints a run of millions
//! of instances in graph order holding 24 bytes per record instead of the
//! records.

use std::path::PathBuf;

use crate::ir::{GroupId, TaskId};
use crate::log::{JournalEntry, JournalReader, JournalRecord, fold_attempt};
use crate::rundir::RunDirError;

/// Records read back at a time. Their places are read in file order, so a
/// journal written in about graph order (as a task array runs) is read
/// forward.
const CHUNK: usize = 1 << 14;

/// One record's place: its instance and attempt, and where it starts in the
/// journal. Ordered by instance, attempt, then file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    group: u32,
    instance: u64,
    attempt: u32,
    offset: u64,
}

impl Place {
    fn same_attempt(&self, other: &Place) -> bool {
        (self.group, self.instance, self.attempt) == (other.group, other.instance, other.attempt)
    }

    fn task(&self) -> TaskId {
        TaskId::new(GroupId(self.group), self.instance)
    }
}

/// The places of a journal's records, by instance and attempt
/// ([`super::RunView::attempt_index`]).
#[derive(Debug, Clone)]
pub struct AttemptIndex {
    journal: PathBuf,
    places: Vec<Place>,
}

impl AttemptIndex {
    /// No places yet in the journal at `journal`.
    pub(super) fn new(journal: PathBuf) -> Self {
        AttemptIndex { journal, places: Vec::new() }
    }

    /// Notes that the record of `task`'s `attempt` starts at `offset`. A
    /// record of a whole group (the instances a stopped run never started)
    /// is no attempt.
    pub(super) fn push(&mut self, record: &JournalRecord, offset: u64) {
        if !record.task.is_instance() {
            return;
        }
        let (group, instance, attempt) = (record.task.group.0, record.task.instance, record.attempt);
        self.places.push(Place { group, instance, attempt, offset });
    }

    /// Sorts the places once every record is in.
    pub(super) fn sort(&mut self) {
        self.places.sort_unstable();
    }

    /// Every attempt with a journal record, in graph order and then by
    /// attempt, folded from its records ([`fold_attempt`]); the journal is
    /// read again, a chunk of records at a time.
    /// `each` may stop the reading with an error of its own.
    pub fn each<E: From<RunDirError>>(
        &self,
        mut each: impl FnMut(TaskId, &JournalEntry) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.places.is_empty() {
            return Ok(());
        }
        let path = &self.journal;
        let mut reader = JournalReader::open(path).map_err(|e| RunDirError::reading(path, e))?;
        let mut records: Vec<Option<JournalRecord>> = Vec::with_capacity(CHUNK);
        let mut by_offset: Vec<(u64, usize)> = Vec::with_capacity(CHUNK);
        let mut start = 0;
        while start < self.places.len() {
            // An attempt's records are folded together, in one chunk.
            let mut end = (start + CHUNK).min(self.places.len());
            while end < self.places.len() && self.places[end - 1].same_attempt(&self.places[end]) {
                end += 1;
            }
            let chunk = &self.places[start..end];
            by_offset.clear();
            by_offset.extend(chunk.iter().enumerate().map(|(i, p)| (p.offset, i)));
            by_offset.sort_unstable();
            records.clear();
            records.resize(chunk.len(), None);
            for &(offset, i) in &by_offset {
                records[i] = reader.read_at(offset).map_err(|e| RunDirError::reading(path, e))?;
            }
            let mut entry = None;
            for (i, place) in chunk.iter().enumerate() {
                if let Some(r) = &records[i] {
                    fold_attempt(&mut entry, r);
                }
                if chunk.get(i + 1).is_none_or(|next| !place.same_attempt(next))
                    && let Some(e) = entry.take()
                {
                    each(place.task(), &e)?;
                }
            }
            start = end;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::log::{JournalEvent, JournalWriter, Wrote};

    /// Instances ended in the reverse of graph order, some retried, over
    /// more records than a chunk: read back in graph order, each attempt
    /// folded as a whole.
    #[test]
    fn attempts_come_back_in_graph_order_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let n = CHUNK as u64;
        let mut records = Vec::new();
        for i in (0..n).rev() {
            let task = TaskId::new(GroupId((i % 2) as u32), i / 2);
            records.push(JournalRecord::new(10, task, 0, JournalEvent::Started { worker: 1, ready_us: None }));
            let failed = JournalEvent::Failed { exit_code: Some(1), signal: None, reason: "exit code 1".into() };
            let done = JournalEvent::Succeeded { fingerprint: [0; 32], wrote: Wrote::default() };
            records.push(JournalRecord::new(20, task, 0, if i % 7 == 0 { failed } else { done }));
        }
        // The retries, at the end of the journal.
        for i in (0..n).step_by(7) {
            let task = TaskId::new(GroupId((i % 2) as u32), i / 2);
            records.push(JournalRecord::new(30, task, 1, JournalEvent::Started { worker: 2, ready_us: None }));
        }
        JournalWriter::create(&path).unwrap().append_batch(&records).unwrap();

        let mut index = AttemptIndex::new(path.clone());
        let mut reader = JournalReader::open(&path).unwrap();
        while let Some(record) = reader.next() {
            index.push(&record.unwrap(), reader.last_start());
        }
        index.sort();
        let mut seen = Vec::new();
        index
            .each(|task, entry| {
                seen.push((task, entry.attempt, entry.status, entry.duration_us()));
                Ok::<_, RunDirError>(())
            })
            .unwrap();

        let mut folded: BTreeMap<(TaskId, u32), Option<JournalEntry>> = BTreeMap::new();
        records.iter().for_each(|r| fold_attempt(folded.entry((r.task, r.attempt)).or_default(), r));
        let expected: Vec<_> = folded
            .into_iter()
            .filter_map(|((task, _), e)| e.map(|e| (task, e.attempt, e.status, e.duration_us())))
            .collect();
        assert_eq!(seen.len(), expected.len());
        assert_eq!(seen, expected);
    }
}
