//! [`JournalRecord`]: a task state change, the [`JournalWriter`] that appends
//! records to `journal`, and [`read_journal`].
//!
//! A record's payload is little-endian fields, then the event's own:
//!
//! ```text
//! time_us: u64 | group: u32 | instance: u64 | attempt: u32 | event tag: u8 | event fields
//! Started   1  worker: u32 | ready_us: u64 (absent in records written before it existed)
//! Succeeded 2  fingerprint: [u8; 32] | wrote
//! Cached    3  fingerprint: [u8; 32] | wrote
//! Failed    4  has exit code: u8 | exit code: i32 | has signal: u8 | signal: i32 | reason (UTF-8, to the end)
//! Cancelled 5  reason (UTF-8, to the end)
//! Lost      6  worker: u32
//! RetryAt   7  until_us: u64
//! Skipped   8  reason (UTF-8, to the end)
//! Untrusted 9  file (UTF-8, to the end)
//! Read     10  per file: path length: u16 | path | hash: [u8; 32], to the end
//! CancelledRest 11  reason (UTF-8, to the end)
//! ```
//!
//! A record that ends an attempt which ran on a worker has bit 7 of its tag
//! set (`0x82` is a succeeded attempt with metrics) and an
//! [`AttemptMetrics`] block between the tag and the event's fields, so
//! journals written before metrics existed read as they did. `wrote` is
//! the variant and the output stamps of a success ([`Wrote`]); records
//! written before it existed end after the fingerprint.
//!
//! `RetryAt` follows the `Failed` record of an attempt that is retried
//! after a `retry_delay`, with the same attempt number: a record of its
//! own, so a reader that does not know it skips it and still reads the
//! failure.
//!
//! `Untrusted` follows the `Succeeded` record of an attempt during which
//! a file it reads changed, with the same attempt number: its result is
//! kept for this run, but no later run takes it as done.
//!
//! `Read` follows the `Succeeded` record of an attempt that reads files,
//! with the same attempt number: what each file it read held
//! ([`FileHashes`]), so that a later change is named by the file whose
//! contents changed. Journals written before it existed have none.
//!
//! `Skipped` is written for an instance whose per-instance `when` rendered
//! false, or that waits on a skipped one; it never ran. A reader that does
//! not know the tag skips the record, as it skips any unknown record.
//!
//! `CancelledRest` names a whole group ([`TaskId::whole`]): every instance
//! of it that has no record before this one is cancelled, for the reason
//! given. A stopped run writes one per group instead of one per instance
//! that never started, so Ctrl-C on millions of instances stays quick.

use std::io;
use std::path::Path;

use super::attempt_metrics::AttemptMetrics;
use super::cursor::Cursor;
use super::file_hashes::FileHashes;
use super::wrote::Wrote;
use super::{Damage, FileKind, FrameReader, FrameWriter, TornTail};
use crate::ir::{GroupId, TaskId};

/// One change of one task instance's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalRecord {
    /// When it happened, in µs since the Unix epoch.
    pub time_us: u64,
    /// The task instance.
    pub task: TaskId,
    /// Which run of it (0 for the first).
    pub attempt: u32,
    /// What happened.
    pub event: JournalEvent,
    /// Where the attempt ran and what it used, on the record that ends an
    /// attempt whose worker reported it.
    pub metrics: Option<Box<AttemptMetrics>>,
}

