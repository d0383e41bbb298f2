//! Test helpers: graphs built by hand ([`GroupSpec`], [`graph`], edges), a
//! recording [`Out`] ([`Recorder`]) and [`TestEnv`], which ties them to a
//! [`Core`].

use std::collections::BTreeMap;

use crate::ir::{Amount, Edge, EdgeKind, EdgeOn, EdgeOrigin, Graph, Group, GroupId, Resources, TaskId, TaskTemplate};
use crate::resources::WorkerShape;
use crate::runtime::core::{
    Allocation, CancelReason, Core, CoreOptions, Out, Retry, StateCounts, TaskResult, TaskState, WorkerId,
};

/// A fractional amount.
pub(crate) fn amount(units: f64) -> Amount {
    Amount::from_f64(units).expect("valid amount")
}

/// A request for `cpus` and `gpus`.
pub(crate) fn res(cpus: f64, gpus: f64) -> Resources {
    Resources { cpus: amount(cpus), gpus: amount(gpus), ..Resources::default() }
}

/// A group under construction: one instance per index, one CPU each.
#[derive(Debug, Clone)]
pub(crate) struct GroupSpec(Group);

impl GroupSpec {
    /// `count` instances named `name`, each asking for one CPU.
    pub(crate) fn new(name: &str, count: u64) -> Self {
        GroupSpec(Group { variants: vec![res(1.0, 0.0)], ..Group::range(name, count, TaskTemplate::shell("true")) })
    }

    /// The requests of attempt 1, 2, … ([`Group::retry_variants`]).
    pub(crate) fn retry_variants(mut self, retry: Vec<Vec<Resources>>) -> Self {
        self.0.retry_variants = retry;
        self
    }

    /// CPUs of the first variant.
    pub(crate) fn cpus(mut self, cpus: f64) -> Self {
        self.0.variants[0].cpus = amount(cpus);
        self
    }

    /// GPUs of the first variant.
    pub(crate) fn gpus(mut self, gpus: f64) -> Self {
        self.0.variants[0].gpus = amount(gpus);
        self
    }

    /// Memory (bytes) of the first variant.
    pub(crate) fn memory(mut self, bytes: u64) -> Self {
        self.0.variants[0].memory = bytes;
        self
    }

    /// A custom resource of the first variant.
    pub(crate) fn custom(mut self, name: &str, units: f64) -> Self {
        self.0.variants[0].custom.insert(name.to_owned(), amount(units));
        self
    }

    /// Time request (seconds) of the first variant.
    pub(crate) fn time(mut self, secs: u64) -> Self {
        self.0.variants[0].time_request = Some(secs);
        self
    }

    /// Replaces the variants.
    pub(crate) fn variants(mut self, variants: Vec<Resources>) -> Self {
        self.0.variants = variants;
        self
    }

    pub(crate) fn priority(mut self, priority: i64) -> Self {
        self.0.priority = priority;
        self
    }

    pub(crate) fn retries(mut self, retries: u32) -> Self {
        self.0.retries = retries;
        self
    }

    /// A wait of `first_us` before the first retry, times `factor` before each later one.
    pub(crate) fn retry_delay(mut self, first_us: u64, factor: f64) -> Self {
        self.0.retry_delay = Some(crate::ir::BackOff { first_us, factor, max_us: None });
        self
    }

    /// Cancel the rest once this many instances failed.
    pub(crate) fn max_fails(mut self, max: crate::ir::MaxFails) -> Self {
        self.0.max_fails = Some(max);
        self
    }

    /// Failed instances release their dependents.
    pub(crate) fn continue_on_failure(mut self) -> Self {
        self.0.continue_on_failure = true;
        self
    }

    pub(crate) fn crash_limit(mut self, limit: u32) -> Self {
        self.0.crash_limit = limit;
        self
    }

    pub(crate) fn nodes(mut self, nodes: u32) -> Self {
        self.0.nodes = nodes;
        self
    }

    pub(crate) fn build(self) -> Group {
        self.0
    }
}

