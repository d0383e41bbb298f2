//! Resuming: which instances an earlier run already finished, by fingerprint,
//! and which ones `--force` / `--only` make run again regardless.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use crate::ir::Selector;
use crate::ir::{EdgeKind, Graph, TaskId};
use crate::log::{FileHashes, JournalFile, JournalState, State, Wrote, read_journal};
use crate::rundir::RunDir;
use crate::runtime::protocol::fingerprint::Fingerprint;

/// What earlier runs of the same workflow left behind.
#[derive(Debug, Default)]
pub struct Previous {
    /// Where each instance stands after the earlier runs, by `name[index]`.
    standing: HashMap<String, Standing>,
    /// Every success of every earlier run, the latest per task name and
    /// fingerprint, with its label then, what it left and the attempt it
    /// was: the cache is looked up by what an instance is, not only where
    /// it sits.
    successes: HashMap<String, HashMap<Fingerprint, Success>>,
    /// The renderings (variant, attempt) successes of each task ran in.
    variants: HashMap<String, Vec<Rendering>>,
    /// Instances whose last attempt failed and was to be retried after a
    /// `retry_delay`, by `name[index]`: when that retry was due.
    retry_at: HashMap<String, u64>,
    /// The ids of the runs read, oldest first ([`Standing::Done`] points here).
    runs: Vec<String>,
    /// Per `name[index]`, the runs (positions in `runs`) whose records its
    /// standing and pending retry rest on: without them a new run would
    /// see it otherwise ([`Previous::runs_in_use`]).
    rests_on: HashMap<String, Vec<u32>>,
    /// Instances that must run again (`--only` and their dependents), per group.
    forced: Option<Vec<Forced>>,
    /// What could not be read, and what was skipped: said before the run starts.
    pub warnings: Vec<String>,
    /// Whether standings keep what each success read.
    keep_reads: bool,
    /// Instances whose last attempt started and never ended (its run was
    /// killed, or stopped it): `name[index]` → the run (a position in
    /// `runs`) and the instance in that run's graph.
    unfinished: HashMap<String, (u32, TaskId)>,
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
        /// The attempt that succeeded: templates that name `attempt`
        /// render as that attempt did.
        attempt: u32,
        /// What each file it read held when it did the work; `None` when
        /// no record says.
        reads: Option<FileHashes>,
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
    /// each instance keeps the fingerprint of its latest success. Every
    /// intact record counts: a damaged stretch of a journal is skipped (and
    /// reported), not the whole run.
    pub fn load(state: &Path, workflow: &Path) -> Previous {
        Self::load_keeping(state, workflow, false)
    }

    /// As [`Self::load`], keeping what each success read (the `reads` of
    /// [`Standing::Done`]), which only `flow plan --why` needs: a run
    /// does not hold them in memory.
    pub fn load_with_reads(state: &Path, workflow: &Path) -> Previous {
        Self::load_keeping(state, workflow, true)
    }

