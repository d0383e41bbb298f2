//! Groups no worker can run, with their reasons, and multi-node tasks.

use super::env::{GroupSpec, TestEnv, edge_each, res, t};
use crate::ir::Amount;
use crate::resources::WorkerShape;
use crate::runtime::core::{CancelReason, TaskResult, TaskState, WorkerId};

fn reasons(env: &TestEnv) -> Vec<(u32, String)> {
    env.core.unschedulable().into_iter().map(|(g, r)| (g.0, r.to_string())).collect()
}

#[test]
fn unschedulable_groups_say_what_is_missing() {
    let mut env = TestEnv::new(
        vec![
            GroupSpec::new("fits", 1),
            GroupSpec::new("gpu", 1).gpus(2.0),
            GroupSpec::new("cpus", 1).cpus(8.0),
            GroupSpec::new("half", 1).cpus(4.5),
            GroupSpec::new("memory", 1).memory(3 << 30),
            GroupSpec::new("fpga", 1).custom("fpga", 2.0),
            GroupSpec::new("both", 1).variants(vec![res(1.0, 1.0), res(16.0, 0.0)]),
            GroupSpec::new("nodes", 1).nodes(3),
        ],
        vec![],
    );
    assert!(reasons(&env).iter().all(|(_, r)| r == "there are no workers"));
    let shape = WorkerShape {
        cpus: (0..4).collect(),
        memory: 2 << 30,
        custom: [("fpga".to_owned(), Amount::whole(1))].into(),
        ..WorkerShape::default()
    };
    env.core.add_worker(shape, None);
    env.worker(2, 0);
    let expected = [
        (1, "needs 2 gpus, the largest worker has 0"),
        (2, "needs 8 cpus, the largest worker has 4"),
        (3, "needs 4.5 cpus, the largest worker has 4"),
        (4, "needs 3 GiB of memory, the largest worker has 2 GiB"),
        (5, "needs 2 `fpga`, the largest worker has 1"),
        (
            6,
            "no variant fits: variant 1 needs 1 gpu, the largest worker has 0; \
             variant 2 needs 16 cpus, the largest worker has 4",
        ),
        (7, "needs 3 workers, there are 2"),
    ];
    assert_eq!(reasons(&env), expected.map(|(g, r)| (g, r.to_owned())));
}

#[test]
fn resources_that_only_fit_apart_are_reported() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 1).cpus(4.0).gpus(1.0)], vec![]);
    env.worker(4, 0);
    env.worker(1, 1);
    assert_eq!(reasons(&env), [(0, "needs more than any one worker has of its resources together".to_owned())]);
}

#[test]
fn cancelling_unschedulable_groups_cancels_their_dependents() {
    let mut env = TestEnv::new(
        vec![GroupSpec::new("gpu", 2).gpus(1.0), GroupSpec::new("after", 2), GroupSpec::new("free", 1)],
        vec![edge_each(0, 1)],
    );
    env.worker(2, 0);
    let before = env.out.events.len();
    let found = env.core.cancel_unschedulable(&mut env.out);
    assert_eq!(found.len(), 1);
    let unschedulable = TaskState::Cancelled(CancelReason::Unschedulable);
    let dependency = |i| TaskState::Cancelled(CancelReason::DependencyCancelled(t(0, i)));
    assert_eq!(
        env.states_since(before),
        [(t(0, 0), unschedulable), (t(0, 1), unschedulable), (t(1, 0), dependency(0)), (t(1, 1), dependency(1))]
    );
    assert!(env.core.unschedulable().is_empty());
    assert_eq!(env.drain(|_| TaskResult::Succeeded), [t(2, 0)]);
}

#[test]
fn multi_node_tasks_hold_whole_idle_workers() {
    let mut env = TestEnv::new(vec![GroupSpec::new("mpi", 2).nodes(2), GroupSpec::new("small", 2)], vec![]);
    let workers: Vec<WorkerId> = (0..3).map(|_| env.worker(2, 0)).collect();
    assert!(env.core.unschedulable().is_empty());
    let started = env.schedule();
    assert_eq!(started, [t(0, 0), t(1, 0), t(1, 1)]);
    let alloc = env.alloc(t(0, 0)).clone();
    assert_eq!(alloc.nodes, [workers[0], workers[1]]);
    assert_eq!(alloc.cpus.len(), 2, "all of the first worker");
    assert!(env.out.running.iter().filter(|(t, _)| t.group.0 == 1).all(|(_, (w, _))| *w == workers[2]));
    env.finish(t(1, 0));
    assert_eq!(env.schedule(), [], "worker 2 is not idle yet");
    env.finish(t(1, 1));
    assert_eq!(env.schedule(), [], "one idle worker is not enough");
    env.finish(t(0, 0));
    assert_eq!(env.schedule(), [t(0, 1)]);
    // Losing one node loses the task and frees the other node.
    let events = env.lose(workers[1]);
    assert_eq!(events, [(t(0, 1), TaskState::Retrying { attempt: 1 })]);
    assert!(env.core.unschedulable().is_empty());
    assert_eq!(env.schedule(), [t(0, 1)]);
    assert_eq!(env.alloc(t(0, 1)).nodes, [workers[0], workers[2]]);
    assert_eq!(env.attempt(t(0, 1)), Some(1));
}

#[test]
fn the_backlog_counts_running_instances_on_the_workers_asked_about() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 5)], vec![]);
    let queue = env.worker(1, 0);
    let other = env.worker(2, 0);
    assert_eq!(env.schedule().len(), 3);
    let counts =
        |on: &dyn Fn(WorkerId) -> bool| env.core.backlog(on).iter().map(|b| (b.ready, b.running)).collect::<Vec<_>>();
    assert_eq!(counts(&|_| true), [(2, 3)]);
    assert_eq!(counts(&|w| w == queue), [(2, 1)], "the two on the other worker need nothing from a queue");
    assert_eq!(counts(&|w| w == other), [(2, 2)]);
}