/// A graph of `groups` (ids in order) and `edges`.
pub(crate) fn graph(groups: Vec<GroupSpec>, edges: Vec<Edge>) -> Graph {
    Graph {
        name: "test".to_owned(),
        vars: BTreeMap::new(),
        groups: groups.into_iter().map(GroupSpec::build).collect(),
        edges,
        max_fails: None,
        finally: None,
        container_engine: None,
        images: BTreeMap::new(),
        dropped: Vec::new(),
    }
}

fn edge(from: u32, to: u32, kind: EdgeKind) -> Edge {
    Edge { from: GroupId(from), to: GroupId(to), kind, origin: EdgeOrigin::After, on: EdgeOn::Success }
}

/// `edge`, waiting for the outcome `on` of its `from` instances.
pub(crate) fn on(on: EdgeOn, edge: Edge) -> Edge {
    Edge { on, ..edge }
}

/// Every instance of `to` waits for all of `from`.
pub(crate) fn edge_all(from: u32, to: u32) -> Edge {
    edge(from, to, EdgeKind::All)
}

/// Instance `i` of `to` waits for instance `i` of `from`.
pub(crate) fn edge_each(from: u32, to: u32) -> Edge {
    edge(from, to, EdgeKind::ElementWise)
}

/// Instance `i` of `to` waits for the `from` instances in `rows[i]`.
pub(crate) fn edge_explicit(from: u32, to: u32, rows: &[&[u64]]) -> Edge {
    let mut offsets = vec![0];
    let mut sources = Vec::new();
    for row in rows {
        sources.extend_from_slice(row);
        offsets.push(sources.len() as u64);
    }
    edge(from, to, EdgeKind::Explicit { offsets, sources })
}

/// Task `instance` of group `group`.
pub(crate) fn t(group: u32, instance: u64) -> TaskId {
    TaskId::new(GroupId(group), instance)
}

/// A call the core made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    Start(TaskId, u32, WorkerId),
    State(TaskId, TaskState),
    /// [`Out::cancelled_rest`]: a group's instances that never started, cancelled together.
    Rest(GroupId, u64, CancelReason),
}

/// What [`TestEnv::stop`] caused: states one by one, then how many
/// instances of each group were cancelled together.
pub(crate) type Stopped = (Vec<(TaskId, TaskState)>, Vec<(GroupId, u64)>);

/// A recording [`Out`], which also tracks what is running with which allocation.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) events: Vec<Event>,
    pub(crate) running: BTreeMap<TaskId, (WorkerId, Allocation)>,
}

impl Out for Recorder {
    fn start(&mut self, task: TaskId, attempt: u32, worker: WorkerId, alloc: &Allocation) {
        self.events.push(Event::Start(task, attempt, worker));
        let previous = self.running.insert(task, (worker, alloc.clone()));
        assert!(previous.is_none(), "{task:?} started twice");
    }

    fn state(&mut self, task: TaskId, state: TaskState) {
        self.events.push(Event::State(task, state));
    }

    fn cancelled_rest(&mut self, group: GroupId, count: u64, reason: CancelReason) {
        self.events.push(Event::Rest(group, count, reason));
    }
}

/// The time the tests schedule at, in µs since the Unix epoch: fixed, as the core has no clock.
pub(crate) const NOW: u64 = 1_700_000_000_000_000;

/// A core, a recorder and a clock.
pub(crate) struct TestEnv {
    pub(crate) core: Core,
    pub(crate) out: Recorder,
    pub(crate) now: u64,
}

impl TestEnv {
    pub(crate) fn new(groups: Vec<GroupSpec>, edges: Vec<Edge>) -> Self {
        Self::with_options(groups, edges, CoreOptions::default())
    }

    pub(crate) fn with_options(groups: Vec<GroupSpec>, edges: Vec<Edge>, options: CoreOptions) -> Self {
        TestEnv { core: Core::new(&graph(groups, edges), options), out: Recorder::default(), now: NOW }
    }