/// What happened to a task instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalEvent {
    /// It started on a worker.
    Started {
        /// The worker.
        worker: u32,
        /// When the instance became ready to start: its dependencies done,
        /// its comparison with an earlier run made, its retry due. `None`
        /// in records written before it was kept.
        ready_us: Option<u64>,
    },
    /// It exited 0 and produced its declared outputs.
    Succeeded {
        /// Hash of its definition and inputs, to skip it next time.
        fingerprint: [u8; 32],
        /// The variant it ran in and the outputs it wrote.
        wrote: Wrote,
    },
    /// It was skipped: an earlier run already did the same work.
    Cached {
        /// The fingerprint the earlier run recorded.
        fingerprint: [u8; 32],
        /// The variant and outputs of the success it stands on, as found now.
        wrote: Wrote,
    },
    /// It failed.
    Failed {
        /// Its exit code, if it exited.
        exit_code: Option<i32>,
        /// The signal that killed it, if one did.
        signal: Option<i32>,
        /// Why, for people: "exit code 3", "timed out after 90s", "could not start: …".
        reason: String,
    },
    /// It was cancelled before it could finish (Ctrl-C, a failed dependency).
    Cancelled {
        /// Why, for people.
        reason: String,
    },
    /// The worker running it disappeared.
    Lost {
        /// The worker.
        worker: u32,
    },
    /// Its failed attempt is retried (`retry_delay`): the next attempt
    /// starts no earlier than `until_us`. The attempt's status stays failed.
    RetryAt {
        /// When the next attempt may start, in µs since the Unix epoch.
        until_us: u64,
    },
    /// It was skipped without running: its `when` was false, or it waits
    /// on a skipped instance. Final for this run; the next run decides again.
    Skipped {
        /// Why, for people: the condition, or the skipped instance.
        reason: String,
    },
    /// Written for a whole group ([`TaskId::whole`]), attempt 0: every
    /// instance of it without a record before this one was cancelled
    /// (the run was stopped before they started).
    CancelledRest {
        /// Why, for people.
        reason: String,
    },
    /// A file its succeeded attempt reads changed while it ran: the
    /// success stands for this run, but is not taken as done next time.
    Untrusted {
        /// The file, relative to the workflow directory when inside it.
        file: String,
    },
    /// What each file its succeeded attempt read held.
    Read {
        /// The files, with the hashes of their contents.
        files: FileHashes,
    },
}

/// Set in the event tag when an [`AttemptMetrics`] block follows it.
const WITH_METRICS: u8 = 0x80;

impl JournalRecord {
    /// A record without metrics.
    pub fn new(time_us: u64, task: TaskId, attempt: u32, event: JournalEvent) -> Self {
        Self { time_us, task, attempt, event, metrics: None }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend(self.time_us.to_le_bytes());
        out.extend(self.task.group.0.to_le_bytes());
        out.extend(self.task.instance.to_le_bytes());
        out.extend(self.attempt.to_le_bytes());
        let tag = |out: &mut Vec<u8>, tag: u8| match &self.metrics {
            Some(metrics) => {
                out.push(tag | WITH_METRICS);
                metrics.encode(out);
            }
            None => out.push(tag),
        };
        match &self.event {
            JournalEvent::Started { worker, ready_us } => {
                tag(out, 1);
                out.extend(worker.to_le_bytes());
                if let Some(ready_us) = ready_us {
                    out.extend(ready_us.to_le_bytes());
                }
            }
            JournalEvent::Succeeded { fingerprint, wrote } => {
                tag(out, 2);
                out.extend(fingerprint);
                wrote.encode(out);
            }
            JournalEvent::Cached { fingerprint, wrote } => {
                tag(out, 3);
                out.extend(fingerprint);
                wrote.encode(out);
            }
            JournalEvent::Failed { exit_code, signal, reason } => {
                tag(out, 4);
                for field in [exit_code, signal] {
                    out.push(u8::from(field.is_some()));
                    out.extend(field.unwrap_or_default().to_le_bytes());
                }
                out.extend(reason.as_bytes());
            }
            JournalEvent::Cancelled { reason } => {
                tag(out, 5);
                out.extend(reason.as_bytes());
            }
            JournalEvent::Lost { worker } => {
                tag(out, 6);
                out.extend(worker.to_le_bytes());
            }
            JournalEvent::RetryAt { until_us } => {
                tag(out, 7);
                out.extend(until_us.to_le_bytes());
            }
            JournalEvent::Skipped { reason } => {
                tag(out, 8);
                out.extend(reason.as_bytes());
            }
            JournalEvent::Untrusted { file } => {
                tag(out, 9);
                out.extend(file.as_bytes());
            }
            JournalEvent::Read { files } => {
                tag(out, 10);
                out.extend(files.bytes());
            }
            JournalEvent::CancelledRest { reason } => {
                tag(out, 11);
                out.extend(reason.as_bytes());
            }
        }
    }

