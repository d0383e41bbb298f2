//! Tasks sent ahead to prefetch workers: in line behind a running task, on
//! its resources, to start when it ends (as deep as the group's line).

use super::env::{GroupSpec, TestEnv, t};
use crate::ir::GroupId;
use crate::runtime::core::{TaskResult, TaskState};

/// `count` instances of a short group with lines of `line`, on one prefetch worker of `cpus` CPUs.
fn prefetching(count: u64, cpus: u32, line: u8) -> TestEnv {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", count)], vec![]);
    let w = env.worker(cpus, 0);
    env.core.set_prefetch(w, true);
    env.core.set_short(GroupId(0), line);
    env
}

#[test]
fn each_running_task_gets_two_in_line_on_its_resources() {
    let mut env = prefetching(10, 2, 2);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1), t(0, 2), t(0, 3), t(0, 4), t(0, 5)]);
    assert_eq!(env.alloc(t(0, 2)).after, Some(t(0, 0)));
    assert_eq!(env.alloc(t(0, 4)).after, Some(t(0, 2)));
    assert_eq!(env.alloc(t(0, 3)).after, Some(t(0, 1)));
    assert_eq!(env.alloc(t(0, 5)).after, Some(t(0, 3)));
    assert_eq!(env.alloc(t(0, 4)).cpus, env.alloc(t(0, 0)).cpus);
    // The first ends: the next holds its CPU, and the line grows back to two.
    env.finish(t(0, 0));
    assert_eq!(env.schedule(), [t(0, 6)]);
    assert_eq!(env.alloc(t(0, 6)).after, Some(t(0, 4)));
    assert_eq!(env.alloc(t(0, 6)).cpus, env.alloc(t(0, 2)).cpus);
    for task in [1, 2, 3, 4, 5, 6].map(|i| t(0, i)) {
        env.finish(task);
        env.schedule();
    }
    for task in [7, 8, 9].map(|i| t(0, i)) {
        env.finish(task);
    }
    assert!(env.core.is_finished());
    assert_eq!(env.core.workers[0].as_ref().map(|w| w.tasks), Some(0), "every CPU given back once");
}

#[test]
fn a_deeper_line_holds_more_behind_each_running_task() {
    let mut env = prefetching(20, 2, 4);
    assert_eq!(env.schedule().len(), 10, "two running, four in line behind each");
    assert_eq!(env.alloc(t(0, 8)).after, Some(t(0, 6)));
    env.finish(t(0, 0));
    assert_eq!(env.schedule(), [t(0, 10)], "the line grows back to four");
    assert_eq!(env.alloc(t(0, 10)).after, Some(t(0, 8)));
}

#[test]
fn workers_that_do_not_prefetch_get_nothing_ahead() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 6)], vec![]);
    env.worker(2, 0);
    env.core.set_short(GroupId(0), 2);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
}

#[test]
fn long_tasks_are_not_sent_ahead() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 6)], vec![]);
    let w = env.worker(2, 0);
    env.core.set_prefetch(w, true);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)], "not marked short");
}

#[test]
fn a_lost_prefetch_worker_requeues_its_tasks_and_those_sent_ahead() {
    let mut env = prefetching(4, 1, 2);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1), t(0, 2)]);
    let states = env.lose(env.out.running[&t(0, 0)].0);
    assert_eq!(states.len(), 3);
    assert!(states.iter().all(|(_, s)| matches!(s, TaskState::Retrying { attempt: 1 })));
    let again = env.worker(1, 0);
    env.core.set_prefetch(again, true);
    assert_eq!(env.schedule().len(), 3, "the new worker runs one and holds two in line");
}

#[test]
fn tasks_stopped_before_they_started_free_nothing_twice() {
    let mut env = prefetching(4, 1, 2);
    env.schedule();
    env.stop();
    // The worker reports those in line first (they never started), in any order, then the running one.
    env.report(t(0, 1), TaskResult::Failed);
    env.report(t(0, 2), TaskResult::Failed);
    env.report(t(0, 0), TaskResult::Failed);
    assert!(env.core.is_finished());
    assert_eq!(env.core.workers[0].as_ref().map(|w| w.tasks), Some(0));
}

#[test]
fn only_the_top_ranked_group_is_sent_ahead() {
    let mut env = TestEnv::new(vec![GroupSpec::new("low", 4), GroupSpec::new("high", 1).priority(5)], vec![]);
    let w = env.worker(1, 0);
    env.core.set_prefetch(w, true);
    env.core.set_short(GroupId(0), 2);
    env.core.set_short(GroupId(1), 2);
    // `high` starts; nothing of `low` waits behind a task of another group.
    assert_eq!(env.schedule(), [t(1, 0)]);
    env.finish(t(1, 0));
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1), t(0, 2)]);
}

#[test]
fn many_big_workers_share_the_lines() {
    // Two workers of 4,096 CPUs: 16,384 / 2 / 4,096 = 2 in line behind each task, not 8.
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 100_000)], vec![]);
    let (a, b) = (env.worker(4096, 0), env.worker(4096, 0));
    env.core.set_prefetch(a, true);
    env.core.set_prefetch(b, true);
    env.core.set_short(GroupId(0), 8);
    assert_eq!(env.schedule().len(), 2 * 4096 * 3, "each CPU runs one, two in line");
    // Eight workers of 4,096: the share is under one; one is always in line.
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 100_000)], vec![]);
    for _ in 0..8 {
        let w = env.worker(4096, 0);
        env.core.set_prefetch(w, true);
    }
    env.core.set_short(GroupId(0), 8);
    assert_eq!(env.schedule().len(), 8 * 4096 * 2);
}

#[test]
fn the_line_moves_up_and_grows_at_its_end_as_each_holder_ends() {
    // One CPU, four in line: each end lets exactly one more in, behind the last.
    let mut env = prefetching(40, 1, 4);
    assert_eq!(env.schedule(), (0..5).map(|i| t(0, i)).collect::<Vec<_>>());
    for i in 0..30 {
        env.finish(t(0, i));
        assert_eq!(env.schedule(), [t(0, i + 5)], "one more after {i} ended");
        assert_eq!(env.alloc(t(0, i + 5)).after, Some(t(0, i + 4)), "behind the last in line");
    }
}
