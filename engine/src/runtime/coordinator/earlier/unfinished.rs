//! Outputs of attempts an earlier run started and never finished: the run
//! was killed while they ran (or stopped them). What such an attempt wrote
//! is no result — its instance runs again, or is skipped, cancelled or
//! dropped now — so a new run moves its declared outputs aside at the
//! start, as its own run named them, before anything could read them.
//! An attempt a remote worker may bring back (held for a rejoin) keeps
//! them: it is still writing.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::resume::Previous;
use crate::rundir::RunDir;
use crate::runtime::coordinator::dispatch::job_factory::JobFactory;
use crate::runtime::protocol::job::relative;

/// An unfinished attempt's instance and the outputs its run declared for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfinished {
    /// Its task's name.
    pub task: String,
    /// Its `name[index]`.
    pub label: String,
    /// Its declared outputs, relative to the workflow directory.
    pub outputs: Vec<String>,
}

/// The unfinished attempts `previous` found under `state`, but those
/// `held` names, with their outputs rendered by the graphs of their runs.
pub fn unfinished(state: &Path, base_dir: &Path, previous: &Previous, held: impl Fn(&str) -> bool) -> Vec<Unfinished> {
    let mut factories: HashMap<&str, Option<JobFactory>> = HashMap::new();
    let mut found = Vec::new();
    for (label, run, task) in previous.unfinished().filter(|(label, _, _)| !held(label)) {
        let factory = factories.entry(run).or_insert_with(|| {
            let dir = RunDir { id: run.to_owned(), path: state.join("runs").join(run) };
            JobFactory::new(Arc::new(dir.read_graph().ok()?), base_dir, &dir.path).ok()
        });
        let Some(factory) = factory.as_ref() else { continue };
        let Ok(files) = factory.outputs(task) else { continue };
        let outputs = files.iter().map(|f| relative(f, base_dir).to_string_lossy().into_owned()).collect();
        found.push(Unfinished {
            task: factory.graph().group(task.group).name.clone(),
            label: label.to_owned(),
            outputs,
        });
    }
    found.sort_by(|a, b| (&a.task, &a.label).cmp(&(&b.task, &b.label)));
    found
}