    fn load_keeping(state: &Path, workflow: &Path, keep_reads: bool) -> Previous {
        let mut previous = Previous { keep_reads, ..Previous::default() };
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
        for (name, success) in previous.successes.iter().flat_map(|(name, s)| s.values().map(move |s| (name, s))) {
            let rendering = Rendering { variant: success.wrote.variant, attempt: success.attempt };
            let variants = previous.variants.entry(name.clone()).or_default();
            if !variants.contains(&rendering) {
                variants.push(rendering);
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
            // A later start or skip settles an unfinished attempt (rare: no label is made otherwise).
            if !self.unfinished.is_empty()
                && (entry.started_us.is_some() || matches!(entry.status, State::Succeeded | State::Cached))
            {
                self.unfinished.remove(&graph.label(*task));
            }
            let retry = entry.retry_at_us.filter(|_| entry.status == State::Failed);
            match retry {
                Some(at) => self.retry_at.insert(graph.label(*task), at),
                None if self.retry_at.is_empty() => None,
                None => self.retry_at.remove(&graph.label(*task)),
            };
            if retry.is_some() {
                self.rests_on.entry(graph.label(*task)).or_default().push(this);
            }
            let done = matches!(entry.status, State::Succeeded | State::Cached);
            // `--dry-exec` successes have no fingerprint and did no work.
            let fp = entry.fingerprint.filter(|fp| *fp != Fingerprint::default());
            match (done, fp) {
                // A file changed while it ran: what it left is not trusted.
                (true, Some(_)) if entry.untrusted.is_some() => {
                    let file = entry.untrusted.clone().unwrap_or_default();
                    // Its run says the success is not trusted: `flow clean` keeps it.
                    self.rests_on.insert(graph.label(*task), vec![this]);
                    self.standing.insert(graph.label(*task), Standing::Untrusted(file));
                }
                (true, Some(fp)) => {
                    let label = graph.label(*task);
                    let mut wrote = Arc::new(entry.wrote.clone().unwrap_or_default());
                    if wrote.outputs.is_none() {
                        // Written before outputs were recorded: the variant is in the metrics.
                        Arc::make_mut(&mut wrote).variant = entry.metrics.as_ref().map_or(0, |m| m.variant);
                    }
                    let name = &graph.group(task.group).name;
                    // A skip was rendered as the attempt that did the work.
                    let attempt = match (entry.status, self.successes.get(name).and_then(|s| s.get(&fp))) {
                        (State::Cached, Some(success)) => success.attempt,
                        _ => entry.attempt,
                    };
                    // A skip keeps pointing at the run that did the work, and what it read.
                    let (run, reads) = match (entry.status, self.standing.get(&label)) {
                        (State::Cached, Some(Standing::Done { fingerprint, run, wrote: before, reads, .. }))
                            if *fingerprint == fp =>
                        {
                            if wrote.outputs.is_none() {
                                wrote = before.clone();
                            }
                            (*run, reads.clone())
                        }
                        // An instance whose item moved (a line removed above it):
                        // what the success with its key read, under its old label.
                        (State::Cached, _) => {
                            let success = self.successes.get(name).and_then(|s| s.get(&fp));
                            (this, success.and_then(|s| s.reads.clone()))
                        }
                        _ => (this, entry.reads.clone().filter(|_| self.keep_reads)),
                    };
                    let of_task = self.successes.entry(name.clone()).or_default();
                    of_task.insert(
                        fp,
                        Success { label: label.clone(), wrote: wrote.clone(), attempt, reads: reads.clone() },
                    );
                    self.rests_on.insert(label.clone(), vec![run]);
                    let ended_us = entry.ended_us;
                    let done = Standing::Done { fingerprint: fp, run, ended_us, wrote, attempt, reads };
                    self.standing.insert(label, done);
                }
                // An attempt that started and did not succeed may have
                // overwritten the outputs of an earlier success.
                (false, _) if entry.started_us.is_some() => {
                    let label = graph.label(*task);
                    let after_success = matches!(
                        self.standing.get(&label),
                        Some(Standing::Done { .. } | Standing::Tainted | Standing::Untrusted(_))
                    );
                    // Tainted rests on the success and on the attempt after it.
                    let runs = self.rests_on.entry(label.clone()).or_default();
                    if !after_success {
                        runs.clear();
                    }
                    runs.push(this);
                    // What it wrote is no result: a failure moved it aside then.
                    if matches!(entry.status, State::Running | State::Cancelled) {
                        self.unfinished.insert(label.clone(), (this, *task));
                    }
                    self.standing.insert(label, if after_success { Standing::Tainted } else { Standing::Failed });
                }
                _ => {}
            }
        }
    }

    /// The instances whose last attempt started and never ended, each with
    /// the id of its run and where it is in that run's graph.
    pub fn unfinished(&self) -> impl Iterator<Item = (&str, &str, TaskId)> + '_ {
        self.unfinished.iter().map(|(label, &(run, task))| (label.as_str(), self.runs[run as usize].as_str(), task))
    }

    /// The ids of the runs whose records a new run would read to decide
    /// what to skip, with how many instances rest on each: the run that did
    /// the work of each instance's last success, the runs of the attempts
    /// that failed since (or taint it), the run whose retry is pending.
    /// Removing any other run read leaves every standing as it is.
    pub fn runs_in_use(&self) -> BTreeMap<String, u64> {
        let mut used: BTreeMap<String, u64> = BTreeMap::new();
        for runs in self.rests_on.values() {
            let mut runs = runs.clone();
            runs.sort_unstable();
            runs.dedup();
            for run in runs {
                *used.entry(self.runs[run as usize].clone()).or_default() += 1;
            }
        }
        used
    }

