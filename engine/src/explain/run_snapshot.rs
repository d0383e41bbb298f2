//! [`RunSnapshot`]: what `flow explain` reads from a run directory, live or
//! finished — the graph, the journal folded per instance, the workers and
//! the allocation queue.

use std::collections::HashMap;
use std::io;

use crate::ir::{Graph, TaskId};
use crate::log::{JournalEvent, JournalFile, JournalRecord, JournalState, TornTail, read_journal};
use crate::rundir::{AllocsFile, RunDir, WorkerInfo, if_written};

/// A run as its files describe it at one moment.
#[derive(Debug, Clone)]
pub struct RunSnapshot {
    /// The compiled graph (`graph.json`).
    pub graph: Graph,
    /// The latest state of each instance with a journal record.
    pub journal: JournalState,
    /// Failed attempts per instance, for instances that failed at least once.
    pub failures: HashMap<TaskId, u32>,
    /// The workers connected (`workers.json`; empty before any joined).
    pub workers: Vec<WorkerInfo>,
    /// The workers that left before the run ended (`workers-left.json`).
    pub left: Vec<WorkerInfo>,
    /// The allocation queue and its allocations (`allocs.json`), if the run has one.
    pub allocs: Option<AllocsFile>,
    /// Whether the run is in progress (its process holds the lock).
    pub live: bool,
    /// When the snapshot was taken (µs since the Unix epoch): worker
    /// lifetimes are measured from here.
    pub now_us: u64,
    /// The incomplete record at the end of the journal, if any.
    pub torn: Option<TornTail>,
}

impl RunSnapshot {
    /// Reads `run` as of `now_us`. Missing `workers.json`, `allocs.json`
    /// and journal mean no workers, no queue and no records yet.
    /// Every error names the file.
    pub fn read(run: &RunDir, now_us: u64) -> io::Result<Self> {
        // Liveness first: a run that ends while we read is then seen as
        // live with its last records, never as dead with missing ones.
        let live = run.is_live();
        let graph = settled(|| run.read_graph())?;
        let JournalFile { records, torn, .. } =
            if run.journal().exists() { read_journal(&run.journal())? } else { JournalFile::default() };
        let workers = if_written(settled(|| run.read_workers()))?.unwrap_or_default();
        let allocs = if_written(settled(|| run.read_allocs()))?;
        let mut snapshot = Self::new(graph, &records, workers, allocs, live, now_us);
        snapshot.torn = torn;
        snapshot.left = if_written(settled(|| run.read_workers_left()))?.unwrap_or_default();
        Ok(snapshot)
    }

    /// A snapshot from what the files hold: `records` are the journal's, in order.
    pub fn new(
        graph: Graph,
        records: &[JournalRecord],
        workers: Vec<WorkerInfo>,
        allocs: Option<AllocsFile>,
        live: bool,
        now_us: u64,
    ) -> Self {
        let mut failures = HashMap::new();
        for r in records {
            if matches!(r.event, JournalEvent::Failed { .. }) {
                *failures.entry(r.task).or_insert(0) += 1;
            }
        }
        let journal = JournalState::from_records(records);
        Self { graph, journal, failures, workers, left: Vec::new(), allocs, live, now_us, torn: None }
    }

    /// Failed attempts of `task` so far.
    pub fn failures(&self, task: TaskId) -> u32 {
        self.failures.get(&task).copied().unwrap_or(0)
    }

    /// Whether a failed `task` will not run again: it used up its retries,
    /// or the run is over. (The scheduler retries while failures <= retries.)
    pub fn failed_for_good(&self, task: TaskId) -> bool {
        !self.live || self.failures(task) > self.graph.group(task.group).retries
    }
}

/// Reads a run file with `read`; tries again a few times if it does not
/// parse, since a live run may be writing it.
fn settled<T>(read: impl Fn() -> io::Result<T>) -> io::Result<T> {
    let mut tries = 0;
    loop {
        match read() {
            Err(e) if e.kind() == io::ErrorKind::InvalidData && tries < 3 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            result => return result,
        }
    }
}
