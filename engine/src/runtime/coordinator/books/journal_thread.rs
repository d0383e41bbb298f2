//! The journal's thread: it writes the driver's records in batches and,
//! once a batch is written, sends the messages to remote workers that the
//! batch made safe to send — group commit: a job leaves for a remote
//! worker only after the record saying it started there is in the
//! journal, so a coordinator killed at any moment leaves a resumed run
//! that knows every task its workers may be running, and holds it for
//! them instead of running it a second time. One write covers every job
//! of a step, so this costs one write per step, not one per task.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::log::{JournalRecord, JournalWriter};
use crate::runtime::coordinator::outgoing::Release;

/// One step's records, and the messages to remote workers that wait for them.
#[derive(Default)]
pub(in crate::runtime::coordinator) struct Batch {
    /// What the step journals.
    pub(in crate::runtime::coordinator) records: Vec<JournalRecord>,
    /// What the step sends to remote workers, in order.
    pub(in crate::runtime::coordinator) messages: Vec<Release>,
}

/// The longest record list the thread hands back for reuse; a longer one
/// (a burst) is dropped, so that a burst does not stay in memory.
const SPARE_MAX: usize = 16_384;
/// How long the journal thread lets records gather after a write that
/// released no message (one that did wakes no job late).
const JOURNAL_PAUSE: Duration = Duration::from_millis(2);

/// The driver's end of the journal's thread.
pub(in crate::runtime::coordinator) struct JournalSender {
    tx: std_mpsc::Sender<Batch>,
    /// Set once a write failed: later records are dropped, messages still go.
    broken: Arc<AtomicBool>,
    /// Record lists the thread is done with, emptied, for the next steps:
    /// memory written once is used again instead of fresh pages.
    spare: std_mpsc::Receiver<Vec<JournalRecord>>,
}

impl JournalSender {
    /// Hands `batch` to the thread.
    pub(in crate::runtime::coordinator) fn send(&self, batch: Batch) {
        if let Err(std_mpsc::SendError(batch)) = self.tx.send(batch) {
            // The thread is gone (it panicked): a worker still gets its messages.
            release(batch.messages);
        }
    }

    /// An empty list for a step's records, from one the thread is done with if there is one.
    pub(in crate::runtime::coordinator) fn spare(&self) -> Option<Vec<JournalRecord>> {
        self.spare.try_recv().ok()
    }

    /// Whether the journal can no longer be written.
    pub(in crate::runtime::coordinator) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }
}

/// Starts the thread writing to `writer`. It takes every batch sent,
/// writes their records together, then releases their messages; after a
/// failed write it only releases messages (the run stops), and it returns
/// the first error once the sender is dropped.
pub(in crate::runtime::coordinator) fn start(
    mut writer: JournalWriter,
) -> (JournalSender, JoinHandle<std::io::Result<()>>) {
    let (tx, rx) = std_mpsc::channel::<Batch>();
    let (spare_tx, spare) = std_mpsc::channel();
    let broken = Arc::new(AtomicBool::new(false));
    let flag = broken.clone();
    let delay = test_delay();
    let handle = std::thread::spawn(move || {
        let mut failed = None;
        let mut batches = Vec::new();
        while let Ok(batch) = rx.recv() {
            batches.push(batch);
            batches.extend(rx.try_iter());
            if let Some(delay) = delay {
                std::thread::sleep(delay);
            }
            if failed.is_none()
                && let Err(e) = writer.append_batches(batches.iter().map(|b| b.records.as_slice()))
            {
                flag.store(true, Ordering::Relaxed);
                failed = Some(e);
            }
            let mut released = false;
            for Batch { mut records, messages } in batches.drain(..) {
                released |= !messages.is_empty();
                release(messages);
                if records.capacity() <= SPARE_MAX {
                    records.clear();
                    let _ = spare_tx.send(records);
                }
            }
            if !released {
                // Let records gather for a moment: a busy run then costs a few
                // hundred wake-ups of this thread a second, not one per task,
                // and a record still reaches the file within milliseconds.
                std::thread::sleep(JOURNAL_PAUSE);
            }
        }
        failed.map_or(Ok(()), Err)
    });
    (JournalSender { tx, broken, spare }, handle)
}

/// Sends each message to its worker (one that left no longer reads them).
fn release(messages: Vec<Release>) {
    for (tx, message) in messages {
        let _ = tx.send(message);
    }
}

/// A pause before each write, to widen the window in which a killed
/// coordinator has sent what it has not yet journaled; set by the CLI tests
/// through `FLOW_DEBUG_JOURNAL_DELAY_MS`, in debug builds only.
fn test_delay() -> Option<Duration> {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("FLOW_DEBUG_JOURNAL_DELAY_MS").ok().and_then(|v| v.parse().ok()) {
        return Some(Duration::from_millis(ms));
    }
    None
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::*;
    use crate::log::{JournalEvent, read_journal};
    use crate::runtime::coordinator::outgoing::Outgoing;
    use crate::runtime::core::tests::env::t;
    use crate::runtime::protocol::messages::ToWorker;

    #[test]
    fn a_message_leaves_only_once_the_records_before_it_are_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("journal");
        let (sender, thread) = start(JournalWriter::create(&path).expect("journal"));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let started = JournalRecord::new(1, t(0, 0), 0, JournalEvent::Started { worker: 1, ready_us: None });
        sender.send(Batch {
            records: vec![started.clone()],
            messages: vec![(tx.clone(), Outgoing::Message(ToWorker::StopAll))],
        });
        sender.send(Batch { records: Vec::new(), messages: vec![(tx, Outgoing::Message(ToWorker::Shutdown))] });
        let first = rx.blocking_recv().expect("released");
        // By the time the worker has it, the record is in the file.
        assert_eq!(read_journal(&path).expect("read").records, [started]);
        assert_eq!(
            (first, rx.blocking_recv()),
            (Outgoing::Message(ToWorker::StopAll), Some(Outgoing::Message(ToWorker::Shutdown))),
            "in order"
        );
        drop(sender);
        thread.join().expect("thread").expect("written");
    }

    #[test]
    fn the_thread_hands_back_each_record_list_emptied_for_the_next_step() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("journal");
        let (sender, thread) = start(JournalWriter::create(&path).expect("journal"));
        let record = |i: u64| JournalRecord::new(i, t(0, i), 0, JournalEvent::Started { worker: 1, ready_us: None });
        let mut records = Vec::with_capacity(100);
        records.extend((0..3).map(record));
        sender.send(Batch { records, messages: Vec::new() });
        let back = (0..500).find_map(|_| {
            let spare = sender.spare();
            if spare.is_none() {
                std::thread::sleep(Duration::from_millis(10));
            }
            spare
        });
        let back = back.expect("handed back");
        assert!(back.is_empty() && back.capacity() >= 100, "emptied, its room kept: {}", back.capacity());
        assert_eq!(read_journal(&path).expect("read").records.len(), 3);
        // A burst's list is freed instead.
        sender.send(Batch { records: Vec::with_capacity(SPARE_MAX + 1), messages: Vec::new() });
        drop(sender);
        thread.join().expect("thread").expect("written");
    }
}
