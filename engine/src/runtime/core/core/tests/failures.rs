//! Retries, failures that cancel their dependents, `max_fails`, stopping,
//! and lost workers.

use super::env::{GroupSpec, TestEnv, edge_all, edge_each, edge_explicit, t};
use crate::ir::{GroupId, MaxFails};
use crate::runtime::core::{CancelReason, CoreOptions, StateCounts, TaskState, WorkerId};

const fn cancelled_by(task: crate::ir::TaskId) -> TaskState {
    TaskState::Cancelled(CancelReason::DependencyFailed(task))
}

#[test]
fn failed_attempts_are_retried_with_the_next_attempt_number() {
    let mut env = TestEnv::new(vec![GroupSpec::new("flaky", 1).retries(2)], vec![]);
    env.worker(1, 0);
    for attempt in 0..2 {
        assert_eq!(env.schedule(), [t(0, 0)]);
        assert_eq!(env.attempt(t(0, 0)), Some(attempt));
        assert_eq!(env.fail(t(0, 0)), [(t(0, 0), TaskState::Retrying { attempt: attempt + 1 })]);
    }
    env.schedule();
    assert_eq!(env.attempt(t(0, 0)), Some(2));
    assert_eq!(env.fail(t(0, 0)), [(t(0, 0), TaskState::Failed)]);
    assert!(env.core.is_finished());
    assert!(env.core.history.is_empty(), "forgotten once final");
    assert_eq!(env.counts(), StateCounts { failed: 1, ..StateCounts::default() });
}

#[test]
fn a_retry_asks_for_its_attempt_s_resources() {
    use super::env::res;
    let spec = GroupSpec::new("grow", 3).retries(2).retry_variants(vec![vec![res(2.0, 0.0)], vec![res(3.0, 0.0)]]);
    let mut env = TestEnv::new(vec![spec], vec![]);
    env.worker(2, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
    env.fail(t(0, 0));
    assert_eq!(env.schedule(), [] as [crate::ir::TaskId; 0], "attempt 1 needs both CPUs, one is busy");
    env.finish(t(0, 1));
    assert_eq!(env.schedule(), [t(0, 0)], "the retry goes first, with two CPUs");
    assert_eq!(env.schedule(), [] as [crate::ir::TaskId; 0], "nothing is left for t(0, 2)");
    // Attempt 2 asks for three CPUs: no worker has them, so it fails now.
    assert_eq!(env.fail(t(0, 0)), [(t(0, 0), TaskState::Failed)]);
    assert_eq!(env.schedule(), [t(0, 2)]);
}

#[test]
fn a_retry_goes_before_fresh_instances() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 3).retries(1)], vec![]);
    env.worker(1, 0);
    env.schedule();
    env.fail(t(0, 0));
    assert_eq!(env.schedule(), [t(0, 0)]);
    assert_eq!(env.finish(t(0, 0)), [(t(0, 0), TaskState::Succeeded)]);
}

#[test]
fn a_failure_cancels_its_dependents_transitively() {
    // a → b element-wise, b → c all, c → d element-wise; e is independent.
    let mut env = TestEnv::new(
        vec![
            GroupSpec::new("a", 2),
            GroupSpec::new("b", 2),
            GroupSpec::new("c", 2),
            GroupSpec::new("d", 2),
            GroupSpec::new("e", 1),
        ],
        vec![edge_each(0, 1), edge_all(1, 2), edge_each(2, 3)],
    );
    env.worker(1, 0);
    assert_eq!(env.schedule(), [t(0, 0)]);
    let events = env.fail(t(0, 0));
    let root = t(0, 0);
    assert_eq!(events[0], (root, TaskState::Failed));
    let mut cancelled: Vec<_> = events[1..].iter().map(|&(task, state)| (task, state)).collect();
    cancelled.sort_by_key(|&(task, _)| task);
    let expected = [t(1, 0), t(2, 0), t(2, 1), t(3, 0), t(3, 1)].map(|task| (task, cancelled_by(root)));
    assert_eq!(cancelled, expected);
    // a[1], then b[1] and e still run.
    let order = env.drain(|_| crate::runtime::core::TaskResult::Succeeded);
    assert_eq!(order, [t(0, 1), t(1, 1), t(4, 0)]);
    assert_eq!(env.counts(), StateCounts { succeeded: 3, failed: 1, cancelled: 5, ..StateCounts::default() });
}

#[test]
fn a_failure_in_a_self_chain_cancels_the_rest_of_the_chain() {
    let rows: &[&[u64]] = &[&[], &[0], &[1]];
    let mut env = TestEnv::new(vec![GroupSpec::new("chain", 3)], vec![edge_explicit(0, 0, rows)]);
    env.worker(1, 0);
    env.schedule();
    let events = env.fail(t(0, 0));
    assert_eq!(
        events,
        [(t(0, 0), TaskState::Failed), (t(0, 1), cancelled_by(t(0, 0))), (t(0, 2), cancelled_by(t(0, 0)))]
    );
    assert!(env.core.is_finished());
}

