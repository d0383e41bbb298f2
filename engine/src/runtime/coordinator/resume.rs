//! Resuming: which instances an earlier run already finished, by fingerprint,
//! and which ones `--force` / `--only` make run again regardless.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::ir::Selector;
use crate::ir::{EdgeKind, Graph, TaskId};
use crate::log::{JournalFile, JournalState, JournalStatus, Wrote, read_journal};
use crate::rundir::RunDir;
use crate::runtime::protocol::fingerprint::Fingerprint;

/// What earlier runs of the same workflow left behind.
#[derive(Debug, Default)]
pub struct Previous {
    /// Where each instance stands after the earlier runs, by `name[index]`.
    standing: HashMap<String, Standing>,
    /// Every success of every earlier run, the latest per task name and
    /// fingerprint, with its label then and what it left: the cache is
    /// looked up by what an instance is, not only where it sits.
    successes: HashMap<String, HashMap<Fingerprint, (String, Arc<Wrote>)>>,
    /// The variants successes of each task ran in.
    variants: HashMap<String, Vec<u32>>,
    /// Instances whose last attempt failed and was to be retried after a
    /// `retry_delay`, by `name[index]`: when that retry was due.
    retry_at: HashMap<String, u64>,
    /// The ids of the runs read, oldest first ([`Standing::Done`] points here).
    runs: Vec<String>,
    /// Instances that must run again (`--only` and their dependents), per group.
    forced: Option<Vec<Forced>>,
    /// What could not be read, and what was skipped: said before the run starts.
    pub warnings: Vec<String>,
}

/// Where an instance stands after the earlier runs, as a new run sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Finished — ran, or was skipped as unchanged — with this fingerprint.
    Done {
        /// The fingerprint of its last success.
        fingerprint: Fingerprint,
        /// The run that did the work (a position in the runs read).
        run: u32,
        /// When it last ended, in µs since the Unix epoch.
        ended_us: Option<u64>,
        /// The variant it ran in and the outputs it left (shared with
        /// the success kept by fingerprint).
        wrote: Arc<Wrote>,
    },
    /// An attempt started after its last success and did not succeed.
    Tainted,
    /// Its last attempt succeeded, but this file it reads changed while it
    /// ran: the result is not trusted, and it runs again.
    Untrusted(String),
    /// Its attempts failed, and it never succeeded.
    Failed,
}

impl Previous {
    /// Reads the earlier runs of `workflow` under `state`, oldest first, so
    /// each instance keeps the fingerprint of its latest success; with
    /// `force`, nothing is reused. Every intact record counts: a damaged
    /// stretch of a journal is skipped (and reported), not the whole run.
    pub fn load(state: &Path, workflow: &Path, force: bool) -> Previous {
        let mut previous = Previous::default();
        if force {
            return previous;
        }
        for run in RunDir::list(state) {
            match run_of(&run, workflow) {
                Ok(Some((graph, journal))) => {
                    for damage in &journal.damage {
                        previous.warnings.push(format!("run {}: journal: {damage}", run.id));
                    }
                    previous.remember(&graph, &journal, &run.id);
                }
                Ok(None) => {}
                Err(why) => previous.warnings.push(format!("run {}: {why}; its results are not reused", run.id)),
            }
        }
        for (name, wrote) in previous.successes.iter().flat_map(|(name, s)| s.values().map(move |(_, w)| (name, w))) {
            let variants = previous.variants.entry(name.clone()).or_default();
            if !variants.contains(&wrote.variant) {
                variants.push(wrote.variant);
            }
        }
        previous
    }

