//! Tasks a worker carried over from a killed run: held, then adopted as
//! running on that worker, or run afresh once the hold is over.

use super::env::{GroupSpec, TestEnv, edge_each, t};
use crate::runtime::core::{StateCounts, TaskResult, TaskState, WorkerId};

const SECOND: u64 = 1_000_000;
/// A carried task that names no CPU or GPU ids.
const NONE: (&[u32], &[u32]) = (&[], &[]);

#[test]
fn an_adopted_instance_holds_the_cpu_ids_it_runs_on() {
    let mut env = TestEnv::new(vec![GroupSpec::new("pair", 3).cpus(2.0)], vec![]);
    assert!(env.core.wait_until(t(0, 0), env.now + 60 * SECOND));
    assert!(env.core.wait_until(t(0, 1), env.now + 60 * SECOND));
    let worker = env.worker(6, 0);
    let adopted = env.core.adopt(t(0, 0), worker, 0, (&[2, 3], &[])).expect("adopted");
    assert!(adopted.same_ids);
    assert_eq!(adopted.alloc.cpus.iter().map(|c| c.0).collect::<Vec<_>>(), [2, 3]);
    // The next task is given the ids the adopted one does not use.
    assert_eq!(env.schedule(), [t(0, 2)]);
    assert_eq!(env.alloc(t(0, 2)).cpus.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1]);
    // Ids no longer free: it is counted by amount on what is free.
    let adopted = env.core.adopt(t(0, 1), worker, 0, (&[0, 2], &[])).expect("adopted");
    assert!(!adopted.same_ids);
    assert_eq!(adopted.alloc.cpus.iter().map(|c| c.0).collect::<Vec<_>>(), [4, 5]);
}

#[test]
fn a_held_instance_is_adopted_on_its_worker_and_ends_there() {
    let mut env = TestEnv::new(vec![GroupSpec::new("sleep", 2)], vec![]);
    let until = env.now + 60 * SECOND;
    assert!(env.core.wait_until(t(0, 1), until));
    let worker = env.worker(1, 0);
    let adopted = env.core.adopt(t(0, 1), worker, 0, NONE).expect("held, and it fits");
    assert_eq!(adopted.alloc.cpus.len(), 1, "it holds a CPU");
    assert!(!adopted.same_ids, "it named none");
    assert_eq!(env.counts(), StateCounts { ready: 1, running: 1, ..StateCounts::default() });
    assert_eq!(env.schedule(), [], "its worker is full");
    assert_eq!(env.core.adopt(t(0, 1), worker, 0, NONE), None, "adopted once");
    env.core.on_finished(t(0, 1), TaskResult::Succeeded, env.now, &mut env.out);
    assert_eq!(env.schedule(), [t(0, 0)], "the CPU is free again");
    env.finish(t(0, 0));
    env.now = until;
    assert_eq!(env.schedule(), [], "the stale hold wakes nothing");
    assert!(env.core.is_finished());
    assert_eq!(env.counts().succeeded, 2);
}

#[test]
fn only_a_held_instance_is_adopted() {
    let mut env = TestEnv::new(vec![GroupSpec::new("sleep", 2)], vec![]);
    let worker = env.worker(2, 0);
    assert_eq!(env.core.adopt(t(0, 0), worker, 0, NONE), None, "pending, not held");
    assert!(env.core.wait_until(t(0, 1), env.now + SECOND));
    assert_eq!(env.core.adopt(t(0, 1), WorkerId(7), 0, NONE), None, "no such worker");
    assert_eq!(env.core.adopt(t(0, 5), worker, 0, NONE), None, "no such instance");
    env.now += SECOND;
    assert_eq!(env.schedule(), [t(0, 1), t(0, 0)], "the hold is over: it runs afresh");
    assert_eq!(env.core.adopt(t(0, 1), worker, 0, NONE), None, "started here, not carried");
}

#[test]
fn an_instance_that_does_not_fit_its_worker_is_not_adopted() {
    let mut env = TestEnv::new(vec![GroupSpec::new("big", 1).cpus(4.0)], vec![]);
    assert!(env.core.wait_until(t(0, 0), env.now + SECOND));
    let small = env.worker(2, 0);
    assert_eq!(env.core.adopt(t(0, 0), small, 0, NONE), None);
    let counts = env.counts();
    assert_eq!((counts.running, counts.waiting), (0, 1), "still held");
}

#[test]
fn an_adopted_attempt_keeps_its_number_and_retries_after_it() {
    let mut env = TestEnv::new(vec![GroupSpec::new("flaky", 1).retries(3)], vec![]);
    assert!(env.core.wait_until(t(0, 0), env.now + SECOND));
    let worker = env.worker(1, 0);
    assert!(env.core.adopt(t(0, 0), worker, 2, NONE).is_some());
    assert_eq!(env.fail(t(0, 0)), [(t(0, 0), TaskState::Retrying { attempt: 3 })]);
    assert_eq!(env.schedule(), [t(0, 0)]);
    assert_eq!(env.attempt(t(0, 0)), Some(3));
}

#[test]
fn an_adopted_instance_releases_what_waits_for_it() {
    let a = GroupSpec::new("a", 1);
    let b = GroupSpec::new("b", 1);
    let mut env = TestEnv::new(vec![a, b], vec![edge_each(0, 1)]);
    assert!(env.core.wait_until(t(0, 0), env.now + 60 * SECOND));
    let worker = env.worker(1, 0);
    assert!(env.core.adopt(t(0, 0), worker, 0, NONE).is_some());
    env.core.on_finished(t(0, 0), TaskResult::Succeeded, env.now, &mut env.out);
    assert_eq!(env.schedule(), [t(1, 0)]);
}

#[test]
fn an_attempt_a_worker_forgets_is_not_numbered_again() {
    let mut env = TestEnv::new(vec![GroupSpec::new("g", 2)], vec![]);
    env.core.number_after(t(0, 0), 0);
    env.core.number_after(t(0, 9), 0);
    env.worker(2, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
    assert_eq!((env.attempt(t(0, 0)), env.attempt(t(0, 1))), (Some(1), Some(0)));
    env.core.number_after(t(0, 1), 4);
    env.fail(t(0, 1));
    assert_eq!(env.attempt(t(0, 1)), Some(0), "a running task keeps its numbering");
}
