//! Skipped instances: they count as done for what waits on them, and skip
//! what waits on them element-wise, or as a whole when nothing ran.

use super::env::{GroupSpec, TestEnv, edge_all, edge_each, edge_explicit, t};
use crate::ir::TaskId;
use crate::runtime::core::out::SkipReason;
use crate::runtime::core::{StateCounts, TaskResult, TaskState};

const fn skipped_by(task: TaskId) -> TaskState {
    TaskState::Skipped(SkipReason::Upstream(task))
}

const SKIPPED: TaskState = TaskState::Skipped(SkipReason::Condition);

fn skip(env: &mut TestEnv, task: TaskId) -> Vec<(TaskId, TaskState)> {
    let mut events = env.report(task, TaskResult::Skipped);
    events.sort_by_key(|&(task, _)| task);
    events
}

#[test]
fn an_element_wise_dependent_of_a_skipped_instance_is_skipped_and_the_rest_run() {
    // a → b element-wise → c element-wise.
    let mut env = TestEnv::new(
        vec![GroupSpec::new("a", 2), GroupSpec::new("b", 2), GroupSpec::new("c", 2)],
        vec![edge_each(0, 1), edge_each(1, 2)],
    );
    env.worker(2, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
    assert_eq!(
        skip(&mut env, t(0, 0)),
        [(t(0, 0), SKIPPED), (t(1, 0), skipped_by(t(0, 0))), (t(2, 0), skipped_by(t(1, 0)))]
    );
    env.finish(t(0, 1));
    let order = env.drain(|_| TaskResult::Succeeded);
    assert_eq!(order, [t(1, 1), t(2, 1)]);
    assert!(env.core.is_finished());
    assert_eq!(env.counts(), StateCounts { succeeded: 3, skipped: 3, ..StateCounts::default() });
}

#[test]
fn a_fan_in_waits_for_the_instances_that_run_and_ignores_skipped_ones() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 3), GroupSpec::new("all", 1)], vec![edge_all(0, 1)]);
    env.worker(3, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1), t(0, 2)]);
    assert_eq!(skip(&mut env, t(0, 1)), [(t(0, 1), SKIPPED)]);
    env.finish(t(0, 0));
    assert_eq!(env.schedule(), [], "a[2] is still running");
    env.finish(t(0, 2));
    assert_eq!(env.schedule(), [t(1, 0)]);
    env.finish(t(1, 0));
    assert!(env.core.is_finished());
    assert_eq!(env.counts(), StateCounts { succeeded: 3, skipped: 1, ..StateCounts::default() });
}

#[test]
fn a_fan_in_released_by_its_last_skip_runs() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 2), GroupSpec::new("all", 1)], vec![edge_all(0, 1)]);
    env.worker(2, 0);
    env.schedule();
    env.finish(t(0, 0));
    assert_eq!(skip(&mut env, t(0, 1)), [(t(0, 1), SKIPPED)]);
    assert_eq!(env.schedule(), [t(1, 0)]);
}

#[test]
fn a_fan_in_over_instances_all_skipped_is_skipped_and_so_is_what_follows() {
    // a → all (whole) → each (element-wise), and `other` waits for `all` too.
    let groups =
        vec![GroupSpec::new("a", 2), GroupSpec::new("all", 2), GroupSpec::new("each", 2), GroupSpec::new("other", 1)];
    let mut env = TestEnv::new(groups, vec![edge_all(0, 1), edge_each(1, 2), edge_all(1, 3)]);
    env.worker(2, 0);
    env.schedule();
    assert_eq!(skip(&mut env, t(0, 0)), [(t(0, 0), SKIPPED)]);
    let events = skip(&mut env, t(0, 1));
    let expected = [
        (t(0, 1), SKIPPED),
        (t(1, 0), skipped_by(t(0, 1))),
        (t(1, 1), skipped_by(t(0, 1))),
        (t(2, 0), skipped_by(t(1, 0))),
        (t(2, 1), skipped_by(t(1, 1))),
        (t(3, 0), skipped_by(t(0, 1))),
    ];
    assert_eq!(events, expected);
    assert!(env.core.is_finished());
    assert_eq!(env.counts(), StateCounts { skipped: 7, ..StateCounts::default() });
}

