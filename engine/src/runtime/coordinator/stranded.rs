//! [`Stranded`]: the tasks that remote workers were running for runs whose
//! flow process was killed. Those workers keep their tasks and try to
//! rejoin; a new run of the same workflow that listens points the killed
//! runs' access files at itself ([`Stranded::redirect`]) and holds those
//! instances for [`REATTACH_WINDOW`] ([`Stranded::hold`]), so they are not
//! started twice. A worker that rejoins in time hands them over
//! (`driver/reattach.rs`); once the window is over they run afresh.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use crate::ir::{Graph, TaskId};
use crate::log::{JournalState, JournalStatus, read_journal};
use crate::net::AccessFile;
use crate::rundir::RunDir;
use crate::runtime::core::Core;

/// How long a resumed run holds an instance that a remote worker of a
/// killed run was running, waiting for that worker to rejoin with it.
pub const REATTACH_WINDOW: Duration = Duration::from_secs(60);

/// The killed runs since the last one that finished, and the instances
/// their remote workers were running when they were killed.
#[derive(Debug, Default)]
pub(super) struct Stranded {
    /// The killed runs, oldest first.
    runs: Vec<RunDir>,
    /// Instances running on remote workers, by label: where they were in
    /// the killed run's graph.
    tasks: HashMap<String, TaskId>,
}

/// An instance held for a worker that may bring it back: its label.
pub(super) type Held = HashMap<TaskId, String>;

impl Stranded {
    /// Reads the runs of `workflow` under `state` that were killed after
    /// the last one that finished (each of which may have been resumed by
    /// the next without its workers coming back), oldest first: a later
    /// run's word on an instance replaces an earlier one's.
    pub(super) fn find(state: &Path, workflow: &Path) -> Stranded {
        // Every run under this `.flow` ran a workflow file of this directory: the name tells which.
        let ran_it = |run: &RunDir| run.read_meta().is_ok_and(|meta| meta.workflow.file_name() == workflow.file_name());
        let runs: Vec<RunDir> = RunDir::list(state).into_iter().filter(ran_it).collect();
        let since = runs.iter().rposition(RunDir::is_finished).map_or(0, |last| last + 1);
        let mut stranded = Stranded::default();
        for run in runs.into_iter().skip(since).filter(|run| !run.is_live()) {
            stranded.read(&run);
            stranded.runs.push(run);
        }
        stranded
    }

    /// Takes in killed `run`: what ran on its remote workers and did not end.
    fn read(&mut self, run: &RunDir) {
        let (Ok(graph), Ok(journal)) = (run.read_graph(), read_journal(&run.journal())) else { return };
        // The embedded worker has no peer address; it died with its run.
        let remote: Vec<u32> =
            run.read_workers().unwrap_or_default().iter().filter(|w| !w.peer.is_empty()).map(|w| w.id).collect();
        for (task, entry) in JournalState::from_records(&journal.records).iter() {
            if graph.groups.get(task.group.index()).is_none_or(|g| task.instance >= g.count) {
                continue;
            }
            let label = graph.label(*task);
            match entry.worker.filter(|w| entry.status == JournalStatus::Running && remote.contains(w)) {
                Some(_) => self.tasks.insert(label, *task),
                None => self.tasks.remove(&label),
            };
        }
    }

    /// Points the access file of every killed run that had one at the new
    /// run (`access`), so that their workers, which read it again as they
    /// try to rejoin, find it; returns what could not be written, to be said.
    pub(super) fn redirect(&self, access: &AccessFile) -> Vec<String> {
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
    /// place, same label) and still to run, until `until_us`; returns them.
    pub(super) fn hold(&self, graph: &Graph, core: &mut Core, until_us: u64) -> Held {
        let mut held = Held::new();
        for (label, &task) in &self.tasks {
            let same = graph.groups.get(task.group.index()).is_some_and(|g| task.instance < g.count)
                && graph.label(task) == *label;
            if same && core.wait_until(task, until_us) {
                held.insert(task, label.clone());
            }
        }
        held
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
        run.write_workers(&[worker(0, ""), worker(1, "10.0.0.7:4000")]).expect("workers");
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
        let held = stranded.hold(&graph, &mut core, 99);
        assert_eq!(held, Held::from([(t(0, 0), graph.label(t(0, 0)))]));
        assert_eq!(core.next_wake_us(), Some(99));
        // Another workflow file's runs are not read.
        assert!(Stranded::find(dir.path(), Path::new("other.toml")).runs.is_empty());
        // In a workflow changed since, that place holds another instance: not held.
        let renamed = crate::runtime::core::tests::env::graph(vec![GroupSpec::new("b", 3)], vec![]);
        let mut core = Core::new(&renamed, CoreOptions::default());
        assert!(stranded.hold(&renamed, &mut core, 99).is_empty());
        // Its workers are pointed at the new run once it has an access file.
        assert!(stranded.redirect(&access()).is_empty());
        assert!(!run.access().exists(), "a run that did not listen gets none");
        run.write_access(&access()).expect("access");
        let new = AccessFile { address: "10.0.0.1:5000".into(), ..access() };
        assert!(stranded.redirect(&new).is_empty());
        assert_eq!(AccessFile::read(&run.access()).expect("read").address, "10.0.0.1:5000");
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
