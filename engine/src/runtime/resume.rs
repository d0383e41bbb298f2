//! Resuming: which instances an earlier run already finished, by fingerprint,
//! and which ones `--force` / `--only` make run again regardless.

use std::collections::HashMap;
use std::path::Path;

use super::fingerprint::Fingerprint;
use super::run_dir::RunDir;
use crate::compile::Selector;
use crate::ir::{Graph, TaskId};
use crate::log::{JournalState, JournalStatus, read_journal};

/// What earlier runs of the same workflow left behind.
#[derive(Debug, Default)]
pub struct Previous {
    /// Fingerprint of each instance's last successful attempt, by `name[index]`.
    fingerprints: HashMap<String, Fingerprint>,
    /// Instances that must run again (`--only` and their dependents), per group.
    forced: Option<Vec<Vec<bool>>>,
}

impl Previous {
    /// Reads the earlier runs of `workflow` under `state`, oldest first, so
    /// each instance keeps the fingerprint of its latest success; with
    /// `force`, nothing is reused.
    pub fn load(state: &Path, workflow: &Path, force: bool) -> Previous {
        let mut fingerprints = HashMap::new();
        if force {
            return Previous { fingerprints, forced: None };
        }
        for run in RunDir::list(state).into_iter().filter(|r| same_workflow(r, workflow)) {
            let Ok(text) = fs_err::read_to_string(run.graph()) else { continue };
            let Ok(graph) = serde_json::from_str::<Graph>(&text) else { continue };
            let Ok((records, _torn)) = read_journal(&run.journal()) else { continue };
            for (task, entry) in JournalState::from_records(&records).iter() {
                let done = matches!(entry.status, JournalStatus::Succeeded | JournalStatus::Cached);
                // `--dry-exec` successes have no fingerprint and did no work.
                let fp = entry.fingerprint.filter(|fp| *fp != Fingerprint::default());
                match (done, fp) {
                    (true, Some(fp)) => {
                        fingerprints.insert(graph.label(*task), fp);
                    }
                    // An attempt that started and did not succeed may have
                    // overwritten the outputs of an earlier success.
                    (false, _) if entry.started_us.is_some() => {
                        fingerprints.remove(&graph.label(*task));
                    }
                    _ => {}
                }
            }
        }
        Previous { fingerprints, forced: None }
    }

    /// Makes the instances `only` selects, and everything downstream of them, run again.
    pub fn force(&mut self, graph: &Graph, only: &[Selector]) -> Result<(), String> {
        if only.is_empty() {
            return Ok(());
        }
        let mut forced: Vec<Vec<bool>> = graph.groups.iter().map(|g| vec![false; g.count as usize]).collect();
        for sel in only {
            let g =
                graph.find(&sel.name).ok_or_else(|| format!("`--only {}`: no task named `{}`", sel.name, sel.name))?;
            match &sel.indices {
                None => forced[g.index()].iter_mut().for_each(|f| *f = true),
                Some(ranges) => {
                    for r in ranges {
                        for k in 0..r.count {
                            let index = r.get(k);
                            let pos = graph.position(g, index).ok_or_else(|| {
                                format!("`--only`: `{}` has no instance with index {index}", sel.name)
                            })?;
                            forced[g.index()][pos as usize] = true;
                        }
                    }
                }
            }
        }
        // Groups are in topological order; a group's edges to itself need a fixpoint.
        for (to, group) in graph.groups.iter().enumerate() {
            let incoming: Vec<_> = graph.edges.iter().filter(|e| e.to.index() == to).collect();
            loop {
                let mut changed = false;
                for e in &incoming {
                    let from_count = graph.group(e.from).count;
                    for i in 0..group.count {
                        if !forced[to][i as usize]
                            && e.kind.sources(i, from_count).any(|s| forced[e.from.index()][s as usize])
                        {
                            forced[to][i as usize] = true;
                            changed = true;
                        }
                    }
                }
                if !changed || incoming.iter().all(|e| e.from.index() != to) {
                    break;
                }
            }
        }
        self.forced = Some(forced);
        Ok(())
    }

    /// The fingerprint to compare against before running `task`, unless it must run again.
    pub fn fingerprint(&self, task: TaskId, label: &str) -> Option<Fingerprint> {
        if let Some(forced) = &self.forced
            && forced[task.group.index()][task.instance as usize]
        {
            return None;
        }
        self.fingerprints.get(label).copied()
    }
}

fn same_workflow(run: &RunDir, workflow: &Path) -> bool {
    let Ok(text) = fs_err::read_to_string(run.meta()) else { return false };
    let Ok(meta) = serde_json::from_str::<serde_json::Value>(&text) else { return false };
    meta["workflow"].as_str().is_some_and(|w| Path::new(w) == workflow)
}
