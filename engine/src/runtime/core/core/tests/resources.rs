//! Resources: pools are never oversubscribed, fractions share devices,
//! variants are tried in order, sum pools and time requests are respected.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use proptest::prelude::*;

use super::env::{GroupSpec, TestEnv, amount, edge_all, edge_each, graph, res, t};
use crate::ir::{Amount, Edge, Graph, TaskId};
use crate::resources::{Deadline, WorkerShape};
use crate::runtime::core::{Core, CoreOptions, TaskResult, TaskState};

const GIB: u64 = 1 << 30;

#[test]
fn four_quarter_gpus_share_one_device_and_a_fifth_waits() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 5).cpus(0.0).gpus(0.25)], vec![]);
    env.worker(8, 1);
    let started = env.schedule();
    assert_eq!(started, [t(0, 0), t(0, 1), t(0, 2), t(0, 3)]);
    for task in &started {
        assert_eq!(env.alloc(*task).gpus, [(0, amount(0.25))]);
    }
    assert_eq!(env.counts().ready, 1);
    env.finish(t(0, 2));
    assert_eq!(env.schedule(), [t(0, 4)]);
}

#[test]
fn fractions_fill_a_partly_used_gpu_first() {
    let mut env = TestEnv::new(
        vec![GroupSpec::new("half", 1).cpus(0.0).gpus(0.5), GroupSpec::new("quarter", 2).cpus(0.0).gpus(0.25)],
        vec![],
    );
    env.worker(1, 2);
    assert_eq!(env.schedule().len(), 3);
    assert_eq!(env.alloc(t(0, 0)).gpus, [(0, amount(0.5))]);
    assert_eq!(env.alloc(t(1, 0)).gpus, [(0, amount(0.25))]);
    assert_eq!(env.alloc(t(1, 1)).gpus, [(0, amount(0.25))], "gpu 1 stays whole");
}

#[test]
fn whole_cpus_are_the_lowest_free_ids() {
    let mut env = TestEnv::new(vec![GroupSpec::new("one", 1), GroupSpec::new("two", 1).cpus(2.0)], vec![]);
    env.worker(4, 0);
    env.schedule();
    assert_eq!(env.alloc(t(0, 0)).cpus, [(0, Amount::whole(1))]);
    assert_eq!(env.alloc(t(1, 0)).cpus, [(1, Amount::whole(1)), (2, Amount::whole(1))]);
}

#[test]
fn the_first_variant_that_fits_wins() {
    let variants = vec![res(1.0, 1.0), res(2.0, 0.0)];
    let mut env = TestEnv::new(vec![GroupSpec::new("score", 4).variants(variants)], vec![]);
    env.worker(4, 1);
    let started = env.schedule();
    assert_eq!(started.len(), 2, "one on the gpu, then one with two cpus; 1 cpu left");
    assert_eq!(env.alloc(started[0]).variant, 0);
    assert_eq!(env.alloc(started[0]).gpus, [(0, Amount::whole(1))]);
    assert_eq!(env.alloc(started[1]).variant, 1);
    assert!(env.alloc(started[1]).gpus.is_empty());
    env.finish(started[0]);
    let next = env.schedule();
    assert_eq!(next.len(), 1);
    assert_eq!(env.alloc(next[0]).variant, 0, "the gpu is free again");
}

#[test]
fn memory_and_custom_resources_are_sum_pools() {
    let mut env =
        TestEnv::new(vec![GroupSpec::new("m", 3).memory(3 * GIB), GroupSpec::new("f", 3).custom("fpga", 1.5)], vec![]);
    let shape = WorkerShape {
        cpus: (0..8).collect(),
        memory: 7 * GIB,
        custom: [("fpga".to_owned(), Amount::whole(3))].into(),
        ..WorkerShape::default()
    };
    env.core.add_worker(shape, None);
    let started = env.schedule();
    assert_eq!(started, [t(0, 0), t(0, 1), t(1, 0), t(1, 1)]);
    let alloc = env.alloc(t(1, 0));
    assert_eq!((alloc.custom.len(), &*alloc.custom[0].0, alloc.custom[0].1), (1, "fpga", amount(1.5)));
    assert_eq!(env.alloc(t(0, 1)).memory, 3 * GIB);
    env.finish(t(0, 0));
    env.finish(t(1, 0));
    assert_eq!(env.schedule(), [t(0, 2), t(1, 2)]);
}

#[test]
fn time_requests_must_fit_before_the_worker_deadline() {
    let mut env = TestEnv::new(vec![GroupSpec::new("long", 1).time(7200), GroupSpec::new("short", 1).time(60)], vec![]);
    let deadline = Some(Deadline::after(env.now, Duration::from_secs(3600)));
    env.core.add_worker(WorkerShape { cpus: vec![0, 1], ..WorkerShape::default() }, deadline);
    assert_eq!(env.schedule(), [t(1, 0)]);
    env.worker(1, 0);
    assert_eq!(env.schedule(), [t(0, 0)], "a worker without a deadline takes it");
}

/// A request: cpus, gpus, GiB of memory, licenses.
type Request = (f64, f64, u64, u64);
/// A group: count, retries, variants.
type Spec = (u64, u32, Vec<Request>);
/// An edge: from, to, whether it is `All` (else element-wise).
type EdgeSpec = (u32, u32, bool);

