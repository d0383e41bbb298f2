//! [`Core`]: the scheduler's state — groups, dependencies, workers and the
//! tasks running on them — and the calls that build and inspect it.
//! The rest of its methods are in the files under `core/`, children of
//! this module so that its fields stay private: matching in `matching.rs`,
//! event handling in `events.rs`, and one file per concern beside them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hashbrown::HashMap;

use crate::ir::{Domain, Graph, GroupId, MaxFails, TaskId};

use super::allocation::Allocation;
use super::deps::{Deps, Link};
use super::group_state::{GroupState, Instance};
use super::order::Order;
use super::out::CancelReason;
use super::state_counts::StateCounts;
use super::worker::Worker;
use super::worker_id::WorkerId;
use crate::resources::{Deadline, Names, Request, WorkerShape};

mod adopt;
mod backlog;
mod deferred;
mod events;
mod matching;
mod nested_parts;
mod precheck;
mod prefetch;
mod skips;
mod unschedulable;
mod waiting;

#[cfg(test)]
pub(crate) mod tests;

pub use backlog::GroupBacklog;

/// Settings of a run that the core enforces.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CoreOptions {
    /// Stop the run (cancel everything not yet running) once this many
    /// tasks (or this share of them) have failed for good; failures a
    /// task's `continue_on_failure` ignores do not count.
    pub max_fails: Option<MaxFails>,
}

/// The scheduler core: plain data, no I/O. The driver feeds it events
/// (workers coming and going, tasks finishing) and it answers through an
/// [`super::Out`]: which task to start where, and which task reached which
/// state.
#[derive(Debug)]
pub struct Core {
    groups: Vec<GroupState>,
    links: Vec<Vec<Link>>,
    order: Order,
    names: Names,
    /// Indexed by [`WorkerId`]; `None` once removed.
    workers: Vec<Option<Worker>>,
    running: HashMap<TaskId, Running>,
    /// Attempts, failures and crashes of tasks that have had any.
    history: HashMap<TaskId, History>,
    options: CoreOptions,
    /// Set once the run stops; nothing starts afterwards.
    stopped: Option<CancelReason>,
    /// Pending instances of all groups.
    pending: u64,
    /// Tasks failed for good (not counting ignored failures).
    failed: u64,
    /// Instances waiting to be retried (`retry_delay`), earliest due first;
    /// may hold entries of instances cancelled meanwhile.
    waiting: BinaryHeap<Reverse<(u64, TaskId)>>,
    /// Bumped whenever a group gains ready instances, so workers that found
    /// nothing to run are tried again.
    epoch: u64,
    /// Whether some group needs several nodes.
    multinode: bool,
    /// Allocations of finished tasks, kept for reuse.
    spare: Vec<Allocation>,
    /// Scratch list of workers.
    scratch: Vec<usize>,
    /// Running tasks on prefetch workers that may get a task sent ahead.
    heads: Vec<TaskId>,
    /// Groups known only at run time whose writers are done: their
    /// instances can be read now ([`Core::take_resolvable`]).
    resolvable: Vec<GroupId>,
    /// Parts of nested groups whose files can be read now ([`Core::take_parts`]).
    parts_ready: Vec<(GroupId, u64)>,
    /// Groups whose ready instances are compared with an earlier run first.
    prechecked: Vec<usize>,
}

/// A running task.
#[derive(Debug)]
struct Running {
    worker: WorkerId,
    attempt: u32,
    alloc: Allocation,
    /// The task sent ahead to start on these resources when this one ends.
    next: Option<TaskId>,
    /// For a task holding its resources: the last task in line on them (itself when none).
    tail: TaskId,
    /// For a task holding its resources: how many wait in line on them.
    behind: u8,
}

impl Running {
    /// Attempt `attempt` of `task` on `worker`, holding `alloc`, with no line behind it.
    fn new(task: TaskId, worker: WorkerId, attempt: u32, alloc: Allocation) -> Self {
        Running { worker, attempt, alloc, next: None, tail: task, behind: 0 }
    }
}

