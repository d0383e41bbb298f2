//! Edges that wait for a failure, or for their source whatever happened
//! (`on = "failure"`, `on = "always"`): released by any end of the source,
//! never cancelling or skipping what waits on them.

use super::env::{GroupSpec, TestEnv, edge_all, edge_each, on, t};
use crate::ir::{EdgeOn, GroupId};
use crate::runtime::core::out::{CancelReason, SkipReason};
use crate::runtime::core::{StateCounts, TaskResult, TaskState};

#[test]
fn an_element_wise_failure_edge_releases_each_instance_however_its_source_ended() {
    let mut env = TestEnv::new(
        vec![GroupSpec::new("dock", 3), GroupSpec::new("rescue", 3)],
        vec![on(EdgeOn::Failure, edge_each(0, 1))],
    );
    env.worker(3, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1), t(0, 2)]);
    env.finish(t(0, 0));
    assert_eq!(env.fail(t(0, 1)), [(t(0, 1), TaskState::Failed)], "rescue[1] is not cancelled");
    env.report(t(0, 2), TaskResult::Skipped);
    assert_eq!(env.schedule(), [t(1, 0), t(1, 1), t(1, 2)]);
    env.drain(|_| TaskResult::Succeeded);
    assert!(env.core.is_finished());
    assert!(env.core.did_not_succeed(t(0, 1)) && !env.core.did_not_succeed(t(0, 0)));
}

#[test]
fn a_whole_task_edge_on_always_waits_for_every_instance_to_end() {
    let mut env = TestEnv::new(
        vec![GroupSpec::new("dock", 2), GroupSpec::new("report", 1)],
        vec![on(EdgeOn::Always, edge_all(0, 1))],
    );
    env.worker(2, 0);
    env.schedule();
    env.fail(t(0, 0));
    assert_eq!(env.schedule(), [], "dock[1] still runs");
    env.finish(t(0, 1));
    assert_eq!(env.schedule(), [t(1, 0)]);
    env.finish(t(1, 0));
    assert_eq!(env.counts(), StateCounts { succeeded: 2, failed: 1, ..StateCounts::default() });
}

#[test]
fn a_failure_cancels_what_waits_for_success_and_releases_the_handler_once_its_task_ended() {
    // prep → dock (element-wise, success) → alert (whole, on failure); dock → merge (whole, success).
    let groups = vec![
        GroupSpec::new("prep", 2),
        GroupSpec::new("dock", 2),
        GroupSpec::new("alert", 1),
        GroupSpec::new("merge", 1),
    ];
    let edges = vec![edge_each(0, 1), on(EdgeOn::Failure, edge_all(1, 2)), edge_all(1, 3)];
    let mut env = TestEnv::new(groups, edges);
    env.worker(2, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
    let states = env.fail(t(0, 0));
    let cancelled = TaskState::Cancelled(CancelReason::DependencyFailed(t(0, 0)));
    assert!(states.contains(&(t(1, 0), cancelled)), "{states:?}");
    assert!(states.contains(&(t(3, 0), cancelled)), "merge waits for all of dock to succeed: {states:?}");
    assert!(!states.iter().any(|&(task, _)| task == t(2, 0)), "alert waits: {states:?}");
    env.finish(t(0, 1));
    assert_eq!(env.schedule(), [t(1, 1)]);
    env.finish(t(1, 1));
    assert_eq!(env.schedule(), [t(2, 0)], "dock ended: alert runs");
    env.finish(t(2, 0));
    assert!(env.core.is_finished());
    assert!(env.core.did_not_succeed(t(1, 0)), "a cancelled instance did not succeed");
}

#[test]
fn what_waits_for_a_handler_follows_it_as_usual() {
    // dock → alert (element-wise, on failure) → page (element-wise, success).
    let mut env = TestEnv::new(
        vec![GroupSpec::new("dock", 1), GroupSpec::new("alert", 1), GroupSpec::new("page", 1)],
        vec![on(EdgeOn::Failure, edge_each(0, 1)), edge_each(1, 2)],
    );
    env.worker(1, 0);
    env.schedule();
    env.finish(t(0, 0));
    assert_eq!(env.schedule(), [t(1, 0)]);
    let skipped = env.report(t(1, 0), TaskResult::Skipped);
    assert_eq!(
        skipped,
        [
            (t(1, 0), TaskState::Skipped(SkipReason::Condition)),
            (t(2, 0), TaskState::Skipped(SkipReason::Upstream(t(1, 0))))
        ]
    );
    assert!(env.core.is_finished());
}

#[test]
fn a_stop_cancels_the_handlers_too() {
    let mut env = TestEnv::new(
        vec![GroupSpec::new("dock", 2), GroupSpec::new("alert", 1)],
        vec![on(EdgeOn::Failure, edge_all(0, 1))],
    );
    env.worker(1, 0);
    assert_eq!(env.schedule(), [t(0, 0)]);
    env.fail(t(0, 0));
    let (_, rest) = env.stop();
    assert!(rest.contains(&(GroupId(1), 1)), "{rest:?}");
    assert!(env.core.is_finished());
}
