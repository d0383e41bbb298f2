//! [`QueueSide`]: the driver's side of an allocation queue. It submits
//! allocations as work waits, learns their state from workers and rare
//! polls, gives up on tasks the queue can never run, and cancels every
//! allocation when the run ends. It tells the driver what changed as a
//! [`Demand`]: events to show and groups to cancel.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::ManagerError;
use super::manager;
use super::planner::{self, Fit};
use super::queue::{AllocQueue, Change};
use crate::ir::{Graph, GroupId};
use crate::runtime::agent::output_sink::OutputSink;
use crate::runtime::coordinator::loop_sender::LoopSender;
use crate::runtime::core::{Core, WorkerId};
use crate::runtime::event::Event;

/// How often the queue looks at the waiting work.
pub(in crate::runtime::coordinator) const QUEUE_TICK: Duration = Duration::from_secs(1);
/// How long a finished allocation may linger in the manager's queue before it is cancelled too.
const STRAGGLER_WAIT: Duration = Duration::from_secs(2);
/// The longest the end of a run waits for cancelled allocations to leave the manager's queue.
const CANCEL_WAIT: Duration = Duration::from_secs(15);

/// Job ids the manager still lists (for [`ManagerAnswer::Polled`]).
pub(in crate::runtime::coordinator) type Alive = Result<HashSet<String>, ManagerError>;

/// The manager's answer to a submission or a poll, sent to the run loop.
pub enum ManagerAnswer {
    /// The manager answered a submission: the job id, or its error.
    Submitted {
        /// The allocation's number.
        id: u32,
        /// The job id or the error.
        result: Result<String, ManagerError>,
    },
    /// The manager listed which of `ids` are still queued or running.
    Polled {
        /// The job ids asked about.
        ids: Vec<String>,
        /// Those still alive, or the manager's error.
        result: Alive,
    },
}

/// What the queue side needs to know of the run's workers.
pub(in crate::runtime::coordinator) struct Workers<'a> {
    /// Each remote worker started in a cluster job, with the job's id.
    pub allocations: Vec<(WorkerId, &'a str)>,
    /// Whether no worker at all is connected.
    pub none: bool,
}

/// What the queue side asks of the driver.
#[derive(Default)]
pub(in crate::runtime::coordinator) struct Demand {
    /// Events to show.
    pub(in crate::runtime::coordinator) events: Vec<Event>,
    /// Groups whose pending instances are cancelled as unschedulable
    /// ([`QueueSide::why`] says why).
    pub(in crate::runtime::coordinator) cancel: Vec<GroupId>,
}

/// The run's allocation queue, if it has one, and what it found no worker for.
pub(in crate::runtime::coordinator) struct QueueSide {
    queue: Option<AllocQueue>,
    /// Why groups were cancelled as unschedulable, when more is known than "no worker fits".
    unschedulable: HashMap<GroupId, String>,
    /// The run log, for copying allocations' output into it as the run ends.
    log: Option<OutputSink>,
    /// Whether an embedded worker runs tasks too (then nothing is given up on).
    local: bool,
    /// Where submissions run.
    base_dir: PathBuf,
    /// Where the manager's answers go.
    tx: LoopSender<ManagerAnswer>,
}

impl QueueSide {
    /// The side of `queue` (none without one), copying allocations' output to `log`.
    pub(in crate::runtime::coordinator) fn new(
        queue: Option<AllocQueue>,
        log: Option<OutputSink>,
        local: bool,
        base_dir: PathBuf,
        tx: LoopSender<ManagerAnswer>,
    ) -> Self {
        Self { queue, unschedulable: HashMap::new(), log, local, base_dir, tx }
    }

    /// Whether the run has a queue.
    pub(in crate::runtime::coordinator) fn has_queue(&self) -> bool {
        self.queue.is_some()
    }

    /// Submissions in flight (without a job id yet).
    pub(in crate::runtime::coordinator) fn submitting(&self) -> usize {
        self.queue.as_ref().map_or(0, AllocQueue::submitting)
    }

    /// Why `group` was cancelled as unschedulable, when more is known than "no worker fits".
    pub(in crate::runtime::coordinator) fn why(&self, group: GroupId) -> Option<&str> {
        self.unschedulable.get(&group).map(String::as_str)
    }