    fn decode(payload: &[u8]) -> Option<Self> {
        let mut c = Cursor(payload);
        let time_us = c.u64()?;
        let task = TaskId::new(GroupId(c.u32()?), c.u64()?);
        let attempt = c.u32()?;
        let text = |c: Cursor<'_>| String::from_utf8_lossy(c.rest()).into_owned();
        let tag = c.u8()?;
        let metrics = if tag & WITH_METRICS != 0 { Some(Box::new(AttemptMetrics::decode(&mut c)?)) } else { None };
        let event = match tag & !WITH_METRICS {
            1 => JournalEvent::Started { worker: c.u32()?, ready_us: c.u64() },
            2 => JournalEvent::Succeeded { fingerprint: c.array()?, wrote: Wrote::decode(&mut c)? },
            3 => JournalEvent::Cached { fingerprint: c.array()?, wrote: Wrote::decode(&mut c)? },
            4 => {
                let mut field = || {
                    let present = c.u8()? == 1;
                    let value = c.i32()?;
                    Some(present.then_some(value))
                };
                let (exit_code, signal) = (field()?, field()?);
                JournalEvent::Failed { exit_code, signal, reason: text(c) }
            }
            5 => JournalEvent::Cancelled { reason: text(c) },
            6 => JournalEvent::Lost { worker: c.u32()? },
            7 => JournalEvent::RetryAt { until_us: c.u64()? },
            8 => JournalEvent::Skipped { reason: text(c) },
            9 => JournalEvent::Untrusted { file: text(c) },
            10 => JournalEvent::Read { files: FileHashes::from_bytes(c.rest()) },
            11 => JournalEvent::CancelledRest { reason: text(c) },
            _ => return None,
        };
        Some(Self { time_us, task, attempt, event, metrics })
    }
}

/// Disk space the journal keeps allocated past its end: about a thousand records.
pub const RESERVE: u64 = 64 << 10;

/// Appends records to `journal`. Used from one thread, the runtime's bookkeeping.
#[derive(Debug)]
pub struct JournalWriter {
    frames: FrameWriter,
    payload: Vec<u8>,
}

impl JournalWriter {
    /// Creates `path`, or opens it for appending (see [`FrameWriter::open`]).
    pub fn create(path: &Path) -> io::Result<Self> {
        Ok(Self { frames: FrameWriter::open(path, FileKind::JOURNAL)?, payload: Vec::new() })
    }

    /// Appends `records` and hands them to the kernel.
    ///
    /// The journal keeps `RESERVE` bytes of disk set aside past its end:
    /// when the disk fills up (the output log's large writes usually fill it
    /// first), the records of the attempts still ending, and of output that
    /// was lost, can still be written.
    pub fn append_batch(&mut self, records: &[JournalRecord]) -> io::Result<()> {
        self.append_batches([records])
    }

    /// [`JournalWriter::append_batch`] of several lists of records, in
    /// order, written together.
    pub fn append_batches<'a>(&mut self, batches: impl IntoIterator<Item = &'a [JournalRecord]>) -> io::Result<()> {
        for r in batches.into_iter().flatten() {
            r.encode(&mut self.payload);
            self.frames.append(&[&self.payload])?;
        }
        self.frames.flush()?;
        // A file system without `fallocate`, or a full disk: what was set
        // aside before still is, and a write that does not fit fails loudly.
        let _ = self.frames.keep_reserve(RESERVE);
        Ok(())
    }
}

/// What [`read_journal`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalFile {
    /// Every intact record, in order.
    pub records: Vec<JournalRecord>,
    /// The incomplete record at the end, if any (what a crash leaves).
    pub torn: Option<TornTail>,
    /// Damaged or unknown records skipped in the middle.
    pub damage: Vec<Damage>,
}

