//! [`RunView`]: one run read back from its directory, live or finished,
//! for `flow explain`, `flow report`, `flow status`, `flow runs` and
//! `flow log`.

use std::io;
use std::time::Duration;

use crate::ir::Graph;
use crate::log::{Damage, JournalReader, JournalRecord, OutputReader, TornTail, read_output};
use crate::rundir::{
    AllocsFile, AttemptIndex, JournalHealth, Meta, RunDir, RunDirError, RunJournal, Summary, WorkerInfo,
};

/// Times a JSON file of a live run that does not parse is read again.
const RETRIES: u32 = 3;
/// The pause before each of them.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// A run as its files describe it, read once. Every reader of runs goes
/// through it, so they all follow one rule:
///
/// - Liveness is read first: a run that ends while it is read is seen as
///   live with its last records, never as dead with missing ones.
/// - `graph.json` is required: missing or damaged, it is an error.
/// - `meta.json`, `summary.json`, `workers.json`, `workers-left.json` and
///   `allocs.json` are optional: a missing one is empty (not written yet, or
///   the run has no such thing); a damaged one is an error. (A live run's
///   file that does not parse is read again a few times first.)
/// - The journal and the output log are read on demand ([`RunView::journal`],
///   [`RunView::each_journal_record`], [`RunView::output`]), since they
///   can hold millions of records. Missing, they hold nothing. Damaged
///   stretches are skipped and counted, the records around them kept. An
///   incomplete record at the end is, on a live run, the one being written,
///   and not reported; on a run that is not live, it is reported, and on a
///   run that ended having written everything it counts as damage (after
///   a full disk, the summary already says what was not recorded;
///   [`JournalHealth`]). A file of the
///   wrong kind, or a record that cannot be decoded, is an error.
///
/// Every error is a [`RunDirError`] naming the file.
#[derive(Debug, Clone)]
pub struct RunView {
    /// The run's directory.
    pub dir: RunDir,
    /// Whether the run is in progress (its process holds the lock).
    pub live: bool,
    /// The compiled graph, with the parts of nested groups known so far.
    pub graph: Graph,
    /// How the run was started (`meta.json`).
    pub meta: Option<Meta>,
    /// How it ended (`summary.json`), once it ended.
    pub summary: Option<Summary>,
    /// The workers connected (`workers.json`; empty before any joined).
    pub workers: Vec<WorkerInfo>,
    /// The workers that left before the run ended (`workers-left.json`).
    pub left: Vec<WorkerInfo>,
    /// The allocation queue and its allocations (`allocs.json`), if the run has one.
    pub allocs: Option<AllocsFile>,
}

impl RunView {
    /// Reads `dir`'s files, all but the journal and the output log.
    pub fn read(dir: &RunDir) -> Result<RunView, RunDirError> {
        let live = dir.is_live();
        let graph = settled(live, &dir.graph(), &|| dir.read_graph())?
            .ok_or_else(|| RunDirError::Missing { path: dir.graph() })?;
        Ok(RunView {
            meta: settled(live, &dir.meta(), &|| dir.read_meta())?,
            summary: settled(live, &dir.summary(), &|| dir.read_summary())?,
            workers: settled(live, &dir.workers(), &|| dir.read_workers())?.unwrap_or_default(),
            left: settled(live, &dir.workers_left(), &|| dir.read_workers_left())?.unwrap_or_default(),
            allocs: settled(live, &dir.allocs(), &|| dir.read_allocs())?,
            dir: dir.clone(),
            live,
            graph,
        })
    }

    /// Whether the run has ended (its summary was written).
    pub fn is_finished(&self) -> bool {
        self.summary.is_some()
    }

    /// Whether it was a `--dry-exec` run, which started no process.
    pub fn is_dry(&self) -> bool {
        self.summary.as_ref().is_some_and(|s| s.dry_exec) || self.meta.as_ref().is_some_and(|m| m.dry_exec)
    }

    /// Reads the journal and folds it per instance.
    pub fn journal(&self) -> Result<RunJournal, RunDirError> {
        let mut journal = RunJournal { live: self.live, ..RunJournal::default() };
        journal.health = self.each_journal_record(|r| journal.apply(&r))?;
        Ok(journal)
    }

    /// Passes every intact record of the journal to `each`, in order,
    /// holding none of them; says what could not be read.
    pub fn each_journal_record(&self, mut each: impl FnMut(JournalRecord)) -> Result<JournalHealth, RunDirError> {
        self.each_placed_record(|record, _| each(record))
    }

    /// Reads the journal once and notes where each attempt's records are,
    /// to read them back by instance with [`AttemptIndex::each`]; says what
    /// could not be read.
    pub fn attempt_index(&self) -> Result<(AttemptIndex, JournalHealth), RunDirError> {
        let mut index = AttemptIndex::new(self.dir.journal());
        let health = self.each_placed_record(|record, offset| index.push(&record, offset))?;
        index.sort();
        Ok((index, health))
    }

    /// Passes every intact record of the journal to `each` with where it
    /// starts, in order; says what could not be read.
    fn each_placed_record(&self, mut each: impl FnMut(JournalRecord, u64)) -> Result<JournalHealth, RunDirError> {
        let path = self.dir.journal();
        let mut reader = match JournalReader::open(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(self.health(&[], None)),
            opened => opened.map_err(|e| RunDirError::reading(&path, e))?,
        };
        while let Some(record) = reader.next() {
            each(record.map_err(|e| RunDirError::reading(&path, e))?, reader.last_start());
        }
        Ok(self.health(reader.damage(), reader.torn_tail()))
    }

    /// The output log, if the run has written one; [`RunView::health`]
    /// says, once it is read, what of it could not be.
    pub fn output(&self) -> Result<Option<OutputReader>, RunDirError> {
        let path = self.dir.output_log();
        match read_output(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            opened => opened.map(Some).map_err(|e| RunDirError::reading(&path, e)),
        }
    }

    /// What of a record file of this run could not be read, by the rule:
    /// a torn tail of a live run is not reported, and is no damage on a
    /// run that ended saying it could not write (its summary names that).
    pub fn health(&self, damage: &[Damage], torn: Option<TornTail>) -> JournalHealth {
        let wrote_all = self.summary.as_ref().is_some_and(|s| s.io_errors.is_empty());
        JournalHealth { damage: damage.to_vec(), torn: torn.filter(|_| !self.live), wrote_all }
    }
}

/// Reads the JSON file `path` with `read`: `None` if it is not there.
/// While the run is live, a file that does not parse is read again a few
/// times first.
fn settled<T>(live: bool, path: &std::path::Path, read: &dyn Fn() -> io::Result<T>) -> Result<Option<T>, RunDirError> {
    let mut tries = 0;
    loop {
        match read() {
            Ok(value) => return Ok(Some(value)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::InvalidData && live && tries < RETRIES => {
                tries += 1;
                std::thread::sleep(RETRY_PAUSE);
            }
            Err(e) => return Err(RunDirError::reading(path, e)),
        }
    }
}