/// One random resource request that fits a 4-cpu, 2-gpu worker.
fn request() -> impl Strategy<Value = Request> {
    let cpus = prop::sample::select(vec![0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0]);
    let gpus = prop::sample::select(vec![0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0]);
    (cpus, gpus, 0..=4u64, 0..=3u64)
}

/// Random groups (count, retries, variants) and edges between them.
fn workload() -> impl Strategy<Value = (Vec<Spec>, Vec<EdgeSpec>)> {
    let groups = prop::collection::vec((1..6u64, 0..2u32, prop::collection::vec(request(), 1..3)), 1..6);
    let edges = prop::collection::vec((0..6u32, 0..6u32, any::<bool>()), 0..6);
    (groups, edges)
}

fn build(groups: &[Spec], edges: &[EdgeSpec]) -> Graph {
    let specs = groups.iter().enumerate().map(|(i, (count, retries, variants))| {
        let variants = variants
            .iter()
            .map(|&(cpus, gpus, mem, lic)| crate::ir::Resources {
                memory: mem * GIB,
                custom: [("lic".to_owned(), Amount::whole(lic))].into(),
                ..res(cpus, gpus)
            })
            .collect();
        GroupSpec::new(&format!("g{i}"), *count).retries(*retries).variants(variants)
    });
    let n = groups.len() as u32;
    let edges: Vec<Edge> = edges
        .iter()
        .filter(|(a, b, _)| a < b && *b < n)
        .map(|&(a, b, all)| if all { edge_all(a, b) } else { edge_each(a, b) })
        .collect();
    graph(specs.collect(), edges)
}

fn worker() -> WorkerShape {
    WorkerShape {
        cpus: (0..4).collect(),
        gpus: (0..2).collect(),
        memory: 8 * GIB,
        custom: [("lic".to_owned(), Amount::whole(3))].into(),
    }
}

proptest! {
    #[test]
    fn allocations_never_exceed_capacity((groups, edges) in workload(), actions in prop::collection::vec(0..10u8, 200)) {
        let graph = build(&groups, &edges);
        let mut env = TestEnv { core: Core::new(&graph, CoreOptions::default()), out: Default::default(), now: super::env::NOW };
        let mut worker_id = env.core.add_worker(worker(), None);
        let mut step = 0;
        while !env.core.is_finished() {
            env.schedule();
            check_capacity(&env, &graph);
            let running = env.running();
            prop_assert!(!running.is_empty() || env.core.is_finished(), "stuck: {:?}", env.counts());
            let Some(&task) = running.get(actions[step % actions.len()] as usize % running.len().max(1)) else { break };
            match actions[(step + 7) % actions.len()] {
                0 | 1 => {
                    env.report(task, TaskResult::Failed);
                }
                2 => {
                    // The worker is lost and a fresh one joins.
                    env.lose(worker_id);
                    worker_id = env.core.add_worker(worker(), None);
                }
                _ => {
                    env.report(task, TaskResult::Succeeded);
                }
            }
            step += 1;
        }
        check_final_states(&env, &graph);
    }
}

fn check_capacity(env: &TestEnv, graph: &Graph) {
    let (mut cpus, mut gpus, mut memory, mut lic) = (BTreeMap::new(), BTreeMap::new(), 0, Amount::ZERO);
    for (task, (_, alloc)) in &env.out.running {
        let request = &graph.groups[task.group.index()].variants[alloc.variant];
        let sum = |shares: &[(u32, Amount)]| Amount(shares.iter().map(|s| s.1.0).sum());
        assert_eq!((sum(&alloc.cpus), sum(&alloc.gpus), alloc.memory), (request.cpus, request.gpus, request.memory));
        for &(id, share) in &alloc.cpus {
            *cpus.entry(id).or_insert(0) += share.0;
        }
        for &(id, share) in &alloc.gpus {
            *gpus.entry(id).or_insert(0) += share.0;
        }
        memory += alloc.memory;
        lic.0 += alloc.custom.iter().map(|c| c.1.0).sum::<u64>();
    }
    assert!(cpus.iter().all(|(&id, &used)| id < 4 && used <= Amount::SCALE), "cpus {cpus:?}");
    assert!(gpus.iter().all(|(&id, &used)| id < 2 && used <= Amount::SCALE), "gpus {gpus:?}");
    assert!(memory <= 8 * GIB && lic <= Amount::whole(3));
}

fn check_final_states(env: &TestEnv, graph: &Graph) {
    let mut last: HashMap<TaskId, TaskState> = HashMap::new();
    for event in &env.out.events {
        if let super::env::Event::State(task, state) = event {
            let before = last.insert(*task, *state);
            assert!(!matches!(before, Some(TaskState::Succeeded | TaskState::Failed | TaskState::Cancelled(_))));
        }
    }
    let ended = last.values().filter(|s| !matches!(s, TaskState::Retrying { .. })).count() as u64;
    assert_eq!(ended, graph.instance_count());
    let c = env.counts();
    assert_eq!((c.waiting, c.ready, c.running), (0, 0, 0));
    assert_eq!(c.succeeded + c.failed + c.cancelled, graph.instance_count());
}
