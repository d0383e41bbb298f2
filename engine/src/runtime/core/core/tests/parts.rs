//! Nested groups: a part per parent instance, each a placeholder until its
//! parent instance is done and the driver reads its file.

use super::env::{GroupSpec, TestEnv, edge_all, edge_each, graph, t};
use crate::ir::{Domain, Edge, EdgeKind, EdgeOn, EdgeOrigin, Expansion, Graph, GroupId, TaskId};
use crate::runtime::core::{CancelReason, Core, CoreOptions, TaskState};

/// parent (3) → nested (a part per parent instance) → mirror (element-wise) → after (all).
fn env() -> (TestEnv, Graph) {
    let groups = vec![
        GroupSpec::new("parent", 3),
        GroupSpec::new("nested", 0),
        GroupSpec::new("mirror", 0),
        GroupSpec::new("after", 1),
    ];
    let parts = Edge {
        from: GroupId(0),
        to: GroupId(1),
        kind: EdgeKind::ElementWise,
        origin: EdgeOrigin::Expansion,
        on: EdgeOn::Success,
    };
    let mut g = graph(groups, vec![parts, edge_each(1, 2), edge_all(2, 3)]);
    let expansion = Expansion::Lines { file: "hits/{{ index }}.txt".into() };
    g.groups[1].domain = Domain::Nested { parent: GroupId(0), expansion, parts: Default::default() };
    g.groups[2].domain = Domain::Same { group: GroupId(1) };
    let env = TestEnv { core: Core::new(&g, CoreOptions::default()), ..TestEnv::new(vec![], vec![]) };
    (env, g)
}

/// Reads the part of parent instance `outer` as `items`, as the driver does.
fn add(env: &mut TestEnv, g: &mut Graph, outer: u64, items: &[&str]) {
    let (members, added) = g.add_part(GroupId(1), outer, items.iter().copied());
    env.core.add_part(&members, outer, added);
}