    /// At the start: reports the tasks the queue can never run; without an
    /// embedded worker nothing else could run them either, so they are cancelled.
    pub(in crate::runtime::coordinator) fn start(&mut self, core: &Core, graph: &Graph) -> Demand {
        let Some(queue) = self.queue.as_ref() else { return Demand::default() };
        let never = core
            .backlog(|_| true)
            .into_iter()
            .filter_map(|b| match &queue.fits[b.group.index()] {
                Fit::Never(reason) => Some((b.group, reason.to_string())),
                Fit::Slots(_) => None,
            })
            .collect();
        self.never_runs(never, "the queue cannot run it: ", graph)
    }

    /// Submits what the waiting work needs, polls when due, and gives up on
    /// the remaining work once the queue is paused and nothing is left to
    /// run it. While instances are still `comparing` with earlier runs, what
    /// is left to do is not known: a rerun with nothing to do submits nothing.
    pub(in crate::runtime::coordinator) fn tick(
        &mut self,
        core: &Core,
        workers: &Workers<'_>,
        graph: &Graph,
        comparing: bool,
    ) -> Demand {
        let mut demand = Demand::default();
        let Some(queue) = self.queue.as_mut() else { return demand };
        if queue.paused().is_none() && core.stopped().is_none() && !comparing {
            // Instances running on the embedded worker or on workers started
            // by hand need nothing from the queue.
            let own: HashSet<WorkerId> =
                workers.allocations.iter().filter(|(_, job)| queue.owns(job)).map(|&(w, _)| w).collect();
            let backlog = core.backlog(|w| own.contains(&w));
            let wanted = planner::wanted_workers(graph, &backlog, &queue.fits);
            for _ in 0..planner::submissions(&queue.queue, queue.load(), wanted) {
                let (id, script) = match queue.prepare() {
                    Ok(prepared) => prepared,
                    Err(e) => {
                        let reason = format!("cannot write a submission script: {e}");
                        queue.pause(reason.clone());
                        demand.events.push(Event::QueuePaused { reason });
                        break;
                    }
                };
                let (settings, cwd, tx) = (queue.queue.clone(), self.base_dir.clone(), self.tx.clone());
                tokio::spawn(async move {
                    let result = manager::submit(&settings, &script, &cwd).await;
                    let _ = tx.send(ManagerAnswer::Submitted { id, result });
                });
                let record = queue.record(id);
                demand.events.push(Event::Allocation { id, job_id: String::new(), state: record, reason: None });
            }
        }
        if let Some(ids) = queue.poll_due() {
            let (manager, name, tx) = (queue.queue.settings.manager, queue.job_name(), self.tx.clone());
            tokio::spawn(async move {
                let result = manager::alive(manager, &name, &ids).await;
                let _ = tx.send(ManagerAnswer::Polled { ids, result });
            });
        }
        if let Some(reason) = queue.paused()
            && !queue.has_active()
            && workers.none
        {
            let why = format!("no worker is left and {}", lowercase_first(reason));
            let groups = core.backlog(|_| true).into_iter().map(|b| (b.group, why.clone())).collect();
            self.cancel(groups, &mut demand);
        }
        demand
    }

    /// A worker of the queue joined: its allocations are uniform, so a task
    /// that fits no connected worker never will; without an embedded worker,
    /// cancel it rather than keep submitting allocations that cannot run it.
    pub(in crate::runtime::coordinator) fn worker_joined(&mut self, core: &Core, graph: &Graph) -> Demand {
        if self.local || self.queue.is_none() {
            return Demand::default();
        }
        let groups =
            core.unfit().into_iter().map(|(g, why)| (g, format!("the queue's workers cannot run it: {why}"))).collect();
        self.never_runs(groups, "", graph)
    }

    /// A worker of allocation `job` connected.
    pub(in crate::runtime::coordinator) fn joined(&mut self, job: &str) -> Vec<Event> {
        let change = self.queue.as_mut().and_then(|q| q.joined(job));
        change.map(change_events).unwrap_or_default()
    }

