//! Tasks sent ahead to prefetch workers: on the resources of a running task,
//! to start when it ends.

use super::env::{GroupSpec, TestEnv, t};
use crate::ir::GroupId;
use crate::runtime::core::{TaskResult, TaskState};

#[test]
fn each_running_task_gets_one_successor_on_its_resources() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 6)], vec![]);
    let w = env.worker(2, 0);
    env.core.set_prefetch(w, true);
    env.core.set_short(GroupId(0));
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1), t(0, 2), t(0, 3)]);
    assert_eq!(env.alloc(t(0, 2)).after, Some(t(0, 0)));
    assert_eq!(env.alloc(t(0, 2)).cpus, env.alloc(t(0, 0)).cpus);
    assert_eq!(env.alloc(t(0, 3)).after, Some(t(0, 1)));
    // The first ends: its successor holds its CPU now, and gets a successor itself.
    env.finish(t(0, 0));
    assert_eq!(env.schedule(), [t(0, 4)]);
    assert_eq!(env.alloc(t(0, 4)).after, Some(t(0, 2)));
    assert_eq!(env.alloc(t(0, 4)).cpus, env.alloc(t(0, 2)).cpus);
    for task in [t(0, 1), t(0, 2), t(0, 3), t(0, 4)] {
        env.finish(task);
        env.schedule();
    }
    env.finish(t(0, 5));
    assert!(env.core.is_finished());
    // Every CPU is free again: two new tasks would start at once.
    assert_eq!(env.core.counts().running, 0);
}

#[test]
fn workers_that_do_not_prefetch_get_nothing_ahead() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 6)], vec![]);
    env.worker(2, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
}

#[test]
fn a_lost_prefetch_worker_requeues_its_tasks_and_those_sent_ahead() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 4)], vec![]);
    let w = env.worker(1, 0);
    env.core.set_prefetch(w, true);
    env.core.set_short(GroupId(0));
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
    let states = env.lose(w);
    assert_eq!(states.len(), 2);
    assert!(states.iter().all(|(_, s)| matches!(s, TaskState::Retrying { attempt: 1 })));
    let again = env.worker(1, 0);
    env.core.set_prefetch(again, true);
    assert_eq!(env.schedule().len(), 2, "the new worker runs one and holds one ahead");
}

#[test]
fn a_task_stopped_before_it_started_frees_nothing_twice() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 4)], vec![]);
    let w = env.worker(1, 0);
    env.core.set_prefetch(w, true);
    env.core.set_short(GroupId(0));
    env.schedule();
    env.stop();
    // The worker reports the one sent ahead first (it never started), then the running one.
    env.report(t(0, 1), TaskResult::Failed);
    env.report(t(0, 0), TaskResult::Failed);
    assert!(env.core.is_finished());
    // The CPU was given back once: a fresh core-level check through a new group is not possible
    // after a stop, so look at the worker's books directly.
    assert_eq!(env.core.workers[0].as_ref().map(|w| w.tasks), Some(0));
}

#[test]
fn only_the_top_ranked_group_is_sent_ahead() {
    let mut env = TestEnv::new(vec![GroupSpec::new("low", 4), GroupSpec::new("high", 1).priority(5)], vec![]);
    let w = env.worker(1, 0);
    env.core.set_prefetch(w, true);
    env.core.set_short(GroupId(0));
    // `high` starts; nothing of `low` is sent ahead behind a task of another group.
    assert_eq!(env.schedule(), [t(1, 0)]);
    env.finish(t(1, 0));
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
}

#[test]
fn long_tasks_are_not_sent_ahead() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 6)], vec![]);
    let w = env.worker(2, 0);
    env.core.set_prefetch(w, true);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)], "not marked short");
}