#[test]
fn each_part_is_known_as_soon_as_its_parent_instance_is_done() {
    let (mut env, mut g) = env();
    env.worker(2, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
    env.finish(t(0, 1));
    assert_eq!(env.core.take_parts(), [(GroupId(1), 1)]);
    assert!(env.core.take_parts().is_empty(), "each part is handed out once");
    add(&mut env, &mut g, 1, &["a", "b"]);
    assert_eq!(g.label(t(1, 1)), "nested[1.1]");
    assert_eq!(env.schedule(), [t(0, 2)], "parent instances come first (rank), then the part");
    env.finish(t(0, 0));
    env.finish(t(0, 2));
    let mut ready = env.core.take_parts();
    ready.sort();
    assert_eq!(ready, [(GroupId(1), 0), (GroupId(1), 2)]);
    add(&mut env, &mut g, 2, &["c"]);
    add(&mut env, &mut g, 0, &[]);
    assert_eq!(g.label(t(2, 2)), "mirror[2.0]");
    let mut order = env.schedule();
    order.sort();
    assert_eq!(order, [t(1, 0), t(1, 1)]);
    for task in [t(1, 0), t(1, 1)] {
        env.finish(task);
    }
    let mut all = Vec::new();
    for _ in 0..4 {
        let next = env.schedule();
        next.iter().for_each(|&task| {
            env.finish(task);
        });
        all.extend(next);
    }
    assert_eq!(all.last(), Some(&t(3, 0)), "`after` waits for every part: {all:?}");
    assert!(env.core.is_finished());
}

#[test]
fn a_failed_parent_instance_cancels_its_part_and_what_waits_for_the_whole() {
    let (mut env, mut g) = env();
    env.worker(3, 0);
    env.schedule();
    env.finish(t(0, 0));
    add(&mut env, &mut g, 0, &["a"]);
    let states = env.fail(t(0, 1));
    let why = TaskState::Cancelled(CancelReason::DependencyFailed(t(0, 1)));
    assert!(states.contains(&(TaskId::part(GroupId(1), 1), why)), "{states:?}");
    assert!(states.contains(&(TaskId::part(GroupId(2), 1), why)), "{states:?}");
    assert!(states.contains(&(t(3, 0), why)), "{states:?}");
    assert_eq!(g.label(TaskId::part(GroupId(1), 1)), "nested[1.?]");
    // The other parts still run.
    env.finish(t(0, 2));
    env.core.take_parts();
    add(&mut env, &mut g, 2, &["c"]);
    let mut ran = 0;
    loop {
        let next = env.schedule();
        if next.is_empty() {
            break;
        }
        for task in next {
            env.finish(task);
            ran += 1;
        }
    }
    assert_eq!(ran, 4, "nested and mirror instances of parts 0 and 2");
    assert!(env.core.is_finished());
    assert_eq!(env.core.counts().cancelled, 3);
}

#[test]
fn a_queue_asks_only_for_known_parts() {
    let (mut env, mut g) = env();
    let groups =
        |env: &TestEnv| env.core.backlog(|_| true).iter().map(|b| (b.group.0, b.ready, b.blocked)).collect::<Vec<_>>();
    assert_eq!(groups(&env), [(0, 3, 0), (3, 0, 1)], "no demand for parts not known");
    env.worker(1, 0);
    env.schedule();
    env.finish(t(0, 0));
    env.core.take_parts();
    add(&mut env, &mut g, 0, &["a", "b"]);
    assert_eq!(groups(&env), [(0, 2, 0), (1, 2, 0), (2, 0, 2), (3, 0, 1)]);
}

#[test]
fn an_unreadable_part_fails_alone() {
    let (mut env, _) = env();
    env.worker(1, 0);
    env.schedule();
    env.finish(t(0, 0));
    env.core.take_parts();
    let before = env.out.events.len();
    env.core.fail_part(GroupId(1), 0, &mut env.out);
    let states = env.states_since(before);
    let part = TaskId::part(GroupId(1), 0);
    assert_eq!(states[0], (part, TaskState::Failed));
    assert!(states.contains(&(t(3, 0), TaskState::Cancelled(CancelReason::DependencyFailed(part)))), "{states:?}");
    assert_eq!(env.core.counts().failed, 1);
    assert!(!env.core.is_finished(), "parts 1 and 2 are still to come");
}

#[test]
fn a_nested_group_no_worker_can_run_is_cancelled_with_its_parts() {
    let (mut env, mut g) = env();
    g.groups[1].variants[0].cpus = crate::ir::Amount::whole(8);
    env.core = Core::new(&g, CoreOptions::default());
    env.worker(2, 0);
    let found = env.core.unschedulable();
    assert_eq!(found.iter().map(|(g, _)| g.0).collect::<Vec<_>>(), [1]);
    let before = env.out.events.len();
    env.core.cancel_groups(&[GroupId(1)], &mut env.out);
    let states = env.states_since(before);
    let part = |g, outer| TaskId::part(GroupId(g), outer);
    assert!(states.contains(&(part(1, 2), TaskState::Cancelled(CancelReason::Unschedulable))), "{states:?}");
    assert!(states.iter().any(|(t, _)| *t == t3()), "`after` is cancelled too: {states:?}");
    // The parents still run; nothing is left once they are done.
    loop {
        let started = env.schedule();
        if started.is_empty() {
            break;
        }
        started.into_iter().for_each(|task| {
            env.finish(task);
        });
    }
    assert!(env.core.take_parts().is_empty());
    assert!(env.core.is_finished(), "{:?}", env.core.counts());
}

fn t3() -> TaskId {
    t(3, 0)
}

#[test]
fn a_skipped_parent_instance_skips_its_part_and_the_rest_runs() {
    let (mut env, mut g) = env();
    env.worker(3, 0);
    env.schedule();
    let events = env.report(t(0, 1), crate::runtime::core::TaskResult::Skipped);
    let upstream = TaskState::Skipped(crate::runtime::core::out::SkipReason::Upstream(t(0, 1)));
    assert_eq!(
        events,
        [
            (t(0, 1), TaskState::Skipped(crate::runtime::core::out::SkipReason::Condition)),
            (TaskId::part(GroupId(1), 1), upstream),
            (TaskId::part(GroupId(2), 1), upstream),
        ]
    );
    env.finish(t(0, 0));
    env.finish(t(0, 2));
    add(&mut env, &mut g, 0, &["a"]);
    add(&mut env, &mut g, 2, &[]);
    let ran = env.drain(|_| crate::runtime::core::TaskResult::Succeeded);
    assert_eq!(ran.last(), Some(&t(3, 0)), "what waits for the whole nested group runs last");
    assert!(env.core.is_finished());
}

#[test]
fn a_nested_group_whose_parents_were_all_skipped_skips_what_waits_for_it() {
    let (mut env, _) = env();
    env.worker(3, 0);
    env.schedule();
    for i in 0..3 {
        env.report(t(0, i), crate::runtime::core::TaskResult::Skipped);
    }
    assert!(env.core.is_finished(), "`after` is skipped: nothing it waits for ran");
    assert_eq!(env.counts().skipped, 4);
}
