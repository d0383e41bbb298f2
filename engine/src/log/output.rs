//! [`OutputRecord`]: a chunk of a task's output, the writer thread
//! ([`OutputLog`]) that appends records to `output.log`, and the streaming
//! [`OutputReader`].
//!
//! A record's payload is 25 bytes of little-endian fields, then the bytes:
//!
//! ```text
//! group: u32 | instance: u64 | attempt: u32 | stream: u8 | time_us: u64 | data
//! ```
//!
//! With the frame's 8 bytes, a record of 10 KiB costs 0.3% in overhead.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use tokio::sync::mpsc;

use super::cursor::Cursor;
use super::{Damage, FileKind, FrameReader, FrameWriter, LogError, TornTail};
use crate::ir::{GroupId, TaskId};

/// Records the channel to the writer thread holds before senders wait.
pub const CHANNEL_CAPACITY: usize = 1024;
/// The writer flushes at least once per this many bytes of records.
const BATCH_BYTES: usize = 4 << 20;
/// Bytes in front of a record's data.
const HEAD_LEN: usize = 25;

/// Which stream a chunk of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum OutputStream {
    /// The task's standard output.
    Stdout,
    /// The task's standard error.
    Stderr,
    /// A message from flow or a worker about the task.
    System,
    /// The output of a cluster allocation's job (its workers' own messages
    /// and the manager's), copied in as the run ends; such a record's
    /// `task` is [`OutputRecord::allocation`]`(id)`, not a task of the graph.
    Allocation,
}

impl OutputStream {
    /// `stdout`, `stderr` or `system`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputStream::Stdout => "stdout",
            OutputStream::Stderr => "stderr",
            OutputStream::System => "system",
            OutputStream::Allocation => "allocation",
        }
    }

    fn code(self) -> u8 {
        match self {
            OutputStream::Stdout => 1,
            OutputStream::Stderr => 2,
            OutputStream::System => 3,
            OutputStream::Allocation => 4,
        }
    }

    fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(OutputStream::Stdout),
            2 => Some(OutputStream::Stderr),
            3 => Some(OutputStream::System),
            4 => Some(OutputStream::Allocation),
            _ => None,
        }
    }
}

/// A chunk of one task's output, as it arrived (serializable, so remote
/// workers can send it to the coordinator).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OutputRecord {
    /// The task instance.
    pub task: TaskId,
    /// Which run of it (0 for the first).
    pub attempt: u32,
    /// Which stream.
    pub stream: OutputStream,
    /// When it arrived, in µs since the Unix epoch.
    pub time_us: u64,
    /// The bytes, not necessarily whole lines (encoded as one run of
    /// bytes, not as a sequence of numbers one by one).
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
}

impl OutputRecord {
    /// The `task` of the records of allocation `id`'s output.
    pub fn allocation(id: u32) -> TaskId {
        TaskId::new(crate::ir::GroupId(u32::MAX), u64::from(id))
    }

    fn head(&self) -> [u8; HEAD_LEN] {
        let mut head = [0; HEAD_LEN];
        head[..4].copy_from_slice(&self.task.group.0.to_le_bytes());
        head[4..12].copy_from_slice(&self.task.instance.to_le_bytes());
        head[12..16].copy_from_slice(&self.attempt.to_le_bytes());
        head[16] = self.stream.code();
        head[17..].copy_from_slice(&self.time_us.to_le_bytes());
        head
    }

    fn decode(payload: &[u8]) -> Result<Self, &'static str> {
        let mut c = Cursor(payload);
        let short = "it is too short";
        let task = TaskId::new(GroupId(c.u32().ok_or(short)?), c.u64().ok_or(short)?);
        let attempt = c.u32().ok_or(short)?;
        let stream = OutputStream::from_code(c.u8().ok_or(short)?).ok_or("unknown stream")?;
        let time_us = c.u64().ok_or(short)?;
        Ok(Self { task, attempt, stream, time_us, data: c.rest().to_vec() })
    }
}

