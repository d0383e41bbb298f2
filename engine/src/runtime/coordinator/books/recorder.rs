//! [`Recorder`]: where the driver's records and events go. Journal records
//! and display events of one step travel together, one wake-up of each
//! writer thread per step; the recorder also knows when storage failed.

use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use super::journal_thread::{Batch, JournalSender};
use crate::host::now_us;
use crate::ir::TaskId;
use crate::log::{JournalEvent, JournalRecord, LogHealth};
use crate::runtime::coordinator::outgoing::Release;
use crate::runtime::event::Event;

/// The longest events wait before going to the display.
pub(in crate::runtime::coordinator) const EVENT_DELAY: Duration = Duration::from_millis(20);
/// How many events a step gathers before they are handed on mid-step.
const FULL: usize = 4096;
/// The least room a new batch of events starts with.
const ROOM: usize = 256;

/// The journal's and the display's ends of the run loop.
pub(in crate::runtime::coordinator) struct Recorder {
    journal: JournalSender,
    /// Whether the output log could write everything.
    log_health: Arc<LogHealth>,
    events: std_mpsc::Sender<Vec<Event>>,
    /// Event batches the display is done with, to fill again.
    spare_events: std_mpsc::Receiver<Vec<Event>>,
    /// Records and events of the current step, sent together.
    journal_batch: Vec<JournalRecord>,
    event_batch: Vec<Event>,
    /// When events were last sent.
    last_events: Instant,
}

impl Recorder {
    /// A recorder sending records to `journal` and events to `events`.
    pub(in crate::runtime::coordinator) fn new(
        journal: JournalSender,
        log_health: Arc<LogHealth>,
        events: std_mpsc::Sender<Vec<Event>>,
        spare_events: std_mpsc::Receiver<Vec<Event>>,
    ) -> Self {
        Self {
            journal,
            log_health,
            events,
            spare_events,
            journal_batch: Vec::new(),
            event_batch: Vec::new(),
            last_events: Instant::now(),
        }
    }

    /// Journals `event` of attempt `attempt` of `task`, now.
    pub(in crate::runtime::coordinator) fn journal(&mut self, task: TaskId, attempt: u32, event: JournalEvent) {
        self.record(JournalRecord::new(now_us(), task, attempt, event));
    }

    /// Journals `record`.
    pub(in crate::runtime::coordinator) fn record(&mut self, record: JournalRecord) {
        self.journal_batch.push(record);
    }

    /// Shows `event`.
    pub(in crate::runtime::coordinator) fn event(&mut self, event: Event) {
        self.event_batch.push(event);
    }

    /// Whether events wait to be shown.
    pub(in crate::runtime::coordinator) fn has_events(&self) -> bool {
        !self.event_batch.is_empty()
    }

    /// Whether so many events wait that they should go now, mid-step.
    pub(in crate::runtime::coordinator) fn is_full(&self) -> bool {
        self.event_batch.len() >= FULL
    }

    /// Whether the output log lost output.
    pub(in crate::runtime::coordinator) fn log_broken(&self) -> bool {
        self.log_health.is_broken()
    }

    /// What can no longer be written, as the summary says it, if anything.
    pub(in crate::runtime::coordinator) fn storage_failure(&self) -> Option<&'static str> {
        if self.journal.is_broken() {
            Some("the journal could not be written; the run stopped")
        } else if self.log_health.is_broken() {
            Some("output.log could not be written; the run stopped")
        } else {
            None
        }
    }

    /// Hands this step's records, and `messages` to remote workers, to the
    /// journal's thread, which sends the messages once the records are
    /// written, and the step's events to the display (one wake-up each);
    /// `see` looks at each event as it goes.
    ///
    /// Journal records go at once: they are what a resumed run trusts.
    /// Events only feed the display, so they wait up to [`EVENT_DELAY`] to
    /// travel together (one wake-up of the display thread, not one per task).
    pub(in crate::runtime::coordinator) fn flush(&mut self, messages: Vec<Release>, see: impl FnMut(&Event)) {
        if !self.journal_batch.is_empty() || !messages.is_empty() {
            let room = self.journal.spare().unwrap_or_default();
            let records = std::mem::replace(&mut self.journal_batch, room);
            self.journal.send(Batch { records, messages });
        }
        if !self.event_batch.is_empty() && self.last_events.elapsed() >= EVENT_DELAY {
            self.flush_events(see);
        }
    }

    /// Sends the waiting events now; `see` looks at each as it goes.
    pub(in crate::runtime::coordinator) fn flush_events(&mut self, see: impl FnMut(&Event)) {
        if !self.event_batch.is_empty() {
            self.event_batch.iter().for_each(see);
            let room = self.spare_events.try_recv().unwrap_or_else(|_| Vec::with_capacity(ROOM));
            let _ = self.events.send(std::mem::replace(&mut self.event_batch, room));
        }
        self.last_events = Instant::now();
    }
}
