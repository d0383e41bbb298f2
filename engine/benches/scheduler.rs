//! Scheduler core: the cost of one match — finish a task, then schedule one
//! task onto the freed CPU — with 1,000,000 queued instances (one group, and
//! ten groups of different priorities, and a two-stage element-wise
//! pipeline), the throughput of running 1,000,000 tasks through a 2-CPU
//! worker, and resolving the parts of a per-instance fan-out: 10,000
//! producer instances listing 1 to 10 items each.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::collections::{BTreeMap, VecDeque};
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use flow_engine::bench::{
    Allocation, CancelReason, Core, CoreOptions, Out, TaskResult, TaskState, WorkerId, WorkerShape,
};
use flow_engine::ir::{
    Domain, Edge, EdgeKind, EdgeOn, EdgeOrigin, Expansion, Graph, Group, GroupId, TaskId, TaskTemplate,
};

const MILLION: u64 = 1_000_000;

/// Keeps the running tasks in start order; ignores state changes.
#[derive(Default)]
struct Sink(VecDeque<TaskId>);

impl Out for Sink {
    fn start(&mut self, task: TaskId, attempt: u32, worker: WorkerId, alloc: &Allocation) {
        black_box((attempt, worker, alloc));
        self.0.push_back(task);
    }

    fn state(&mut self, task: TaskId, state: TaskState) {
        black_box((task, state));
    }
    fn cancelled_rest(&mut self, group: GroupId, count: u64, reason: CancelReason) {
        black_box((group, count, reason));
    }
}

fn group(name: &str, count: u64, priority: i64) -> Group {
    Group { priority, ..Group::range(name, count, TaskTemplate::shell("true")) }
}

fn graph(groups: Vec<Group>, edges: Vec<Edge>) -> Graph {
    Graph {
        name: "bench".to_owned(),
        vars: BTreeMap::new(),
        groups,
        edges,
        container_engine: None,
        images: BTreeMap::new(),
        max_fails: None,
        finally: None,
        dropped: Vec::new(),
    }
}

/// One group of a million instances.
fn one_group() -> Graph {
    graph(vec![group("big", MILLION, 0)], vec![])
}

/// Ten groups of 100,000 instances, priorities 0 to 9.
fn ten_groups() -> Graph {
    graph((0..10).map(|i| group(&format!("g{i}"), MILLION / 10, i)).collect(), vec![])
}

/// `b[i]` waits for `a[i]`, 500,000 each.
fn pipeline() -> Graph {
    let edge = Edge {
        from: GroupId(0),
        to: GroupId(1),
        kind: EdgeKind::ElementWise,
        origin: EdgeOrigin::After,
        on: EdgeOn::Success,
    };
    graph(vec![group("a", MILLION / 2, 0), group("b", MILLION / 2, 0)], vec![edge])
}

/// A core for `graph` with one 2-CPU worker, both CPUs busy.
fn busy_core(graph: &Graph, now: u64) -> (Core, Sink) {
    let mut core = Core::new(graph, CoreOptions::default());
    core.add_worker(WorkerShape { cpus: vec![0, 1], ..WorkerShape::default() }, None);
    let mut sink = Sink::default();
    core.schedule(now, &mut sink);
    (core, sink)
}

/// Finishes the oldest running task and schedules one into its place.
fn one_match(core: &mut Core, sink: &mut Sink, now: u64) {
    if let Some(task) = sink.0.pop_front() {
        core.on_finished(task, TaskResult::Succeeded, now, sink);
        core.schedule(now, sink);
    }
}

/// Times `iters` matches, on fresh cores that keep at least half of their
/// instances queued; building the cores is not timed.
fn time_matches(graph: &Graph, iters: u64) -> Duration {
    let now = 0;
    let budget = graph.instance_count() / 2;
    let (mut total, mut left) = (Duration::ZERO, iters);
    while left > 0 {
        let (mut core, mut sink) = busy_core(graph, now);
        let n = left.min(budget);
        let start = Instant::now();
        for _ in 0..n {
            one_match(&mut core, &mut sink, now);
        }
        total += start.elapsed();
        left -= n;
    }
    total
}

fn matching(c: &mut Criterion) {
    let mut group = c.benchmark_group("scheduler/match_1m_queued");
    for (name, graph) in [("one_group", one_group()), ("ten_priorities", ten_groups()), ("element_wise", pipeline())] {
        group.bench_function(name, |b| b.iter_custom(|iters| time_matches(&graph, iters)));
    }
    group.finish();
}

fn throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("scheduler");
    group.sample_size(10);
    let graph = one_group();
    group.bench_function("new_1m", |b| b.iter(|| Core::new(black_box(&graph), CoreOptions::default())));
    let now = 0;
    group.bench_function("run_1m_on_2_cpus", |b| {
        b.iter_batched(
            || busy_core(&graph, now),
            |(mut core, mut sink)| {
                while !sink.0.is_empty() {
                    one_match(&mut core, &mut sink, now);
                }
                assert!(core.is_finished());
                core
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// `search` (10,000) → `refine`, a part per search instance.
fn fanout_graph() -> Graph {
    let mut refine = group("refine", 0, 0);
    let expansion = Expansion::Lines { file: "hits/{{ index }}.txt".to_owned() };
    refine.domain = Domain::Nested { parent: GroupId(0), expansion, parts: Default::default() };
    let edge = Edge {
        from: GroupId(0),
        to: GroupId(1),
        kind: EdgeKind::ElementWise,
        origin: EdgeOrigin::Expansion,
        on: EdgeOn::Success,
    };
    graph(vec![group("search", 10_000, 0), refine], vec![edge])
}

/// Every search instance done, and its part (1 to 10 items) read into the
/// graph and the core: the coordinator's work for the parts, without the files.
fn resolve_parts(graph: &mut Graph, items: &[String]) -> Core {
    let mut core = Core::new(graph, CoreOptions::default());
    for i in 0..10_000 {
        core.mark_succeeded(TaskId::new(GroupId(0), i));
    }
    for (id, outer) in core.take_parts() {
        let n = 1 + (7 * outer as usize) % 10;
        let (members, added) = graph.add_part(id, outer, items[..n].iter().map(String::as_str));
        core.add_part(&members, outer, added);
    }
    assert_eq!(graph.group(GroupId(1)).count, 55_000);
    core
}

fn fanout(c: &mut Criterion) {
    let mut group = c.benchmark_group("fanout");
    group.sample_size(10);
    let items: Vec<String> = (0..10).map(|i| format!("ligand-{i}")).collect();
    group.bench_function("resolve_10k_parts", |b| {
        b.iter_batched(fanout_graph, |mut graph| resolve_parts(&mut graph, &items), BatchSize::LargeInput)
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = matching, throughput, fanout
}
criterion_main!(benches);