/// Starts the thread that writes `output.log`.
#[derive(Debug)]
pub struct OutputLog;

impl OutputLog {
    /// Opens `path` (see [`FrameWriter::open`]) and starts the writer thread.
    /// Send records through the returned sender (clone it freely); end with
    /// [`OutputLogHandle::finish`].
    pub fn create(path: &Path) -> io::Result<(OutputLogSender, OutputLogHandle)> {
        let writer = FrameWriter::open(path, FileKind::OUTPUT)?;
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        let closing = Arc::new(AtomicBool::new(false));
        let health = Arc::new(LogHealth::default());
        let thread = std::thread::Builder::new().name("flow-output-log".into()).spawn({
            let (closing, health) = (closing.clone(), health.clone());
            move || write_records(rx, writer, &closing, &health)
        })?;
        Ok((OutputLogSender { tx: tx.clone() }, OutputLogHandle { tx, closing, health, thread }))
    }
}

/// What travels to the writer thread.
#[derive(Debug)]
enum Message {
    Record(OutputRecord),
    /// Wakes the thread so it sees that the log is closing.
    Close,
}

/// Sends records to the writer thread. The channel is bounded: a sender
/// waits while the disk falls behind.
#[derive(Debug, Clone)]
pub struct OutputLogSender {
    tx: mpsc::Sender<Message>,
}

impl OutputLogSender {
    /// Sends a record, waiting while the channel is full.
    pub async fn send(&self, record: OutputRecord) -> Result<(), LogError> {
        self.tx.send(Message::Record(record)).await.map_err(|_| LogError::Closed)
    }

    /// Sends a record from a thread outside the async runtime, blocking while
    /// the channel is full. Panics if called from async code.
    pub fn blocking_send(&self, record: OutputRecord) -> Result<(), LogError> {
        self.tx.blocking_send(Message::Record(record)).map_err(|_| LogError::Closed)
    }
}

/// The writer thread.
#[derive(Debug)]
pub struct OutputLogHandle {
    tx: mpsc::Sender<Message>,
    closing: Arc<AtomicBool>,
    health: Arc<LogHealth>,
    thread: JoinHandle<io::Result<()>>,
}

/// Whether the writer thread could write everything, shared with the run:
/// after a write error (a full disk) the thread goes on taking records, so
/// no sender blocks, and notes whose output it dropped.
#[derive(Debug, Default)]
pub struct LogHealth {
    broken: AtomicBool,
    lost: std::sync::Mutex<std::collections::BTreeSet<(TaskId, u32)>>,
}

impl LogHealth {
    /// Whether a write has failed: output sent from now on is not stored.
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }

    /// The attempts (instance, attempt number) some of whose output was not stored.
    pub fn lost(&self) -> Vec<(TaskId, u32)> {
        self.lost.lock().map(|l| l.iter().copied().collect()).unwrap_or_default()
    }

    fn lose(&self, attempts: impl IntoIterator<Item = (TaskId, u32)>) {
        self.broken.store(true, Ordering::Release);
        if let Ok(mut lost) = self.lost.lock() {
            lost.extend(attempts);
        }
    }
}

impl OutputLogHandle {
    /// Whether everything sent so far was written, and what was lost.
    pub fn health(&self) -> Arc<LogHealth> {
        self.health.clone()
    }

    /// Closes the channel (later sends fail with [`LogError::Closed`]), waits
    /// for the thread to write and flush every record sent before, and
    /// returns the first write error. Blocks: from async code, call it in
    /// `spawn_blocking`.
    pub fn finish(self) -> io::Result<()> {
        self.closing.store(true, Ordering::Release);
        // If the channel is full, the thread is busy and sees `closing` after this batch.
        let _ = self.tx.try_send(Message::Close);
        drop(self.tx);
        self.thread.join().map_err(|_| io::Error::other("the output log writer thread panicked"))?
    }
}