/// What happened to a task in earlier attempts.
#[derive(Debug, Clone, Copy, Default)]
struct History {
    /// The number of the next (or current) attempt.
    attempt: u32,
    /// Attempts that failed.
    failures: u32,
    /// Attempts whose worker was lost.
    crashes: u32,
}

impl Core {
    /// A core for `graph` with no workers and nothing started.
    pub fn new(graph: &Graph, options: CoreOptions) -> Core {
        let mut names = Names::default();
        let Deps { links, blocked_by, remaining } = Deps::new(graph);
        let groups: Vec<GroupState> = graph
            .groups
            .iter()
            .zip(remaining)
            .zip(blocked_by)
            .enumerate()
            .map(|(g, ((group, remaining), blocked_by))| {
                let variants = group.variants.iter().map(|v| Request::new(v, &mut names)).collect();
                let retry_variants = group
                    .retry_variants
                    .iter()
                    .map(|list| list.iter().map(|v| Request::new(v, &mut names)).collect())
                    .collect();
                let deferred = graph.is_deferred(GroupId(g as u32));
                GroupState::new(group, variants, retry_variants, remaining, blocked_by, deferred)
            })
            .collect();
        let resolvable = (0..groups.len())
            .filter(|&g| !groups[g].is_blocked() && matches!(graph.groups[g].domain, Domain::Deferred { .. }))
            .map(Self::group_id)
            .collect();
        let mut core = Core {
            pending: groups.iter().map(GroupState::pending).sum(),
            multinode: groups.iter().any(|g| g.settings().nodes > 1),
            order: Order::new(graph),
            groups,
            links,
            names,
            workers: Vec::new(),
            running: HashMap::new(),
            history: HashMap::new(),
            options,
            stopped: None,
            failed: 0,
            waiting: BinaryHeap::new(),
            epoch: 0,
            spare: Vec::new(),
            scratch: Vec::new(),
            heads: Vec::new(),
            resolvable,
            parts_ready: Vec::new(),
            prechecked: Vec::new(),
        };
        core.expect_parts(graph);
        for g in 0..core.groups.len() {
            let blocks = graph.groups[g].count > 0 || graph.is_dynamic(GroupId(g as u32));
            if blocks && core.waits_for_end(g) {
                core.groups[g].wait_for_end();
            }
        }
        for g in 0..core.groups.len() {
            core.sync_active(g);
        }
        core
    }

    /// Adds a worker of `shape` that goes away at `deadline` (a task whose
    /// `time_request` does not end before then is not given to it); it gets
    /// work at the next [`Core::schedule`].
    pub fn add_worker(&mut self, shape: WorkerShape, deadline: Option<Deadline>) -> WorkerId {
        self.workers.push(Some(Worker::new(shape, deadline, &mut self.names)));
        WorkerId(self.workers.len() as u32 - 1)
    }

    /// Records that `task` was done in an earlier run (resume): it counts as
    /// succeeded, never starts, and releases its dependents. Call before
    /// scheduling; returns false (and does nothing) unless `task` is pending.
    pub fn mark_succeeded(&mut self, task: TaskId) -> bool {
        let Some(group) = self.groups.get_mut(task.group.index()) else { return false };
        if !group.end_pending(task.instance, Instance::Succeeded) {
            return false;
        }
        self.pending -= 1;
        self.sync_active(task.group.index());
        self.release_dependents(task);
        true
    }

    /// How many tasks are in each state.
    pub fn counts(&self) -> StateCounts {
        let ready: u64 = self.groups.iter().map(GroupState::ready).sum();
        StateCounts {
            waiting: self.pending - ready,
            ready,
            running: self.running.len() as u64,
            succeeded: self.groups.iter().map(GroupState::succeeded).sum(),
            failed: self.failed,
            cancelled: self.groups.iter().map(GroupState::cancelled).sum(),
            skipped: self.groups.iter().map(GroupState::skipped).sum(),
        }
    }