/// Every intact record of a journal, in order, past any damaged one.
pub fn read_journal(path: &Path) -> io::Result<JournalFile> {
    let mut reader = JournalReader::open(path)?;
    let records = reader.by_ref().collect::<io::Result<_>>()?;
    Ok(JournalFile { records, torn: reader.torn_tail(), damage: reader.damage().to_vec() })
}

/// The intact records of a journal, one at a time, in order, past any
/// damaged one: what [`read_journal`] collects, for readers that fold a
/// journal too large to hold (`flow report` on millions of instances).
pub struct JournalReader {
    frames: FrameReader,
    payload: Vec<u8>,
}

impl JournalReader {
    /// Opens the journal at `path`.
    pub fn open(path: &Path) -> io::Result<Self> {
        Ok(JournalReader { frames: FrameReader::open(path, FileKind::JOURNAL)?, payload: Vec::new() })
    }

    /// The incomplete record at the end, once the records are read.
    pub fn torn_tail(&self) -> Option<TornTail> {
        self.frames.torn_tail()
    }

    /// Damaged or unknown records skipped so far.
    pub fn damage(&self) -> &[Damage] {
        self.frames.damage()
    }

    /// Where the record last read starts, to read it again with [`JournalReader::read_at`].
    pub fn last_start(&self) -> u64 {
        self.frames.last_start()
    }

    /// The record that starts at `offset` (a [`JournalReader::last_start`]
    /// seen before), or `None` if it is not complete or not a record.
    pub fn read_at(&mut self, offset: u64) -> io::Result<Option<JournalRecord>> {
        Ok(self.frames.read_at(offset, &mut self.payload)?.then(|| JournalRecord::decode(&self.payload)).flatten())
    }
}

