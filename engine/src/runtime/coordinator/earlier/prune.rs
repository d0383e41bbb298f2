//! Removing old runs (`flow clean`): which run directories a new run would
//! still read to decide what to skip — asked of [`Previous`], the reader
//! `flow run` and `flow plan --why` use — and removing the others.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::resume::Previous;
use crate::rundir::RunDir;

/// Why a run is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// The newest run of its workflow file.
    Newest,
    /// A process runs it now (it holds the run's lock).
    Live,
    /// This many instances stand on its records: their last success, a
    /// failure since, a pending retry.
    InUse(u64),
    /// Its files cannot be read, so what it holds is not known.
    Unreadable(String),
}

/// One run directory and what becomes of it.
#[derive(Debug, Clone)]
pub struct PrunedRun {
    /// The run.
    pub run: RunDir,
    /// The size of its directory, in bytes.
    pub bytes: u64,
    /// Why it is kept; `None`: it is removed.
    pub kept: Option<Kept>,
}

/// Every run under `state` (`.flow`), oldest first, each with whether it
/// is kept: the newest run of each workflow file, a live one, one whose
/// records some instance's standing rests on, one that cannot be read.
pub fn prune_plan(state: &Path) -> Vec<PrunedRun> {
    let runs = RunDir::list(state);
    let mut kept: BTreeMap<String, Kept> = BTreeMap::new();
    let mut by_workflow: BTreeMap<PathBuf, Vec<&RunDir>> = BTreeMap::new();
    for run in &runs {
        if run.is_live() {
            kept.insert(run.id.clone(), Kept::Live);
            continue;
        }
        match run.read_meta() {
            Ok(meta) => by_workflow
                .entry(meta.workflow.file_name().map(PathBuf::from).unwrap_or_default())
                .or_default()
                .push(run),
            Err(e) => {
                kept.insert(run.id.clone(), Kept::Unreadable(e.to_string()));
            }
        }
    }
    for (workflow, group) in &by_workflow {
        let previous = Previous::load(state, workflow);
        let used = previous.runs_in_use();
        for run in group {
            let why = if Some(run) == group.last() {
                Some(Kept::Newest)
            } else if let Some(&n) = used.get(&run.id) {
                Some(Kept::InUse(n))
            } else if !previous.runs_read().contains(&run.id) {
                Some(Kept::Unreadable("its graph or journal cannot be read".to_owned()))
            } else {
                None
            };
            kept.extend(why.map(|why| (run.id.clone(), why)));
        }
    }
    runs.into_iter()
        .map(|run| {
            let bytes = size(&run.path);
            let kept = kept.remove(&run.id);
            PrunedRun { run, bytes, kept }
        })
        .collect()
}

/// Removes the run directory of `run`, unless a process took its lock
/// since it was planned: then it is left, and `false` says so.
pub fn remove_run(run: &RunDir) -> std::io::Result<bool> {
    let Ok(_lock) = run.lock() else { return Ok(false) };
    fs_err::remove_dir_all(&run.path)?;
    Ok(true)
}

/// The bytes of the files under `dir`.
fn size(dir: &Path) -> u64 {
    let Ok(entries) = fs_err::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => size(&entry.path()),
            _ => entry.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}