    /// The ids of the runs read, oldest first.
    pub fn runs_read(&self) -> &[String] {
        &self.runs
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

    /// Makes every instance run again (`all`, for `--force`), or those
    /// `only` selects and everything downstream of them. What earlier runs
    /// left is still known, so outputs that went stale are moved aside.
    pub fn force(&mut self, graph: &Graph, all: bool, only: &[Selector]) -> Result<(), String> {
        if all {
            self.forced = Some(graph.groups.iter().map(|_| Forced::All).collect());
            return Ok(());
        }
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

    /// The renderings of `task` (labelled `label`) to compare when looking
    /// for an earlier success of the same work, most likely first: the
    /// variant and attempt of its own last success, then any other a
    /// success of its task ran in. Empty when nothing can be reused: it must run.
    pub fn renderings_to_try(&self, task: TaskId, label: &str) -> Vec<Rendering> {
        if self.is_forced(task) {
            return Vec::new();
        }
        let own = match self.standing.get(label) {
            Some(Standing::Done { wrote, attempt, .. }) => {
                Some(Rendering { variant: wrote.variant, attempt: *attempt })
            }
            // An attempt after its success may have clobbered what it
            // left beyond its declared outputs.
            Some(Standing::Tainted | Standing::Untrusted(_)) => return Vec::new(),
            _ => None,
        };
        let mut variants: Vec<Rendering> = own.into_iter().collect();
        for &v in self.variants.get(task_name(label)).into_iter().flatten() {
            if !variants.contains(&v) {
                variants.push(v);
            }
        }
        variants
    }

    /// The latest success of task `name` with fingerprint `fp`: what it left.
    pub fn success(&self, name: &str, fp: &Fingerprint) -> Option<&Wrote> {
        self.successes.get(name)?.get(fp).map(|s| &*s.wrote)
    }

    /// The successes of task `name` in earlier runs: their labels then and what they left.
    pub fn done_of<'a>(&'a self, name: &str) -> impl Iterator<Item = (&'a str, &'a Arc<Wrote>)> + 'a {
        self.successes.get(name).into_iter().flat_map(|s| s.values()).map(|s| (s.label.as_str(), &s.wrote))
    }
}

/// An earlier success: its label then, what it left, the attempt it was.
#[derive(Debug)]
struct Success {
    label: String,
    wrote: Arc<Wrote>,
    attempt: u32,
    /// What it read, when kept (`flow plan --why`).
    reads: Option<FileHashes>,
}

/// How a success was rendered: in which variant, as which attempt (a
/// template may name `attempt`, as a request that grows with each retry
/// does). The cache compares an instance rendered the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rendering {
    /// The position of the variant in the task's `variants`.
    pub variant: u32,
    /// The attempt: 0 for the first.
    pub attempt: u32,
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
            task.group == group && entry.status == State::Succeeded && entry.fingerprint.as_ref() == Some(fingerprint)
        });
        let first = found.next().map(|(task, _)| *task);
        let same = first.into_iter().chain(found.map(|(task, _)| *task)).find(|t| graph.label(*t) == label);
        if let Some(task) = same.or(first) {
            return Some((run, task));
        }
    }
    None
}