impl Iterator for JournalReader {
    type Item = io::Result<JournalRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.frames.next_into(&mut self.payload) {
                Err(e) => return Some(Err(e)),
                Ok(false) => return None,
                Ok(true) => match JournalRecord::decode(&self.payload) {
                    Some(record) => return Some(Ok(record)),
                    None => self.frames.undecodable("a record of an unknown kind"),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(instance: u64, attempt: u32, time_us: u64, event: JournalEvent) -> JournalRecord {
        JournalRecord::new(time_us, TaskId::new(GroupId(1), instance), attempt, event)
    }

    fn every_event() -> Vec<JournalRecord> {
        let failed =
            |exit_code, signal, reason: &str| JournalEvent::Failed { exit_code, signal, reason: reason.into() };
        vec![
            record(0, 0, 10, JournalEvent::Started { worker: 3, ready_us: Some(4) }),
            record(1, 0, 11, JournalEvent::Started { worker: 3, ready_us: None }),
            record(0, 0, 20, JournalEvent::Succeeded { fingerprint: [7; 32], wrote: Wrote::default() }),
            record(1, 0, 30, JournalEvent::Cached { fingerprint: [9; 32], wrote: Wrote::default() }),
            record(2, 0, 40, failed(Some(3), None, "exit code 3")),
            record(2, 1, 50, failed(None, Some(9), "timed out after 90s")),
            record(2, 2, 55, failed(Some(-1), Some(0), "")),
            record(3, 0, 60, JournalEvent::Cancelled { reason: "`prep` failed".into() }),
            record(2, 2, 58, JournalEvent::RetryAt { until_us: 1_700_000_000_000_000 }),
            record(4, 0, 59, JournalEvent::Skipped { reason: "`dock[4]` was skipped".into() }),
            record(0, 0, 21, JournalEvent::Untrusted { file: "x.txt".into() }),
            record(0, 0, 22, JournalEvent::Read { files: FileHashes::new([("in/a.txt", [5; 32])]) }),
            // Issue 29: one record for the instances of a stopped group that never started.
            JournalRecord::new(
                70,
                TaskId::whole(GroupId(2)),
                0,
                JournalEvent::CancelledRest { reason: "interrupted".into() },
            ),
            record(u64::MAX, u32::MAX, u64::MAX, JournalEvent::Lost { worker: u32::MAX }),
        ]
    }

    #[test]
    fn every_event_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let records = every_event();
        let mut w = JournalWriter::create(&path).unwrap();
        w.append_batch(&records[..3]).unwrap();
        w.append_batch(&[]).unwrap();
        drop(w);
        JournalWriter::create(&path).unwrap().append_batch(&records[3..]).unwrap();
        assert_eq!(read_journal(&path).unwrap(), JournalFile { records, ..JournalFile::default() });
    }

    fn metrics() -> AttemptMetrics {
        let usage = crate::log::ProcessUsage {
            started_us: 1_700_000_000_000_000,
            ended_us: 1_700_000_002_500_000,
            wall_us: 2_499_000,
            user_us: 1_800_000,
            system_us: 200_000,
            max_rss: 52 << 20,
            peak_vmem: Some(300 << 20),
            io: Some(crate::log::IoBytes {
                read_bytes: 4096,
                write_bytes: 8 << 20,
                rchar: Some(9000),
                wchar: Some(9 << 20),
            }),
        };
        AttemptMetrics {
            usage,
            variant: 1,
            cpus: vec![2, 3],
            gpus: vec![0],
            host: "node17".into(),
            allocation: Some("8812".into()),
        }
    }

    #[test]
    fn metrics_round_trip_on_every_kind_of_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let mut records = every_event();
        for r in &mut records[2..8] {
            r.metrics = Some(Box::new(metrics()));
        }
        records[4].metrics = Some(Box::new(AttemptMetrics { allocation: None, gpus: vec![], ..metrics() }));
        let mut unmeasured = metrics();
        unmeasured.usage.io = None;
        records[5].metrics = Some(Box::new(unmeasured));
        let mut unsampled = metrics();
        unsampled.usage.peak_vmem = None;
        unsampled.usage.io = unsampled.usage.io.map(|io| crate::log::IoBytes { rchar: None, wchar: None, ..io });
        records[6].metrics = Some(Box::new(unsampled));
        JournalWriter::create(&path).unwrap().append_batch(&records).unwrap();
        assert_eq!(read_journal(&path).unwrap(), JournalFile { records, ..JournalFile::default() });
    }

