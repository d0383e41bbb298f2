//! [`Stranded`]: the tasks that remote workers were running for runs whose
//! flow process was killed. Those workers keep their tasks and try to
//! rejoin; a new run of the same workflow that listens points the killed
//! runs' access files at itself ([`Stranded::redirect`]) and holds those
//! instances for [`REATTACH_WINDOW`] ([`Stranded::hold`]), so they are not
//! started twice. A worker that rejoins in time hands them over
//! (`driver/reattach.rs`); once the window is over they run afresh. An
//! instance whose worker ran in a cluster allocation that its queue no
//! longer lists ([`Stranded::ended_allocations`]) is not held: nobody can
//! bring it back.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use super::earlier_output::scan;
use super::held::{Held, HeldTask, KilledWorker};
use crate::ir::{Graph, TaskId};
use crate::log::{JournalState, State, read_journal};
use crate::net::AccessFile;
use crate::profile::Manager;
use crate::rundir::RunDir;
use crate::runtime::core::Core;

/// How long a resumed run holds an instance that a remote worker of a
/// killed run was running, waiting for that worker to rejoin with it.
pub const REATTACH_WINDOW: Duration = Duration::from_secs(60);

/// The killed runs since the last one that finished, and the instances
/// their remote workers were running when they were killed.
#[derive(Debug, Default)]
pub(in crate::runtime::coordinator) struct Stranded {
    /// The killed runs, oldest first.
    runs: Vec<RunDir>,
    /// Instances running on remote workers, by label.
    tasks: HashMap<String, StrandedTask>,
    /// The cluster job each remote worker of a killed run ran in, if any.
    allocations: HashMap<KilledWorker, String>,
    /// The cluster jobs the killed runs' queues submitted: the manager,
    /// and the job name to ask it with.
    jobs: HashMap<String, (Manager, String)>,
}

/// An instance a remote worker of a killed run was running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StrandedTask {
    /// Where it was in the killed run's graph.
    task: TaskId,
    /// The attempt that ran.
    attempt: u32,
    /// Where it ran.
    worker: KilledWorker,
}

impl Stranded {
    /// Reads the runs of `workflow` under `state` that were killed after
    /// the last one that finished (each of which may have been resumed by
    /// the next without its workers coming back), oldest first: a later
    /// run's word on an instance replaces an earlier one's.
    pub(in crate::runtime::coordinator) fn find(state: &Path, workflow: &Path) -> Stranded {
        let ran_it = |run: &RunDir| run.read_meta().is_ok_and(|meta| meta.ran(workflow));
        let runs: Vec<RunDir> = RunDir::list(state).into_iter().filter(ran_it).collect();
        let since = runs.iter().rposition(RunDir::is_finished).map_or(0, |last| last + 1);
        let mut stranded = Stranded::default();
        for run in runs.into_iter().skip(since).filter(|run| !run.is_live()) {
            stranded.read(&run, stranded.runs.len());
            stranded.runs.push(run);
        }
        stranded
    }

    /// Takes in killed `run`, the `index`th read: what ran on its remote
    /// workers and did not end, and the cluster jobs it ran them in.
    fn read(&mut self, run: &RunDir, index: usize) {
        let (Ok(graph), Ok(journal)) = (run.read_graph(), read_journal(&run.journal())) else { return };
        if let Ok(allocs) = run.read_allocs()
            && let Some(queue) = &allocs.queue
        {
            let name = crate::runtime::coordinator::alloc::script::job_name(&run.id);
            for a in allocs.allocations.iter().filter(|a| !a.job_id.is_empty()) {
                self.jobs.insert(a.job_id.clone(), (queue.manager, name.clone()));
            }
        }
        // The embedded worker has no peer address; it died with its run.
        let mut remote = HashSet::new();
        for w in run.read_workers().unwrap_or_default().into_iter().filter(|w| !w.peer.is_empty()) {
            let worker = KilledWorker { run: index, id: w.id };
            remote.insert(w.id);
            if let Some(job) = w.allocation {
                self.allocations.insert(worker, job);
            }
        }
        for (task, entry) in JournalState::from_records(&journal.records).iter() {
            if graph.groups.get(task.group.index()).is_none_or(|g| task.instance >= g.count) {
                continue;
            }
            let label = graph.label(*task);
            match entry.worker.filter(|w| entry.status == State::Running && remote.contains(w)) {
                Some(id) => {
                    let worker = KilledWorker { run: index, id };
                    self.tasks.insert(label, StrandedTask { task: *task, attempt: entry.attempt, worker })
                }
                None => self.tasks.remove(&label),
            };
        }
    }

