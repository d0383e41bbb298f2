//! Failure policies: retries that wait (`retry_delay`) without holding a
//! worker, failures `retry_on` does not list, a task's own `max_fails`,
//! `continue_on_failure`, and the run's `max_fails` as a share.

use super::env::{GroupSpec, TestEnv, edge_all, edge_each, t};
use crate::ir::MaxFails;
use crate::runtime::core::{CancelReason, CoreOptions, Retry, StateCounts, TaskResult, TaskState};

const SECOND: u64 = 1_000_000;

#[test]
fn a_delayed_retry_waits_without_holding_its_worker() {
    let spec = GroupSpec::new("flaky", 1).retries(2).retry_delay(30 * SECOND, 2.0);
    let mut env = TestEnv::new(vec![spec, GroupSpec::new("other", 1)], vec![]);
    env.worker(1, 0);
    assert_eq!(env.schedule(), [t(0, 0)]);
    let until = env.now + 30 * SECOND;
    assert_eq!(env.retry(t(0, 0), TaskResult::Failed), Retry::Delayed { attempt: 1, until_us: until });
    assert_eq!(env.core.next_wake_us(), Some(until));
    // The slot is free: the other task runs during the wait.
    assert_eq!(env.schedule(), [t(1, 0)]);
    env.finish(t(1, 0));
    assert_eq!(env.counts(), StateCounts { waiting: 1, succeeded: 1, ..StateCounts::default() });
    env.now = until - 1;
    assert_eq!(env.schedule(), [], "not yet due");
    env.now = until;
    assert_eq!(env.schedule(), [t(0, 0)]);
    assert_eq!(env.attempt(t(0, 0)), Some(1));
    // The second wait is twice the first, counted from the second failure.
    env.now += 5 * SECOND;
    let second = env.now + 60 * SECOND;
    assert_eq!(env.fail(t(0, 0)), [(t(0, 0), TaskState::Delayed { attempt: 2, until_us: second })]);
}

#[test]
fn a_run_stopped_during_a_wait_cancels_the_waiting_instance() {
    let spec = GroupSpec::new("flaky", 1).retries(1).retry_delay(SECOND, 1.0);
    let mut env = TestEnv::new(vec![spec], vec![]);
    env.worker(1, 0);
    env.schedule();
    env.fail(t(0, 0));
    // It ran before: cancelled on its own, not with the instances that never started.
    assert_eq!(env.stop(), (vec![(t(0, 0), TaskState::Cancelled(CancelReason::Stopped))], vec![]));
    assert!(env.core.is_finished());
    env.now += 2 * SECOND;
    assert_eq!(env.schedule(), [], "the stale entry wakes nothing");
}

#[test]
fn a_resumed_instance_keeps_the_earlier_schedule() {
    let spec = GroupSpec::new("flaky", 2).retries(1).retry_delay(SECOND, 1.0);
    let mut env = TestEnv::new(vec![spec], vec![]);
    let until = env.now + 10 * SECOND;
    assert!(env.core.wait_until(t(0, 1), until));
    assert!(!env.core.wait_until(t(0, 1), until), "no longer pending");
    env.worker(2, 0);
    assert_eq!(env.schedule(), [t(0, 0)]);
    env.now = until;
    assert_eq!(env.schedule(), [t(0, 1)]);
    assert_eq!(env.attempt(t(0, 1)), Some(0), "this run's first attempt");
}

#[test]
fn a_waiting_instance_with_dependencies_left_waits_for_both() {
    let a = GroupSpec::new("a", 1);
    let b = GroupSpec::new("b", 1).retries(1).retry_delay(SECOND, 1.0);
    let mut env = TestEnv::new(vec![a, b], vec![edge_each(0, 1)]);
    assert!(env.core.wait_until(t(1, 0), env.now + SECOND));
    env.worker(1, 0);
    assert_eq!(env.schedule(), [t(0, 0)]);
    env.finish(t(0, 0));
    assert_eq!(env.schedule(), [], "its dependency is done, its time is not");
    env.now += SECOND;
    assert_eq!(env.schedule(), [t(1, 0)]);
}

#[test]
fn a_failure_retry_on_does_not_list_fails_at_once() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 1).retries(3)], vec![]);
    env.worker(1, 0);
    env.schedule();
    assert_eq!(env.retry(t(0, 0), TaskResult::NotRetryable), Retry::NotRetryable);
    assert_eq!(env.counts().failed, 1);
}

#[test]
fn a_task_stops_at_its_own_max_fails() {
    let spec = GroupSpec::new("many", 5).max_fails(MaxFails::Count(2));
    let mut env = TestEnv::new(vec![spec, GroupSpec::new("after", 1)], vec![edge_all(0, 1)]);
    env.worker(2, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
    assert_eq!(env.fail(t(0, 0))[0], (t(0, 0), TaskState::Failed));
    let events = env.fail(t(0, 1));
    let own = TaskState::Cancelled(CancelReason::TaskMaxFails);
    assert_eq!(events[..4], [(t(0, 1), TaskState::Failed), (t(0, 2), own), (t(0, 3), own), (t(0, 4), own)]);
    assert!(env.core.reached_max_fails(t(0, 0).group));
    assert_eq!(env.core.stopped(), None, "the rest of the run goes on");
}

#[test]
fn an_ignored_failure_releases_its_dependents() {
    let a = GroupSpec::new("a", 2).continue_on_failure();
    let options = CoreOptions { max_fails: Some(MaxFails::Count(1)) };
    let mut env = TestEnv::with_options(vec![a, GroupSpec::new("b", 2)], vec![edge_each(0, 1)], options);
    env.worker(1, 0);
    assert_eq!(env.schedule(), [t(0, 0)]);
    assert_eq!(env.fail(t(0, 0)), [(t(0, 0), TaskState::Ignored)]);
    assert_eq!(env.core.stopped(), None, "ignored failures do not count towards max_fails");
    let order = env.drain(|_| TaskResult::Succeeded);
    assert!(order.contains(&t(1, 0)), "its dependent ran: {order:?}");
    assert_eq!(env.counts().failed, 0);
}

#[test]
fn the_run_stops_at_a_share_of_its_instances() {
    let options = CoreOptions { max_fails: Some(MaxFails::Fraction(0.2)) };
    let mut env = TestEnv::with_options(vec![GroupSpec::new("g", 10)], vec![], options);
    env.worker(1, 0);
    env.schedule();
    env.fail(t(0, 0));
    assert_eq!(env.core.stopped(), None, "1 of 10 is below 20%");
    env.schedule();
    env.fail(t(0, 1));
    assert_eq!(env.core.stopped(), Some(CancelReason::MaxFails));
}