    /// Adds a worker with CPU ids `0..cpus` and GPU ids `0..gpus`.
    pub(crate) fn worker(&mut self, cpus: u32, gpus: u32) -> WorkerId {
        let shape = WorkerShape { cpus: (0..cpus).collect(), gpus: (0..gpus).collect(), ..WorkerShape::default() };
        self.core.add_worker(shape, None)
    }

    /// Schedules; returns the tasks started.
    pub(crate) fn schedule(&mut self) -> Vec<TaskId> {
        let before = self.out.events.len();
        self.core.schedule(self.now, &mut self.out);
        self.out.events[before..]
            .iter()
            .filter_map(|e| match e {
                Event::Start(task, ..) => Some(*task),
                Event::State(..) | Event::Rest(..) => None,
            })
            .collect()
    }

    /// Reports `task` as finished with `result`; returns the state events it caused.
    pub(crate) fn report(&mut self, task: TaskId, result: TaskResult) -> Vec<(TaskId, TaskState)> {
        self.out.running.remove(&task);
        let before = self.out.events.len();
        self.core.on_finished(task, result, self.now, &mut self.out);
        self.states_since(before)
    }

    /// Reports `task` as finished with `result`; returns whether the core runs it again.
    pub(crate) fn retry(&mut self, task: TaskId, result: TaskResult) -> Retry {
        self.out.running.remove(&task);
        self.core.on_finished(task, result, self.now, &mut self.out)
    }

    pub(crate) fn finish(&mut self, task: TaskId) -> Vec<(TaskId, TaskState)> {
        self.report(task, TaskResult::Succeeded)
    }

    pub(crate) fn fail(&mut self, task: TaskId) -> Vec<(TaskId, TaskState)> {
        self.report(task, TaskResult::Failed)
    }

    /// Removes a worker; returns the state events it caused.
    pub(crate) fn lose(&mut self, worker: WorkerId) -> Vec<(TaskId, TaskState)> {
        self.out.running.retain(|_, (w, a)| *w != worker && !a.nodes.contains(&worker));
        let before = self.out.events.len();
        self.core.remove_worker(worker, None, &mut self.out);
        self.states_since(before)
    }

    /// Stops the run; returns the state events it caused, and the groups
    /// whose instances that never started it cancelled, with how many.
    pub(crate) fn stop(&mut self) -> Stopped {
        let before = self.out.events.len();
        self.core.stop(&mut self.out);
        (self.states_since(before), self.rest_since(before))
    }

    /// The groups cancelled together since event `before`, with how many
    /// instances each.
    pub(crate) fn rest_since(&self, before: usize) -> Vec<(GroupId, u64)> {
        self.out.events[before..]
            .iter()
            .filter_map(|e| match e {
                Event::Rest(group, count, _) => Some((*group, *count)),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn states_since(&self, before: usize) -> Vec<(TaskId, TaskState)> {
        self.out.events[before..]
            .iter()
            .filter_map(|e| match e {
                Event::State(task, state) => Some((*task, *state)),
                Event::Start(..) | Event::Rest(..) => None,
            })
            .collect()
    }

    /// Running tasks, in id order.
    pub(crate) fn running(&self) -> Vec<TaskId> {
        self.out.running.keys().copied().collect()
    }

    /// The allocation of running `task`.
    pub(crate) fn alloc(&self, task: TaskId) -> &Allocation {
        &self.out.running[&task].1
    }

    /// The attempt number of the last start of `task`.
    pub(crate) fn attempt(&self, task: TaskId) -> Option<u32> {
        self.out.events.iter().rev().find_map(|e| match e {
            Event::Start(t, attempt, _) if *t == task => Some(*attempt),
            _ => None,
        })
    }

    /// Runs everything to the end, finishing each started task with
    /// `result(task)`; returns the tasks in start order.
    pub(crate) fn drain(&mut self, mut result: impl FnMut(TaskId) -> TaskResult) -> Vec<TaskId> {
        let mut order = Vec::new();
        loop {
            order.extend(self.schedule());
            let Some(&task) = self.out.running.keys().next() else { break };
            self.report(task, result(task));
        }
        order
    }

    pub(crate) fn counts(&self) -> StateCounts {
        self.core.counts()
    }
}
