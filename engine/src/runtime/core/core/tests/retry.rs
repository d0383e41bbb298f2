//! What the core says of an ended attempt: whether it runs again, and if
//! not, why ([`crate::runtime::core::Retry`]).

use super::env::{GroupSpec, TestEnv, res, t};
use crate::runtime::core::{Retry, TaskResult};

#[test]
fn a_success_is_not_retried() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 1).retries(2)], vec![]);
    env.worker(1, 0);
    env.schedule();
    assert_eq!(env.retry(t(0, 0), TaskResult::Succeeded), Retry::NotFailed);
}

#[test]
fn a_failure_is_retried_until_its_attempts_are_used_up() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 1).retries(1)], vec![]);
    env.worker(1, 0);
    env.schedule();
    assert_eq!(env.retry(t(0, 0), TaskResult::Failed), Retry::Retrying { attempt: 1 });
    env.schedule();
    assert_eq!(env.retry(t(0, 0), TaskResult::Failed), Retry::OutOfAttempts);
}

#[test]
fn a_failure_while_the_run_stops_is_not_retried() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 1).retries(3)], vec![]);
    env.worker(1, 0);
    env.schedule();
    env.stop();
    assert_eq!(env.retry(t(0, 0), TaskResult::Failed), Retry::Stopped);
}

#[test]
fn a_next_attempt_no_worker_can_hold_is_not_made() {
    let spec = GroupSpec::new("grow", 1).retries(2).retry_variants(vec![vec![res(3.0, 0.0)]]);
    let mut env = TestEnv::new(vec![spec], vec![]);
    env.worker(2, 0);
    env.schedule();
    assert_eq!(env.retry(t(0, 0), TaskResult::Failed), Retry::TooBig { attempt: 1 });
}

#[test]
fn a_report_for_a_task_that_is_not_running_changes_nothing() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 1)], vec![]);
    env.worker(1, 0);
    env.schedule();
    assert_eq!(env.retry(t(0, 0), TaskResult::Succeeded), Retry::NotFailed);
    assert_eq!(env.retry(t(0, 0), TaskResult::Failed), Retry::NotRunning);
}
