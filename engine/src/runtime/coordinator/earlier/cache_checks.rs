//! [`CacheChecks`]: the cache decided before dispatch. Each ready instance
//! of a group an earlier run finished is compared with its last success
//! here, on the coordinator, before any worker is sought. Hashing input
//! files runs off the loop, a few files at a time; an instance whose
//! fingerprint matches and whose outputs exist is recorded as unchanged
//! without a worker, so a rerun with nothing to do needs none, and a queue
//! submits nothing while comparisons are still under way.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use super::cache_lookup::{Lookup, candidates, lookup};
use super::resume::Previous;
use crate::ir::{Graph, GroupId, TaskId};
use crate::runtime::coordinator::dispatch::job_factory::JobFactory;
use crate::runtime::coordinator::loop_sender::LoopSender;
use crate::runtime::protocol::fingerprint::reads_files;
use crate::runtime::protocol::job::Job;

/// How many instances' inputs are hashed at once.
const PARALLEL_HASHES: usize = 4;

/// Comparisons waiting for a hashing thread, how many are running, and what
/// they compare with.
pub(in crate::runtime::coordinator) struct CacheChecks {
    waiting: VecDeque<(TaskId, Vec<Job>)>,
    running: usize,
    previous: Arc<Previous>,
    /// Under `--dry-exec`, the outputs a real run would have moved aside:
    /// the cache compares as if they were gone.
    hidden: Arc<HashSet<PathBuf>>,
    /// Under `--dry-exec`, the instances of each group that "ran".
    dry_ran: Option<HashMap<GroupId, HashSet<u64>>>,
    /// Where hashing threads send what they found.
    tx: LoopSender<(TaskId, Lookup)>,
}

impl CacheChecks {
    /// Compares with `previous`; `dry_exec` when nothing runs for real.
    pub(in crate::runtime::coordinator) fn new(
        previous: Arc<Previous>,
        dry_exec: bool,
        tx: LoopSender<(TaskId, Lookup)>,
    ) -> Self {
        let dry_ran = dry_exec.then(HashMap::new);
        Self { waiting: VecDeque::new(), running: 0, previous, hidden: Arc::default(), dry_ran, tx }
    }

    /// Whether no comparison is waiting or running.
    pub(in crate::runtime::coordinator) fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.running == 0
    }

    /// Takes newly ready `task` in: what the cache has for it when that is
    /// known at once, `None` when its inputs wait to be hashed
    /// (the sender given to [`CacheChecks::new`] then tells). A `fresh` task (skipped, or
    /// reacting to a failure: decided afresh each run) is never unchanged.
    pub(in crate::runtime::coordinator) fn admit(
        &mut self,
        task: TaskId,
        factory: &JobFactory,
        fresh: bool,
    ) -> Option<Lookup> {
        // Rendered in the variants earlier successes ran in: the
        // fingerprint covers the command, which may name its resources.
        let jobs = candidates(factory, &self.previous, task);
        if jobs.is_empty() || fresh || self.dry_upstream(factory.graph(), task) {
            Some(Lookup::Differs)
        } else if !jobs.iter().any(reads_files) {
            Some(lookup(&jobs, &self.previous, &factory.graph().group(task.group).name, &self.hidden))
        } else {
            self.waiting.push_back((task, jobs));
            None
        }
    }

    /// A hashing thread is done.
    pub(in crate::runtime::coordinator) fn hashed(&mut self) {
        self.running -= 1;
    }

    /// Starts hashing waiting instances' inputs, up to [`PARALLEL_HASHES`] at once.
    pub(in crate::runtime::coordinator) fn start_hashing(&mut self, graph: &Graph) {
        while self.running < PARALLEL_HASHES {
            let Some((task, jobs)) = self.waiting.pop_front() else { break };
            self.running += 1;
            let tx = self.tx.clone();
            let (previous, hidden) = (self.previous.clone(), self.hidden.clone());
            let name = graph.group(task.group).name.clone();
            tokio::task::spawn_blocking(move || {
                let found = lookup(&jobs, &previous, &name, &hidden);
                tx.send((task, found));
            });
        }
    }

    /// Under `--dry-exec`, `task` "ran": what waits for it would run too.
    pub(in crate::runtime::coordinator) fn ran(&mut self, task: TaskId) {
        if let Some(ran) = &mut self.dry_ran {
            ran.entry(task.group).or_default().insert(task.instance);
        }
    }

    /// Under `--dry-exec`, `files` would have been moved aside.
    pub(in crate::runtime::coordinator) fn hide(&mut self, files: impl IntoIterator<Item = PathBuf>) {
        Arc::make_mut(&mut self.hidden).extend(files);
    }

    /// Under `--dry-exec`, whether an instance `task` waits for "ran" in
    /// this run: its outputs would have changed, so `task` would run too.
    fn dry_upstream(&self, graph: &Graph, task: TaskId) -> bool {
        let Some(dry_ran) = &self.dry_ran else { return false };
        graph.upstream(task).iter().any(|up| {
            let Some(ran) = dry_ran.get(&up.group) else { return false };
            if (ran.len() as u64) < up.count() {
                ran.iter().any(|p| up.instances.iter().any(|r| r.contains(p)))
            } else {
                up.positions().any(|p| ran.contains(&p))
            }
        })
    }
}