/// The writer thread's loop: wait for a record, write all that are waiting
/// (up to [`BATCH_BYTES`]), flush, repeat.
///
/// After the first write error nothing more is written: the records of the
/// batch that failed and of every later one are noted in `health` as lost
/// (part of the failed batch may have reached the file, but not all of it),
/// and the error is returned at the end.
fn write_records(
    mut rx: mpsc::Receiver<Message>,
    mut out: FrameWriter,
    closing: &AtomicBool,
    health: &LogHealth,
) -> io::Result<()> {
    let mut failed: Option<io::Error> = None;
    let mut batch = Vec::new();
    while let Some(first) = rx.blocking_recv() {
        let (mut next, mut bytes) = (Some(first), 0);
        while let Some(message) = next {
            match message {
                Message::Record(r) => {
                    if failed.is_none()
                        && let Err(e) = out.append(&[&r.head(), &r.data])
                    {
                        failed = Some(e);
                    }
                    batch.push((r.task, r.attempt));
                    bytes += HEAD_LEN + r.data.len();
                }
                Message::Close => rx.close(),
            }
            next = if bytes < BATCH_BYTES { rx.try_recv().ok() } else { None };
        }
        if failed.is_none()
            && let Err(e) = out.flush()
        {
            failed = Some(e);
        }
        if failed.is_some() {
            health.lose(batch.drain(..));
        }
        batch.clear();
        if closing.load(Ordering::Acquire) {
            // Records already in the channel are still received, then `None`.
            rx.close();
        }
    }
    match failed {
        Some(e) => Err(e),
        None => out.flush(),
    }
}

/// Reads `output.log` one record at a time (see [`read_output`]).
#[derive(Debug)]
pub struct OutputReader {
    frames: FrameReader,
    payload: Vec<u8>,
}

/// Opens an output log for streaming: iterate for the records, then ask
/// [`OutputReader::torn_tail`]. Iterating again after the end continues
/// with records appended since.
pub fn read_output(path: &Path) -> io::Result<OutputReader> {
    Ok(OutputReader { frames: FrameReader::open(path, FileKind::OUTPUT)?, payload: Vec::new() })
}

impl OutputReader {
    /// The incomplete record the last read stopped at, if any.
    pub fn torn_tail(&self) -> Option<TornTail> {
        self.frames.torn_tail()
    }

    /// Damaged or unknown records skipped so far.
    pub fn damage(&self) -> &[Damage] {
        self.frames.damage()
    }

    /// Where the record the iterator returned last starts, for [`OutputReader::read_at`].
    pub fn last_start(&self) -> u64 {
        self.frames.last_start()
    }

    /// Where the next record starts, for [`OutputReader::read_at`].
    pub fn position(&self) -> u64 {
        self.frames.offset()
    }

    /// The record at `offset` (an earlier [`OutputReader::position`]).
    pub fn read_at(&mut self, offset: u64) -> io::Result<OutputRecord> {
        if !self.frames.read_at(offset, &mut self.payload)? {
            return Err(self.malformed(offset, "it is incomplete"));
        }
        OutputRecord::decode(&self.payload).map_err(|what| self.malformed(offset, what))
    }

    fn malformed(&self, offset: u64, what: &'static str) -> io::Error {
        let path = self.frames.path().to_path_buf();
        LogError::Malformed { path, offset, what }.into()
    }
}