    /// The cluster jobs that remote workers of the killed runs ran in and
    /// that their queue no longer lists as queued or running: those
    /// workers are gone. A job no killed run's queue submitted (a worker
    /// started by hand in an allocation), or a manager that cannot be
    /// asked, counts as running.
    pub(in crate::runtime::coordinator) fn ended_allocations(&self) -> HashSet<String> {
        // By job name: one question per killed run's queue.
        let mut asks: HashMap<&str, (Manager, Vec<String>)> = HashMap::new();
        let ran_tasks: HashSet<KilledWorker> = self.tasks.values().map(|s| s.worker).collect();
        for (worker, job) in &self.allocations {
            if let Some((manager, name)) = self.jobs.get(job).filter(|_| ran_tasks.contains(worker)) {
                let (_, ids) = asks.entry(name.as_str()).or_insert_with(|| (*manager, Vec::new()));
                if !ids.contains(job) {
                    ids.push(job.clone());
                }
            }
        }
        let mut ended = HashSet::new();
        for (name, (manager, ids)) in asks {
            if let Ok(alive) = crate::runtime::coordinator::alloc::manager::alive_now(manager, name, &ids) {
                ended.extend(ids.into_iter().filter(|id| !alive.contains(id)));
            }
        }
        ended
    }

    /// Points the access file of every killed run that had one at the new
    /// run (`access`), so that their workers, which read it again as they
    /// try to rejoin, find it; returns what could not be written, to be said.
    pub(in crate::runtime::coordinator) fn redirect(&self, access: &AccessFile) -> Vec<String> {
        self.runs
            .iter()
            .filter(|run| run.access().exists())
            .filter_map(|run| {
                let e = run.write_access(access).err()?;
                Some(format!("cannot point the workers of killed run {} at this run: {e}", run.id))
            })
            .collect()
    }