    /// Takes in the journal of run `id`.
    fn remember(&mut self, graph: &Graph, journal: &JournalFile, id: &str) {
        self.runs.push(id.to_owned());
        let this = self.runs.len() as u32 - 1;
        for (task, entry) in JournalState::from_records(&journal.records).iter() {
            if graph.groups.get(task.group.index()).is_none_or(|g| task.instance >= g.count) {
                continue;
            }
            match entry.retry_at_us.filter(|_| entry.status == JournalStatus::Failed) {
                Some(at) => self.retry_at.insert(graph.label(*task), at),
                None if self.retry_at.is_empty() => None,
                None => self.retry_at.remove(&graph.label(*task)),
            };
            let done = matches!(entry.status, JournalStatus::Succeeded | JournalStatus::Cached);
            // `--dry-exec` successes have no fingerprint and did no work.
            let fp = entry.fingerprint.filter(|fp| *fp != Fingerprint::default());
            match (done, fp) {
                // A file changed while it ran: what it left is not trusted.
                (true, Some(_)) if entry.untrusted.is_some() => {
                    let file = entry.untrusted.clone().unwrap_or_default();
                    self.standing.insert(graph.label(*task), Standing::Untrusted(file));
                }
                (true, Some(fp)) => {
                    let label = graph.label(*task);
                    let mut wrote = Arc::new(entry.wrote.clone().unwrap_or_default());
                    if wrote.outputs.is_none() {
                        // Written before outputs were recorded: the variant is in the metrics.
                        Arc::make_mut(&mut wrote).variant = entry.metrics.as_ref().map_or(0, |m| m.variant);
                    }
                    // A skip keeps pointing at the run that did the work.
                    let run = match (entry.status, self.standing.get(&label)) {
                        (JournalStatus::Cached, Some(Standing::Done { fingerprint, run, wrote: before, .. }))
                            if *fingerprint == fp =>
                        {
                            if wrote.outputs.is_none() {
                                wrote = before.clone();
                            }
                            *run
                        }
                        _ => this,
                    };
                    let of_task = self.successes.entry(graph.group(task.group).name.clone()).or_default();
                    of_task.insert(fp, (label.clone(), wrote.clone()));
                    self.standing
                        .insert(label, Standing::Done { fingerprint: fp, run, ended_us: entry.ended_us, wrote });
                }
                // An attempt that started and did not succeed may have
                // overwritten the outputs of an earlier success.
                (false, _) if entry.started_us.is_some() => {
                    let label = graph.label(*task);
                    let after_success = matches!(
                        self.standing.get(&label),
                        Some(Standing::Done { .. } | Standing::Tainted | Standing::Untrusted(_))
                    );
                    self.standing.insert(label, if after_success { Standing::Tainted } else { Standing::Failed });
                }
                _ => {}
            }
        }
    }

    /// Where the instance labelled `label` stands, if an earlier run got to it.
    pub fn standing(&self, label: &str) -> Option<&Standing> {
        self.standing.get(label)
    }

    /// When the retry of the instance labelled `label` was due, if the last
    /// run to get to it failed it and meant to retry it after a delay.
    pub fn retry_at(&self, label: &str) -> Option<u64> {
        self.retry_at.get(label).copied()
    }

    /// Whether some instance waits for a retry an earlier run scheduled.
    pub fn has_retries(&self) -> bool {
        !self.retry_at.is_empty()
    }

    /// The id of the run a [`Standing::Done`] points at.
    pub fn run_id(&self, run: u32) -> Option<&str> {
        self.runs.get(run as usize).map(String::as_str)
    }