impl Iterator for OutputReader {
    type Item = io::Result<OutputRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.frames.next_into(&mut self.payload) {
                Ok(true) => match OutputRecord::decode(&self.payload) {
                    Ok(record) => return Some(Ok(record)),
                    // A stream this flow does not know: skipped, and reported.
                    Err(what) => self.frames.undecodable(what),
                },
                Ok(false) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(instance: u64, stream: OutputStream, data: &[u8]) -> OutputRecord {
        OutputRecord { task: TaskId::new(GroupId(2), instance), attempt: 1, stream, time_us: 7, data: data.to_vec() }
    }

    #[test]
    fn records_round_trip_through_the_writer_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("output.log");
        let (tx, handle) = OutputLog::create(&path).unwrap();
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    for j in 0..500 {
                        tx.blocking_send(record(i, OutputStream::Stderr, format!("{j}\n").as_bytes())).unwrap();
                    }
                })
            })
            .collect();
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
            tx.send(record(9, OutputStream::System, b"started")).await.unwrap();
        });
        threads.into_iter().for_each(|t| t.join().unwrap());
        handle.finish().unwrap();
        assert!(matches!(tx.blocking_send(record(0, OutputStream::Stdout, b"late")), Err(LogError::Closed)));

        let mut reader = read_output(&path).unwrap();
        let records: Vec<_> = reader.by_ref().map(Result::unwrap).collect();
        assert_eq!((records.len(), reader.torn_tail()), (2001, None));
        assert!(records.contains(&record(9, OutputStream::System, b"started")));
        for i in 0..4 {
            let mine: Vec<_> = records.iter().filter(|r| r.task.instance == i).map(|r| r.data.clone()).collect();
            assert_eq!(mine, (0..500).map(|j| format!("{j}\n").into_bytes()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn overhead_is_small_and_records_can_be_reread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("output.log");
        let (tx, handle) = OutputLog::create(&path).unwrap();
        for i in 0..100 {
            tx.blocking_send(record(i, OutputStream::Stdout, &[b'x'; 10 * 1024])).unwrap();
        }
        handle.finish().unwrap();
        let size = fs_err::metadata(&path).unwrap().len();
        assert!(size as f64 <= 1.05 * 100.0 * 10240.0, "{size}");
        let mut reader = read_output(&path).unwrap();
        let mut records = Vec::new();
        loop {
            let at = reader.position();
            let Some(r) = reader.next() else { break };
            records.push((at, r.unwrap()));
        }
        let (offset, r) = &records[57];
        assert_eq!(&reader.read_at(*offset).unwrap(), r);
        assert_eq!(r.task.instance, 57);
    }

    #[test]
    fn a_torn_tail_keeps_the_records_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("output.log");
        let (tx, handle) = OutputLog::create(&path).unwrap();
        tx.blocking_send(record(0, OutputStream::Stdout, b"kept")).unwrap();
        tx.blocking_send(record(1, OutputStream::Stdout, b"lost")).unwrap();
        handle.finish().unwrap();
        let len = fs_err::metadata(&path).unwrap().len();
        fs_err::OpenOptions::new().write(true).open(&path).unwrap().set_len(len - 3).unwrap();
        let mut reader = read_output(&path).unwrap();
        let data: Vec<_> = reader.by_ref().map(|r| r.unwrap().data).collect();
        assert_eq!(data, [b"kept"]);
        assert_eq!(reader.torn_tail(), Some(TornTail { offset: len - 37, bytes: 34 }));
    }

    /// Issue 12: a record of an unknown stream made the whole log unreadable.
    #[test]
    fn an_unknown_stream_is_skipped_as_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("output.log");
        let mut w = FrameWriter::open(&path, FileKind::OUTPUT).unwrap();
        let mut head = record(0, OutputStream::Stdout, b"").head();
        head[16] = 9;
        w.append(&[&head]).unwrap();
        let kept = record(1, OutputStream::Stdout, b"kept");
        w.append(&[&kept.head(), &kept.data]).unwrap();
        w.flush().unwrap();
        let mut reader = read_output(&path).unwrap();
        let records: Vec<OutputRecord> = reader.by_ref().map(Result::unwrap).collect();
        assert_eq!(records, [kept]);
        assert_eq!(reader.damage(), [Damage { offset: 8, bytes: 33, what: "unknown stream" }]);
    }
}
