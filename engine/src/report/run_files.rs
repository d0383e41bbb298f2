//! [`RunFiles`]: what a report is made from, read from a run directory, and
//! the stderr tails of failed attempts, read from its output log.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ReportError;
use crate::diag::Source;
use crate::ir::{Graph, TaskId};
use crate::log::{JournalReader, JournalRecord, OutputStream, read_output};
use crate::rundir::{AllocsFile, RunDir, Summary, WorkerInfo, if_written};

/// Lines of standard error kept for each failure.
pub const STDERR_LINES: usize = 20;
/// Bytes of standard error kept per attempt while reading, before cutting lines.
const STDERR_BYTES: usize = 8 << 10;

/// The contents of a run directory a report needs.
#[derive(Debug, Clone)]
pub struct RunFiles {
    /// The run's id.
    pub id: String,
    /// The compiled graph (`graph.json`).
    pub graph: Graph,
    /// The workflow file as it is now, for `file:line:col` of tasks; named by its file name.
    pub source: Option<Arc<Source>>,
    /// The workflow file's path, as `meta.json` records it.
    pub workflow_file: Option<String>,
    /// When the run started (`meta.json`).
    pub started_us: Option<u64>,
    /// The command line that started it, if `meta.json` records it.
    pub command: Option<Vec<String>>,
    /// Whether it was a `--dry-exec` run, which started no process.
    pub dry_exec: bool,
    /// The journal, read record by record (it may not exist yet).
    pub journal: PathBuf,
    /// `summary.json`, if the run ended.
    pub summary: Option<Summary>,
    /// The workers that joined (`workers.json` and `workers-left.json`).
    pub workers: Vec<WorkerInfo>,
    /// `allocs.json`, for a run with an allocation queue.
    pub allocs: Option<AllocsFile>,
    /// What could not be read completely.
    pub warnings: Vec<String>,
}

impl RunFiles {
    /// Reads `run`'s files; those a run may not have written yet are left empty.
    pub fn read(run: &RunDir) -> Result<RunFiles, ReportError> {
        let graph = run.read_graph()?;
        let meta = if_written(run.read_meta())?;
        let workflow_file = meta.as_ref().map(|m| m.workflow.display().to_string());
        let source = workflow_file.as_deref().and_then(|file| {
            let text = fs_err::read_to_string(file).ok()?;
            let name = Path::new(file).file_name()?.to_string_lossy().into_owned();
            Some(Source::new(name, text))
        });
        let summary = if_written(run.read_summary())?;
        let mut workers = if_written(run.read_workers())?.unwrap_or_default();
        workers.extend(if_written(run.read_workers_left())?.unwrap_or_default());
        workers.sort_by_key(|w| w.id);
        workers.dedup_by_key(|w| w.id);
        let allocs = if_written(run.read_allocs())?;
        Ok(RunFiles {
            id: run.id.clone(),
            graph,
            source,
            workflow_file,
            started_us: meta.as_ref().map(|m| m.started_us),
            command: meta.as_ref().map(|m| m.command.clone()).filter(|c| !c.is_empty()),
            dry_exec: meta.is_some_and(|m| m.dry_exec),
            journal: run.journal(),
            summary,
            workers,
            allocs,
            warnings: Vec::new(),
        })
    }

    /// Passes every intact record of the journal to `each`, in order,
    /// without holding them; says in `warnings`, if given, what could not be read.
    pub(super) fn each_record(
        &self,
        warnings: Option<&mut Vec<String>>,
        mut each: impl FnMut(JournalRecord),
    ) -> Result<(), ReportError> {
        if !self.journal.exists() {
            return Ok(());
        }
        let read = |source| ReportError::Read { path: self.journal.clone(), source };
        let mut reader = JournalReader::open(&self.journal).map_err(read)?;
        for record in reader.by_ref() {
            each(record.map_err(read)?);
        }
        if let Some(warnings) = warnings {
            if let Some(torn) = reader.torn_tail() {
                warnings.push(format!("the journal ends with {} bytes of an incomplete record; ignored", torn.bytes));
            }
            warnings.extend(reader.damage().iter().map(|d| format!("the journal is damaged: {d}")));
        }
        Ok(())
    }
}

/// The last [`STDERR_LINES`] lines of standard error of each attempt in
/// `wanted`, from `run`'s output log; warnings for what could not be read.
pub(super) fn stderr_tails(
    run: &RunDir,
    wanted: &[(TaskId, u32)],
    warnings: &mut Vec<String>,
) -> Result<HashMap<(TaskId, u32), Vec<String>>, ReportError> {
    let path = run.output_log();
    let mut tails: HashMap<(TaskId, u32), Vec<u8>> = wanted.iter().map(|&key| (key, Vec::new())).collect();
    if wanted.is_empty() || !path.exists() {
        return Ok(HashMap::new());
    }
    let read = |source| ReportError::Read { path: path.clone(), source };
    let mut reader = read_output(&path).map_err(read)?;
    for record in reader.by_ref() {
        let record = record.map_err(read)?;
        if record.stream != OutputStream::Stderr {
            continue;
        }
        if let Some(tail) = tails.get_mut(&(record.task, record.attempt)) {
            tail.extend(&record.data);
            if tail.len() > 2 * STDERR_BYTES {
                tail.drain(..tail.len() - STDERR_BYTES);
            }
        }
    }
    if let Some(torn) = reader.torn_tail() {
        warnings.push(format!("the output log ends with {} bytes of an incomplete record; ignored", torn.bytes));
    }
    warnings.extend(reader.damage().iter().map(|d| format!("the output log is damaged: {d}")));
    Ok(tails
        .into_iter()
        .map(|(key, bytes)| {
            let text = String::from_utf8_lossy(&bytes);
            let lines: Vec<&str> = text.lines().collect();
            (key, lines[lines.len().saturating_sub(STDERR_LINES)..].iter().map(|l| (*l).to_owned()).collect())
        })
        .collect())
}