#[test]
fn max_fails_cancels_everything_not_running() {
    let options = CoreOptions { max_fails: Some(MaxFails::Count(2)) };
    let mut env = TestEnv::with_options(vec![GroupSpec::new("g", 6)], vec![], options);
    env.worker(3, 0);
    env.schedule();
    assert_eq!(env.fail(t(0, 0)), [(t(0, 0), TaskState::Failed)]);
    assert_eq!(env.schedule(), [t(0, 3)]);
    let before = env.out.events.len();
    let events = env.fail(t(0, 1));
    assert_eq!(events, [(t(0, 1), TaskState::Failed)]);
    // Issue 29: the two instances that never started are cancelled together.
    assert_eq!(env.rest_since(before), [(GroupId(0), 2)]);
    assert_eq!(env.core.stopped(), Some(CancelReason::MaxFails));
    assert_eq!(env.schedule(), [], "nothing starts after a stop");
    assert_eq!(env.finish(t(0, 2)), [(t(0, 2), TaskState::Succeeded)], "running tasks finish");
    assert_eq!(env.fail(t(0, 3)), [(t(0, 3), TaskState::Failed)]);
    assert!(env.core.is_finished());
    assert_eq!(env.counts(), StateCounts { succeeded: 1, failed: 3, cancelled: 2, ..StateCounts::default() });
}

#[test]
fn stop_cancels_pending_tasks_and_running_ones_are_not_retried() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 3).retries(5), GroupSpec::new("h", 1)], vec![edge_all(0, 1)]);
    env.worker(1, 0);
    env.schedule();
    // Issue 29: the instances that never started are cancelled per group.
    assert_eq!(env.stop(), (vec![], vec![(GroupId(0), 2), (GroupId(1), 1)]));
    assert!(!env.core.is_finished());
    assert_eq!(env.fail(t(0, 0)), [(t(0, 0), TaskState::Failed)], "killed: no retry");
    assert!(env.core.is_finished());
    assert_eq!(env.stop(), (vec![], vec![]), "stopping twice changes nothing");
    assert_eq!(env.counts(), StateCounts { failed: 1, cancelled: 3, ..StateCounts::default() });
}

#[test]
fn a_lost_worker_reschedules_its_tasks_as_the_next_attempt() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 2).retries(0)], vec![]);
    let first = env.worker(2, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
    let events = env.lose(first);
    let retrying = TaskState::Retrying { attempt: 1 };
    assert_eq!(events, [(t(0, 0), retrying), (t(0, 1), retrying)]);
    assert_eq!(env.counts().ready, 2);
    let second = env.worker(1, 0);
    assert_eq!(env.schedule(), [t(0, 0)]);
    assert_eq!((env.attempt(t(0, 0)), env.out.running[&t(0, 0)].0), (Some(1), second));
    // A crash does not use up retries: a failure now fails for good only because retries is 0.
    assert_eq!(env.fail(t(0, 0)), [(t(0, 0), TaskState::Failed)]);
    env.lose(WorkerId(99));
}

#[test]
fn the_tasks_of_a_worker_lost_without_a_word_wait_for_it_to_have_stopped_them() {
    // Issue 26: no two attempts at once.
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 1)], vec![]);
    let first = env.worker(1, 0);
    env.schedule();
    let until_us = env.now + 5_000_000;
    env.out.running.clear();
    env.core.remove_worker(first, Some(until_us), &mut env.out);
    assert_eq!(env.states_since(0).last(), Some(&(t(0, 0), TaskState::Delayed { attempt: 1, until_us })));
    env.worker(1, 0);
    assert_eq!(env.schedule(), [], "not before the fence");
    env.now = until_us;
    assert_eq!(env.schedule(), [t(0, 0)]);
}

#[test]
fn the_crash_limit_fails_a_task() {
    let mut env =
        TestEnv::new(vec![GroupSpec::new("g", 1).crash_limit(2), GroupSpec::new("after", 1)], vec![edge_all(0, 1)]);
    let w = env.worker(1, 0);
    env.schedule();
    assert_eq!(env.lose(w), [(t(0, 0), TaskState::Retrying { attempt: 1 })]);
    let w = env.worker(1, 0);
    env.schedule();
    assert_eq!(env.lose(w), [(t(0, 0), TaskState::Failed), (t(1, 0), cancelled_by(t(0, 0)))]);
    assert_eq!(env.counts().failed, 1);
}