    /// Holds each stranded instance that is the same one in `graph` (same
    /// place, same label) and still to run, until `until_us` — unless its
    /// worker ran in one of the `ended` cluster jobs. Returns what it holds,
    /// and how many instances it did not hold for that reason.
    pub(in crate::runtime::coordinator) fn hold(
        &self,
        graph: &Graph,
        core: &mut Core,
        until_us: u64,
        ended: &HashSet<String>,
    ) -> (Held, usize) {
        let gone = |s: &StrandedTask| self.allocations.get(&s.worker).is_some_and(|job| ended.contains(job));
        let same = |label: &str, s: &StrandedTask| {
            graph.groups.get(s.task.group.index()).is_some_and(|g| s.task.instance < g.count)
                && graph.label(s.task) == label
        };
        let mut let_go = 0;
        let mut wanted: Vec<HashSet<(TaskId, u32)>> = vec![HashSet::new(); self.runs.len()];
        for (label, s) in &self.tasks {
            if same(label, s) && gone(s) {
                let_go += 1;
            } else if same(label, s) {
                wanted[s.worker.run].insert((s.task, s.attempt));
            }
        }
        let mut earlier: Vec<_> = (self.runs.iter().zip(&wanted))
            .map(|(run, wanted)| if wanted.is_empty() { HashMap::new() } else { scan(&run.output_log(), wanted) })
            .collect();
        let mut held = Held::default();
        for (label, s) in &self.tasks {
            if wanted[s.worker.run].contains(&(s.task, s.attempt)) && core.wait_until(s.task, until_us) {
                let earlier = earlier[s.worker.run].remove(&(s.task, s.attempt)).unwrap_or_default();
                let task = HeldTask { label: label.clone(), attempt: s.attempt, worker: s.worker, earlier };
                held.insert(s.task, task);
            }
        }
        (held, let_go)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{JournalEvent, JournalRecord, JournalWriter, Wrote};
    use crate::net::Secret;
    use crate::rundir::{Meta, WorkerInfo};
    use crate::runtime::core::CoreOptions;
    use crate::runtime::core::tests::env::{GroupSpec, graph, t};

    /// A killed run of `workflow.toml` under `state`: worker 0 embedded,
    /// worker 1 remote; `a[0]` runs on 1, `a[1]` on 0, `a[2]` ended on 1.
    fn killed_run(state: &Path, graph: &Graph) -> RunDir {
        let run = RunDir::create(state, false).expect("run dir");
        let meta = Meta { workflow: "workflow.toml".into(), started_us: 1, dry_exec: false, command: Vec::new() };
        run.write_meta(&meta).expect("meta");
        run.write_graph(graph).expect("graph");
        let worker = |id, peer: &str| WorkerInfo {
            id,
            hostname: "node".into(),
            peer: peer.into(),
            shape: Default::default(),
            deadline: None,
            allocation: None,
            running: 0,
        };
        let allocated = WorkerInfo { allocation: Some("77".into()), ..worker(1, "10.0.0.7:4000") };
        run.write_workers(&[worker(0, ""), allocated]).expect("workers");
        let started = |task, worker| JournalRecord::new(1, task, 0, JournalEvent::Started { worker, ready_us: None });
        let done = JournalEvent::Succeeded { fingerprint: [1; 32], wrote: Wrote::default() };
        let records =
            [started(t(0, 0), 1), started(t(0, 1), 0), started(t(0, 2), 1), JournalRecord::new(2, t(0, 2), 0, done)];
        JournalWriter::create(&run.journal()).and_then(|mut w| w.append_batch(&records)).expect("journal");
        run
    }

    #[test]
    fn only_what_a_remote_worker_was_running_is_held() {
        let dir = tempfile::tempdir().expect("tempdir");
        let graph = graph(vec![GroupSpec::new("a", 3)], vec![]);
        let run = killed_run(dir.path(), &graph);
        let stranded = Stranded::find(dir.path(), Path::new("/elsewhere/workflow.toml"));
        let mut core = Core::new(&graph, CoreOptions::default());
        let (mut held, let_go) = stranded.hold(&graph, &mut core, 99, &HashSet::new());
        assert_eq!((held.len(), let_go), (1, 0));
        let a0 = held.take(t(0, 0), &graph.label(t(0, 0))).expect("held");
        assert_eq!((a0.attempt, a0.worker), (0, KilledWorker { run: 0, id: 1 }));
        assert!(a0.earlier.is_empty(), "the killed run wrote no output");
        assert_eq!(core.next_wake_us(), Some(99));
        // Another workflow file's runs are not read.
        assert!(Stranded::find(dir.path(), Path::new("other.toml")).runs.is_empty());
        // In a workflow changed since, that place holds another instance: not held.
        let renamed = crate::runtime::core::tests::env::graph(vec![GroupSpec::new("b", 3)], vec![]);
        let mut core = Core::new(&renamed, CoreOptions::default());
        assert!(stranded.hold(&renamed, &mut core, 99, &HashSet::new()).0.is_empty());
        // Its workers are pointed at the new run once it has an access file.
        assert!(stranded.redirect(&access()).is_empty());
        assert!(!run.access().exists(), "a run that did not listen gets none");
        run.write_access(&access()).expect("access");
        let new = AccessFile { address: "10.0.0.1:5000".into(), ..access() };
        assert!(stranded.redirect(&new).is_empty());
        assert_eq!(AccessFile::read(&run.access()).expect("read").address, "10.0.0.1:5000");
    }

    #[test]
    fn what_ran_in_an_allocation_that_ended_is_not_held() {
        let dir = tempfile::tempdir().expect("tempdir");
        let graph = graph(vec![GroupSpec::new("a", 3)], vec![]);
        killed_run(dir.path(), &graph);
        let stranded = Stranded::find(dir.path(), Path::new("workflow.toml"));
        assert_eq!(stranded.allocations.values().collect::<Vec<_>>(), ["77"]);
        // No queue of the killed run submitted job 77: nobody is asked, it counts as running.
        assert!(stranded.ended_allocations().is_empty());
        let mut core = Core::new(&graph, CoreOptions::default());
        let (held, let_go) = stranded.hold(&graph, &mut core, 99, &HashSet::from(["77".to_owned()]));
        assert_eq!((held.len(), let_go), (0, 1));
        assert_eq!(core.next_wake_us(), None, "it runs at once");
    }

    #[test]
    fn a_run_that_finished_since_leaves_nothing_stranded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let graph = graph(vec![GroupSpec::new("a", 3)], vec![]);
        let run = killed_run(dir.path(), &graph);
        fs_err::write(run.summary(), "{}").expect("summary");
        let stranded = Stranded::find(dir.path(), Path::new("workflow.toml"));
        assert!(stranded.runs.is_empty() && stranded.tasks.is_empty());
    }

    fn access() -> AccessFile {
        AccessFile { address: "127.0.0.1:1".into(), secret: Secret::generate().expect("secret"), run_id: "r".into() }
    }
}