    /// Makes the instances `only` selects, and everything downstream of them, run again.
    pub fn force(&mut self, graph: &Graph, only: &[Selector]) -> Result<(), String> {
        if only.is_empty() {
            return Ok(());
        }
        let mut forced: Vec<Forced> =
            graph.groups.iter().map(|g| Forced::Some(vec![false; g.count as usize])).collect();
        for sel in only {
            let selected = sel.resolve(graph).map_err(|e| format!("`--only`: {e}"))?;
            match selected.positions {
                None => forced[selected.group.index()] = Forced::All,
                Some(positions) => positions.into_iter().for_each(|p| forced[selected.group.index()].set(p)),
            }
        }
        // Groups are in topological order; a group's edges to itself need a fixpoint.
        for (to, group) in graph.groups.iter().enumerate() {
            let incoming: Vec<_> = graph.edges.iter().filter(|e| e.to.index() == to).collect();
            loop {
                let mut changed = false;
                for e in &incoming {
                    let from = e.from.index();
                    if matches!(forced[to], Forced::All) || !forced[from].any() {
                        continue;
                    }
                    // A whole source, or a group known only at run time on
                    // either side, forces the whole group.
                    if matches!(forced[from], Forced::All) && e.kind == EdgeKind::All
                        || graph.is_dynamic(e.from)
                        || graph.is_dynamic(e.to)
                    {
                        forced[to] = Forced::All;
                        changed = true;
                        continue;
                    }
                    let from_count = graph.group(e.from).count;
                    for i in 0..group.count {
                        if !forced[to].get(i) && e.kind.sources(i, from_count).any(|s| forced[from].get(s)) {
                            forced[to].set(i);
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

    /// The groups of `graph` some instance of which an earlier run finished:
    /// their instances are compared with it before they go to a worker.
    pub fn finished_groups(&self, graph: &Graph) -> Vec<crate::ir::GroupId> {
        let names: std::collections::HashSet<&str> = self
            .standing
            .iter()
            .filter(|(_, s)| matches!(s, Standing::Done { .. }))
            .map(|(label, _)| task_name(label))
            .collect();
        (0..graph.groups.len() as u32)
            .map(crate::ir::GroupId)
            .filter(|&g| names.contains(graph.group(g).name.as_str()))
            .collect()
    }

    /// Whether `task` must run again whatever it finds (`--only`).
    pub fn is_forced(&self, task: TaskId) -> bool {
        self.forced.as_ref().is_some_and(|f| f[task.group.index()].get(task.instance))
    }

    /// The variants to render `task` (labelled `label`) in when looking
    /// for an earlier success of the same work, most likely first: the one
    /// its own last success ran in, then any other a success of its task
    /// ran in. Empty when nothing can be reused: it must run.
    pub fn variants_to_try(&self, task: TaskId, label: &str) -> Vec<u32> {
        if self.is_forced(task) {
            return Vec::new();
        }
        let own = match self.standing.get(label) {
            Some(Standing::Done { wrote, .. }) => Some(wrote.variant),
            // An attempt after its success may have clobbered what it
            // left beyond its declared outputs.
            Some(Standing::Tainted | Standing::Untrusted(_)) => return Vec::new(),
            _ => None,
        };
        let mut variants: Vec<u32> = own.into_iter().collect();
        for &v in self.variants.get(task_name(label)).into_iter().flatten() {
            if !variants.contains(&v) {
                variants.push(v);
            }
        }
        variants
    }

    /// The latest success of task `name` with fingerprint `fp`: what it left.
    pub fn success(&self, name: &str, fp: &Fingerprint) -> Option<&Wrote> {
        self.successes.get(name)?.get(fp).map(|(_, wrote)| &**wrote)
    }

    /// The successes of task `name` in earlier runs: their labels then and what they left.
    pub fn done_of<'a>(&'a self, name: &str) -> impl Iterator<Item = (&'a str, &'a Arc<Wrote>)> + 'a {
        self.successes.get(name).into_iter().flat_map(|s| s.values()).map(|(label, wrote)| (label.as_str(), wrote))
    }
}

/// The task name of `name[index]`.
pub fn task_name(label: &str) -> &str {
    label.split_once('[').map_or(label, |(name, _)| name)
}

/// Which instances of one group `--only` makes run again.
#[derive(Debug, Clone)]
enum Forced {
    /// Every instance, including those of a group known only at run time.
    All,
    /// These positions.
    Some(Vec<bool>),
}

impl Forced {
    fn get(&self, i: u64) -> bool {
        match self {
            Forced::All => true,
            Forced::Some(v) => v.get(i as usize).copied().unwrap_or(false),
        }
    }

    fn set(&mut self, i: u64) {
        if let Forced::Some(v) = self
            && let Some(f) = v.get_mut(i as usize)
        {
            *f = true;
        }
    }

    fn any(&self) -> bool {
        match self {
            Forced::All => true,
            Forced::Some(v) => v.contains(&true),
        }
    }
}

/// Where an instance that run `skipped_in` skipped as unchanged got its
/// result: the newest earlier run under `state` in which its task
/// succeeded by running with `fingerprint` — at `label` if it did there,
/// else at whatever position it had then (the cache is looked up by what
/// an instance is). Runs in between may have skipped it too.
pub fn origin(state: &Path, skipped_in: &str, label: &str, fingerprint: &Fingerprint) -> Option<(RunDir, TaskId)> {
    let earlier = RunDir::list(state).into_iter().rev().filter(|run| run.id.as_str() < skipped_in);
    for run in earlier {
        let Ok(graph) = run.read_graph() else { continue };
        let Some(group) = graph.find(task_name(label)) else { continue };
        let Ok(journal) = read_journal(&run.journal()) else { continue };
        let state = JournalState::from_records(&journal.records);
        let mut found = state.iter().filter(|(task, entry)| {
            task.group == group
                && entry.status == JournalStatus::Succeeded
                && entry.fingerprint.as_ref() == Some(fingerprint)
        });
        let first = found.next().map(|(task, _)| *task);
        let same = first.into_iter().chain(found.map(|(task, _)| *task)).find(|t| graph.label(*t) == label);
        if let Some(task) = same.or(first) {
            return Some((run, task));
        }
    }
    None
}

/// The graph and journal of `run` if it ran `workflow` (the same file of
/// this directory, which may have moved since); `None` if it ran another
/// workflow; why not, if its files cannot be read.
fn run_of(run: &RunDir, workflow: &Path) -> Result<Option<(Graph, JournalFile)>, String> {
    let meta = run.read_meta().map_err(|e| e.to_string())?;
    // Every run under this `.flow` ran a workflow file of this directory:
    // the file name tells which, wherever the directory is now.
    if meta.workflow.file_name() != workflow.file_name() {
        return Ok(None);
    }
    let graph = run.read_graph().map_err(|e| e.to_string())?;
    if !run.journal().exists() {
        return Ok(Some((graph, JournalFile::default())));
    }
    let journal = read_journal(&run.journal()).map_err(|e| e.to_string())?;
    Ok(Some((graph, journal)))
}