    /// A worker of allocation `job` left after `lived`, planned or not (`clean`), for `reason`.
    pub(in crate::runtime::coordinator) fn left(
        &mut self,
        job: &str,
        lived: Duration,
        clean: bool,
        reason: &str,
    ) -> Vec<Event> {
        let change = self.queue.as_mut().and_then(|q| q.left(job, lived, clean, reason));
        change.map(change_events).unwrap_or_default()
    }

    /// Acts on the manager's answer to a submission or a poll.
    pub(in crate::runtime::coordinator) fn answer(&mut self, event: ManagerAnswer) -> Vec<Event> {
        let Some(queue) = self.queue.as_mut() else { return Vec::new() };
        let changes = match event {
            ManagerAnswer::Submitted { id, result } => queue.submitted(id, result).into_iter().collect(),
            ManagerAnswer::Polled { ids, result: Ok(alive) } => queue.polled(&ids, &alive),
            // The manager could not be asked; workers still tell us what happens.
            ManagerAnswer::Polled { result: Err(_), .. } => Vec::new(),
        };
        changes.into_iter().flat_map(change_events).collect()
    }

    /// The run is over and its workers left: cancels every allocation still
    /// queued or running, so none is left behind, waits until the manager
    /// lists none of them, and copies their output into the run log.
    pub(in crate::runtime::coordinator) async fn finish(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        let Some(queue) = self.queue.as_mut() else { return events };
        if let Err(reason) = queue.cancel_all() {
            events.push(Event::QueuePaused { reason: format!("cancelling allocations failed: {reason}") });
        }
        // Leave only when the manager lists none of them any more.
        let (manager, name, ids) = (queue.queue.settings.manager, queue.job_name(), queue.job_ids());
        let (started, mut stragglers_cancelled) = (Instant::now(), false);
        while started.elapsed() < CANCEL_WAIT {
            let alive = match manager::alive(manager, &name, &ids).await {
                Ok(alive) if !alive.is_empty() => alive,
                _ => break,
            };
            // A job whose workers left should end by itself; if it lingers, cancel it too.
            if !stragglers_cancelled && started.elapsed() > STRAGGLER_WAIT {
                let alive: Vec<String> = alive.into_iter().collect();
                let _ = manager::cancel(manager, &alive);
                stragglers_cancelled = true;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        // Their output, complete now, joins the run log.
        if let Some(log) = self.log.take() {
            for record in queue.outputs() {
                if !log.send(record).await {
                    break;
                }
            }
        }
        events
    }

    /// Reports each of `groups` once (in `allocs.json` and as an event) as a
    /// task the queue can never run, with why; without an embedded worker,
    /// nothing else could run them either, so they are cancelled, the
    /// reason after `cancelled`.
    fn never_runs(&mut self, groups: Vec<(GroupId, String)>, cancelled: &str, graph: &Graph) -> Demand {
        let mut demand = Demand::default();
        let Some(queue) = self.queue.as_mut() else { return demand };
        queue.unschedulable(groups.iter().map(|(g, why)| format!("`{}`: {why}", graph.group(*g).name)));
        for (g, why) in &groups {
            let task = graph.group(*g).name.clone();
            demand.events.push(Event::QueueUnschedulable { task, reason: why.clone() });
        }
        if !self.local {
            let groups = groups.into_iter().map(|(g, why)| (g, format!("{cancelled}{why}"))).collect();
            self.cancel(groups, &mut demand);
        }
        demand
    }

    /// Asks for the pending instances of `groups` to be cancelled, remembering why.
    fn cancel(&mut self, groups: Vec<(GroupId, String)>, demand: &mut Demand) {
        demand.cancel.extend(groups.iter().map(|(g, _)| *g));
        self.unschedulable.extend(groups);
    }
}

/// The events showing an allocation's new state.
fn change_events(change: Change) -> Vec<Event> {
    let Change { record, paused } = change;
    let mut events =
        vec![Event::Allocation { id: record.id, job_id: record.job_id, state: record.state, reason: record.reason }];
    if let Some(reason) = paused {
        events.push(Event::QueuePaused { reason });
    }
    events
}

/// `The Slurm queue…` → `the Slurm queue…`.
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default()
}