    /// Whether instance `task` ended without succeeding: it failed (its
    /// failure perhaps ignored) or was cancelled.
    pub fn did_not_succeed(&self, task: TaskId) -> bool {
        self.groups.get(task.group.index()).is_some_and(|g| {
            task.instance < g.count() && matches!(g.state(task.instance), Instance::Failed | Instance::Cancelled)
        })
    }

    /// What running task `task` was given (a task sent ahead holds what the
    /// task before it holds).
    pub fn allocation(&self, task: TaskId) -> Option<&Allocation> {
        self.running.get(&task).map(|run| &run.alloc)
    }

    /// Whether nothing is waiting, ready or running.
    pub fn is_finished(&self) -> bool {
        self.pending == 0 && self.running.is_empty()
    }

    /// Whether the run was stopped ([`Core::stop`] or `max_fails`), and why.
    pub fn stopped(&self) -> Option<CancelReason> {
        self.stopped
    }

    /// Whether `group` reached its own `max_fails`, which cancelled the
    /// rest of its instances.
    pub fn reached_max_fails(&self, group: GroupId) -> bool {
        self.groups.get(group.index()).is_some_and(GroupState::reached_max_fails)
    }

    /// Updates the ready-group set after `g` changed, and releases what
    /// waits for `g` to end if it just did.
    pub(super) fn sync_active(&mut self, g: usize) {
        self.ended(g);
        if self.order.set_active(g, self.groups[g].is_active()) {
            self.epoch += 1;
        }
    }

    /// The attempt number `task` runs as next.
    pub(super) fn attempt_of(&self, task: TaskId) -> u32 {
        if self.history.is_empty() { 0 } else { self.history.get(&task).map_or(0, |h| h.attempt) }
    }

    /// `task` succeeded: count it towards the instances and groups waiting for it.
    pub(super) fn release_dependents(&mut self, task: TaskId) {
        let (g, i) = (task.group.index(), task.instance);
        let complete = self.groups[g].is_complete();
        for l in 0..self.links[g].len() {
            let link = &self.links[g][l];
            let to = link.to();
            let target = &mut self.groups[to];
            match link {
                Link::All { any_end: false, .. } if complete => self.source_done(to),
                Link::All { .. } => continue,
                Link::Parts { .. } => self.parent_done(to, i),
                _ => link.dependents(&i, target.count()).iter().for_each(|&t| target.release(t)),
            }
            if self.order.set_active(to, self.groups[to].is_active()) {
                self.epoch += 1;
            }
        }
        self.ended(g);
    }

    /// Whether some group waits for all of `g` to end, however
    /// (`after` with `on = "failure"` or `"always"`).
    pub(super) fn waits_for_end(&self, g: usize) -> bool {
        self.links[g].iter().any(|l| matches!(l, Link::All { any_end: true, .. }))
    }

    /// If every instance of `g` just ended, releases the groups waiting
    /// for it to end however; each only once.
    pub(super) fn ended(&mut self, g: usize) {
        if !self.groups[g].settle() {
            return;
        }
        for l in 0..self.links[g].len() {
            if let Link::All { to, any_end: true } = self.links[g][l] {
                self.source_done(to);
                self.sync_active(to);
            }
        }
    }

    /// One `All` source of group `to` is complete.
    pub(super) fn source_done(&mut self, to: usize) {
        let target = &mut self.groups[to];
        if target.source_done() {
            if target.is_deferred() {
                self.resolvable.push(Self::group_id(to));
            }
            self.unblock_parts(to);
        }
    }

    /// The id of group `g`.
    pub(super) fn group_id(g: usize) -> GroupId {
        GroupId(g as u32)
    }

    /// Estimated heap bytes of the per-instance state, for the memory test.
    #[cfg(test)]
    pub(super) fn instance_heap_bytes(&self) -> usize {
        self.groups.iter().map(GroupState::heap_bytes).sum()
    }
}