/// The graph and journal of `run` if it ran `workflow` ([`crate::rundir::Meta::ran`]);
/// `None` if it ran another
/// workflow; why not, if its files cannot be read.
fn run_of(run: &RunDir, workflow: &Path) -> Result<Option<(Graph, JournalFile)>, String> {
    let meta = run.read_meta().map_err(|e| e.to_string())?;
    if !meta.ran(workflow) {
        return Ok(None);
    }
    let graph = run.read_graph().map_err(|e| e.to_string())?;
    if !run.journal().exists() {
        return Ok(Some((graph, JournalFile::default())));
    }
    let journal = read_journal(&run.journal()).map_err(|e| e.to_string())?;
    Ok(Some((graph, journal)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::testing::graph;
    use crate::ir::GroupId;
    use crate::log::{JournalEvent, JournalRecord, JournalWriter};
    use crate::rundir::Meta;

    /// A run of `workflow.toml` under `state` with these journal records.
    fn run(state: &Path, graph: &Graph, records: &[JournalRecord]) {
        let run = RunDir::create(state, false).expect("run dir");
        let meta = Meta { workflow: "workflow.toml".into(), started_us: 0, dry_exec: false, command: Vec::new() };
        run.write_meta(&meta).expect("meta");
        run.write_graph(graph).expect("graph");
        JournalWriter::create(&run.journal()).expect("journal").append_batch(records).expect("records");
    }

    /// Issue 26: a success of the second attempt, and the skip that stood
    /// for it, are looked up as rendered at that attempt — also from the
    /// same workflow converted to YAML.
    #[test]
    fn a_success_is_tried_at_the_attempt_that_did_the_work() {
        let g = graph("[[tasks]]\nname = \"fit\"\nretries = 1\ncommand = \"true\"\n");
        let state = tempfile::tempdir().expect("temp dir");
        let task = TaskId::new(GroupId(0), 0);
        let record = |attempt, event| JournalRecord::new(1, task, attempt, event);
        let started = || JournalEvent::Started { worker: 0, ready_us: None };
        let wrote = Wrote { variant: 0, outputs: Some(Vec::new()) };
        run(
            state.path(),
            &g,
            &[
                record(0, started()),
                record(0, JournalEvent::Failed { exit_code: Some(1), signal: None, reason: "exit code 1".into() }),
                record(1, started()),
                record(1, JournalEvent::Succeeded { fingerprint: [7; 32], wrote: wrote.clone() }),
            ],
        );
        run(state.path(), &g, &[record(0, JournalEvent::Cached { fingerprint: [7; 32], wrote })]);
        let previous = Previous::load(state.path(), Path::new("workflow.yaml"));
        assert_eq!(previous.renderings_to_try(task, "fit"), [Rendering { variant: 0, attempt: 1 }]);
    }

    /// Task `a` with three instances.
    fn three() -> Graph {
        graph("[[tasks]]\nname = \"a\"\nrange = \"1-3\"\ncommand = \"true\"\n")
    }

    fn journal(events: Vec<(u64, JournalEvent)>) -> JournalFile {
        let records = events
            .into_iter()
            .enumerate()
            .map(|(i, (instance, e))| JournalRecord::new(i as u64, TaskId::new(GroupId(0), instance), 0, e))
            .collect();
        JournalFile { records, ..JournalFile::default() }
    }

    fn started() -> JournalEvent {
        JournalEvent::Started { worker: 0, ready_us: None }
    }

    fn succeeded(fp: u8) -> JournalEvent {
        JournalEvent::Succeeded { fingerprint: [fp; 32], wrote: Wrote::default() }
    }

    /// Issue 27: the runs a new run's standings rest on, which `flow clean`
    /// keeps: the run that did an instance's work (not the runs that only
    /// skipped it), the run of a failure after a success (a taint rests on
    /// both), and the run of a failure that is the last word.
    #[test]
    fn runs_in_use_are_those_standings_rest_on() {
        let graph = three();
        let failed = || JournalEvent::Failed { exit_code: Some(1), signal: None, reason: "exit code 1".into() };
        let cached = |fp: u8| JournalEvent::Cached { fingerprint: [fp; 32], wrote: Wrote::default() };
        let mut previous = Previous::default();
        // r1: a[0], a[1] and a[2] succeed.
        let r1 = (0..3).flat_map(|i| [(i, started()), (i, succeeded(i as u8 + 1))]).collect();
        previous.remember(&graph, &journal(r1), "r1");
        // r2: a[0] skipped; a[1] runs again and fails (tainted); a[2] runs again.
        let r2 = vec![(0, cached(1)), (1, started()), (1, failed()), (2, started()), (2, succeeded(9))];
        previous.remember(&graph, &journal(r2), "r2");
        // r3: skips a[0] and a[2].
        previous.remember(&graph, &journal(vec![(0, cached(1)), (2, cached(9))]), "r3");
        let used: Vec<(String, u64)> = previous.runs_in_use().into_iter().collect();
        assert_eq!(used, [("r1".to_owned(), 2), ("r2".to_owned(), 2)]);
        assert_eq!(previous.runs_read(), ["r1", "r2", "r3"]);
    }

    /// Issue 26: an attempt whose run was killed while it ran is
    /// unfinished until a later run starts the instance again or skips it;
    /// a failure is not (its run moved what it wrote aside).
    #[test]
    fn an_attempt_a_killed_run_never_ended_is_unfinished_until_the_instance_runs_again() {
        let graph = three();
        let failed = || JournalEvent::Failed { exit_code: Some(1), signal: None, reason: "exit code 1".into() };
        let mut previous = Previous::default();
        // r1: a[0] fails, a[1] and a[2] are killed while they run.
        previous.remember(&graph, &journal(vec![(0, started()), (0, failed()), (1, started()), (2, started())]), "r1");
        let mut unfinished: Vec<_> = previous.unfinished().map(|(l, r, t)| (l.to_owned(), r.to_owned(), t)).collect();
        unfinished.sort();
        let at = |i| TaskId::new(GroupId(0), i);
        assert_eq!(
            unfinished,
            [("a[2]".to_owned(), "r1".to_owned(), at(1)), ("a[3]".to_owned(), "r1".to_owned(), at(2))]
        );
        // r2: a[2] runs again and succeeds.
        previous.remember(&graph, &journal(vec![(1, started()), (1, succeeded(4))]), "r2");
        let unfinished: Vec<_> = previous.unfinished().map(|(l, r, _)| (l.to_owned(), r.to_owned())).collect();
        assert_eq!(unfinished, [("a[3]".to_owned(), "r1".to_owned())]);
    }
}