    /// A journal written before attempts had metrics: the payloads are
    /// spelled out byte by byte, as that version wrote them.
    #[test]
    fn a_journal_without_metrics_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let head = |tag: u8| {
            [&20u64.to_le_bytes()[..], &1u32.to_le_bytes(), &0u64.to_le_bytes(), &0u32.to_le_bytes(), &[tag]].concat()
        };
        let started = [head(1), 5u32.to_le_bytes().to_vec()].concat();
        let succeeded = [head(2), vec![7; 32]].concat();
        let failed = [head(4), vec![1, 3, 0, 0, 0, 0, 0, 0, 0, 0], b"exit code 3".to_vec()].concat();
        let mut frames = FrameWriter::open(&path, FileKind::JOURNAL).unwrap();
        frames.append(&[&started]).unwrap();
        frames.append(&[&succeeded]).unwrap();
        frames.append(&[&failed]).unwrap();
        frames.flush().unwrap();
        let task = TaskId::new(GroupId(1), 0);
        let expected = [
            JournalRecord::new(20, task, 0, JournalEvent::Started { worker: 5, ready_us: None }),
            JournalRecord::new(20, task, 0, JournalEvent::Succeeded { fingerprint: [7; 32], wrote: Wrote::default() }),
            JournalRecord::new(
                20,
                task,
                0,
                JournalEvent::Failed { exit_code: Some(3), signal: None, reason: "exit code 3".into() },
            ),
        ];
        assert_eq!(read_journal(&path).unwrap().records, expected);
    }

    /// Metrics a later version extends with fields of its own still read.
    #[test]
    fn unknown_metrics_fields_are_skipped() {
        let mut record = JournalRecord::new(
            5,
            TaskId::new(GroupId(0), 0),
            0,
            JournalEvent::Cancelled { reason: "interrupted".into() },
        );
        record.metrics = Some(Box::new(metrics()));
        let mut payload = Vec::new();
        record.encode(&mut payload);
        // Grow the block by four bytes just before the reason.
        let at = 25 + 2 + usize::from(u16::from_le_bytes([payload[25], payload[26]]));
        payload.splice(at..at, [9, 9, 9, 9]);
        let length = u16::from_le_bytes([payload[25], payload[26]]) + 4;
        payload[25..27].copy_from_slice(&length.to_le_bytes());
        assert_eq!(JournalRecord::decode(&payload), Some(record));
    }

    #[test]
    fn a_torn_tail_is_reported_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        JournalWriter::create(&path).unwrap().append_batch(&every_event()).unwrap();
        let len = fs_err::metadata(&path).unwrap().len();
        fs_err::OpenOptions::new().write(true).open(&path).unwrap().set_len(len - 1).unwrap();
        let JournalFile { records, torn, damage } = read_journal(&path).unwrap();
        let all = every_event();
        assert_eq!(records, all[..all.len() - 1]);
        assert_eq!(torn.map(|t| t.bytes), Some(8 + 25 + 4 - 1));
        assert!(damage.is_empty());
    }

    /// Issue 12: one unknown record made the whole journal unreadable.
    #[test]
    fn an_unknown_event_is_skipped_as_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let mut frames = FrameWriter::open(&path, FileKind::JOURNAL).unwrap();
        frames.append(&[&[0; 24], &[42]]).unwrap();
        frames.flush().unwrap();
        drop(frames);
        JournalWriter::create(&path).unwrap().append_batch(&every_event()).unwrap();
        let journal = read_journal(&path).unwrap();
        assert_eq!(journal.records, every_event());
        assert_eq!(journal.damage, [Damage { offset: 8, bytes: 33, what: "a record of an unknown kind" }]);
    }

    /// Issue 12: a flipped byte in the middle dropped every record after it.
    #[test]
    fn a_flipped_byte_costs_one_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        JournalWriter::create(&path).unwrap().append_batch(&every_event()).unwrap();
        let mut bytes = fs_err::read(&path).unwrap();
        // Second record's frame: header 8 + first frame; flip a byte of its payload, then one of a length.
        let first = 8 + u64::from(u32::from_le_bytes(bytes[8..12].try_into().unwrap())) as usize + 8;
        bytes[first + 12] ^= 0x40;
        fs_err::write(&path, &bytes).unwrap();
        let journal = read_journal(&path).unwrap();
        let mut expected = every_event();
        expected.remove(1);
        assert_eq!(journal.records, expected);
        assert_eq!(journal.damage.len(), 1);
        assert_eq!(journal.damage[0].offset, first as u64);
        assert_eq!(journal.torn, None);

        // A damaged length field: still only that record is lost.
        let mut bytes = fs_err::read(&path).unwrap();
        bytes[first + 12] ^= 0x40;
        bytes[first + 2] = 0xff;
        fs_err::write(&path, &bytes).unwrap();
        assert_eq!(read_journal(&path).unwrap().records, expected);
    }

    #[test]
    fn a_damaged_header_is_damage_not_another_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        JournalWriter::create(&path).unwrap().append_batch(&every_event()).unwrap();
        let mut bytes = fs_err::read(&path).unwrap();
        bytes[3] = b'X';
        fs_err::write(&path, &bytes).unwrap();
        let journal = read_journal(&path).unwrap();
        assert_eq!(journal.records, every_event());
        assert_eq!(journal.damage, [Damage { offset: 0, bytes: 8, what: "a damaged file header" }]);
        fs_err::write(&path, b"something else entirely").unwrap();
        assert_eq!(read_journal(&path).unwrap_err().kind(), io::ErrorKind::InvalidData);
    }
}
