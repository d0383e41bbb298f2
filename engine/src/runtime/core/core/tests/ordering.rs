//! Which ready task goes first: priority, then b-level, then group id; and
//! how work spreads over workers.

use super::env::{GroupSpec, TestEnv, edge_all, t};
use crate::runtime::core::WorkerId;

#[test]
fn higher_priority_runs_first() {
    let mut env = TestEnv::new(
        vec![GroupSpec::new("low", 2), GroupSpec::new("high", 2).priority(5), GroupSpec::new("neg", 2).priority(-1)],
        vec![],
    );
    env.worker(1, 0);
    let order = env.drain(|_| crate::runtime::core::TaskResult::Succeeded);
    assert_eq!(order, [t(1, 0), t(1, 1), t(0, 0), t(0, 1), t(2, 0), t(2, 1)]);
}

#[test]
fn longer_paths_to_the_end_run_first_at_equal_priority() {
    // 0 alone; 1 → 2 → 3: group 1 has b-level 3, group 0 has 1.
    let mut env = TestEnv::new(
        vec![
            GroupSpec::new("alone", 2),
            GroupSpec::new("head", 2),
            GroupSpec::new("mid", 1),
            GroupSpec::new("tail", 1),
        ],
        vec![edge_all(1, 2), edge_all(2, 3)],
    );
    env.worker(1, 0);
    let order = env.drain(|_| crate::runtime::core::TaskResult::Succeeded);
    assert_eq!(order, [t(1, 0), t(1, 1), t(2, 0), t(0, 0), t(0, 1), t(3, 0)], "ties in b-level go by id");
}

#[test]
fn priority_beats_b_level() {
    let mut env = TestEnv::new(
        vec![GroupSpec::new("head", 1), GroupSpec::new("tail", 1), GroupSpec::new("urgent", 1).priority(1)],
        vec![edge_all(0, 1)],
    );
    env.worker(1, 0);
    assert_eq!(env.schedule(), [t(2, 0)]);
}

#[test]
fn a_group_that_does_not_fit_lets_smaller_work_through() {
    let mut env =
        TestEnv::new(vec![GroupSpec::new("big", 1).cpus(4.0).priority(1), GroupSpec::new("small", 3)], vec![]);
    env.worker(3, 0);
    env.worker(4, 0);
    let started = env.schedule();
    assert_eq!(started, [t(1, 0), t(0, 0), t(1, 1), t(1, 2)]);
    assert_eq!(env.out.running[&t(0, 0)].0, WorkerId(1));
}

#[test]
fn work_spreads_over_workers_round_robin() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 4)], vec![]);
    let (a, b) = (env.worker(2, 0), env.worker(2, 0));
    env.schedule();
    let on = |w| env.out.running.values().filter(|(worker, _)| *worker == w).count();
    assert_eq!((on(a), on(b)), (2, 2));
    assert_eq!(env.out.running[&t(0, 0)].0, a);
    assert_eq!(env.out.running[&t(0, 1)].0, b);
}

#[test]
fn a_full_worker_gets_work_again_when_resources_are_freed() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 3)], vec![]);
    env.worker(1, 0);
    assert_eq!(env.schedule(), [t(0, 0)]);
    assert_eq!(env.schedule(), []);
    env.finish(t(0, 0));
    assert_eq!(env.schedule(), [t(0, 1)]);
}