#[test]
fn an_explicit_edge_skips_every_instance_that_names_the_skipped_one() {
    // b[0] waits for a[0] and a[1]; b[1] for a[1] only.
    let mut env =
        TestEnv::new(vec![GroupSpec::new("a", 2), GroupSpec::new("b", 2)], vec![edge_explicit(0, 1, &[&[0, 1], &[1]])]);
    env.worker(2, 0);
    env.schedule();
    assert_eq!(
        skip(&mut env, t(0, 1)),
        [(t(0, 1), SKIPPED), (t(1, 0), skipped_by(t(0, 1))), (t(1, 1), skipped_by(t(0, 1)))]
    );
    env.finish(t(0, 0));
    assert!(env.core.is_finished());
}

#[test]
fn a_skip_is_not_a_failure_and_frees_its_worker() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 2).retries(3)], vec![]);
    env.worker(1, 0);
    assert_eq!(env.schedule(), [t(0, 0)]);
    assert_eq!(env.retry(t(0, 0), TaskResult::Skipped), crate::runtime::core::Retry::NotFailed);
    assert_eq!(env.schedule(), [t(0, 1)]);
    assert_eq!(env.counts(), StateCounts { running: 1, skipped: 1, ..StateCounts::default() });
}

#[test]
fn a_fan_in_over_two_tasks_runs_when_one_of_them_ran_issue_26() {
    // `report` waits for the whole of `shortlist` and of `refine`.
    let groups = vec![GroupSpec::new("shortlist", 1), GroupSpec::new("refine", 2), GroupSpec::new("report", 1)];
    for shortlist_first in [false, true] {
        let mut env = TestEnv::new(groups.clone(), vec![edge_all(0, 2), edge_all(1, 2)]);
        env.worker(3, 0);
        assert_eq!(env.schedule(), [t(0, 0), t(1, 0), t(1, 1)]);
        if shortlist_first {
            env.finish(t(0, 0));
        }
        assert_eq!(skip(&mut env, t(1, 0)), [(t(1, 0), SKIPPED)]);
        assert_eq!(skip(&mut env, t(1, 1)), [(t(1, 1), SKIPPED)], "shortlist ran or runs: report waits");
        if !shortlist_first {
            assert_eq!(env.schedule(), [], "shortlist is still running");
            env.finish(t(0, 0));
        }
        assert_eq!(env.schedule(), [t(2, 0)]);
        env.finish(t(2, 0));
        assert!(env.core.is_finished());
        assert_eq!(env.counts(), StateCounts { succeeded: 2, skipped: 2, ..StateCounts::default() });
    }
}

#[test]
fn a_fan_in_over_two_tasks_nothing_of_which_ran_is_skipped_issue_26() {
    let groups = vec![GroupSpec::new("shortlist", 1), GroupSpec::new("refine", 2), GroupSpec::new("report", 1)];
    let mut env = TestEnv::new(groups, vec![edge_all(0, 2), edge_all(1, 2)]);
    env.worker(3, 0);
    env.schedule();
    assert_eq!(skip(&mut env, t(1, 0)), [(t(1, 0), SKIPPED)]);
    assert_eq!(skip(&mut env, t(1, 1)), [(t(1, 1), SKIPPED)]);
    assert_eq!(skip(&mut env, t(0, 0)), [(t(0, 0), SKIPPED), (t(2, 0), skipped_by(t(0, 0)))]);
    assert!(env.core.is_finished());
    assert_eq!(env.counts(), StateCounts { skipped: 4, ..StateCounts::default() });
}

#[test]
fn an_instance_that_waits_for_a_single_instance_besides_a_skipped_task_follows_it_issue_26() {
    // c waits for the whole of `a`, and c[0] for b[0] (c[1] for no instance of b).
    let groups = vec![GroupSpec::new("a", 2), GroupSpec::new("b", 1), GroupSpec::new("c", 2)];
    let mut env = TestEnv::new(groups, vec![edge_all(0, 2), edge_explicit(1, 2, &[&[0], &[]])]);
    env.worker(3, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1), t(1, 0)]);
    assert_eq!(skip(&mut env, t(0, 0)), [(t(0, 0), SKIPPED)]);
    assert_eq!(skip(&mut env, t(0, 1)), [(t(0, 1), SKIPPED), (t(2, 1), skipped_by(t(0, 1)))]);
    env.finish(t(1, 0));
    assert_eq!(env.schedule(), [t(2, 0)], "b[0] ran: c[0] waits for an instance that ran");
    env.finish(t(2, 0));
    assert!(env.core.is_finished());
}
