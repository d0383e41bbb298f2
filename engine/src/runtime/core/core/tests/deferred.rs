//! Groups known only at run time: a placeholder until their writer is done,
//! then instances like any group; cancelled or failed as one before that.

use super::env::{GroupSpec, TestEnv, edge_all, edge_each, graph, t};
use crate::ir::{Domain, Edge, EdgeKind, EdgeOn, EdgeOrigin, Expansion, GroupId, StrPool, TaskId};
use crate::runtime::core::{CancelReason, Core, CoreOptions, TaskState};

/// writer → list (deferred) → mirror (element-wise) → after (all).
fn env() -> (TestEnv, crate::ir::Graph) {
    let groups = vec![
        GroupSpec::new("writer", 1),
        GroupSpec::new("list", 0),
        GroupSpec::new("mirror", 0),
        GroupSpec::new("after", 1),
    ];
    let expansion = Edge {
        from: GroupId(0),
        to: GroupId(1),
        kind: EdgeKind::All,
        origin: EdgeOrigin::Expansion,
        on: EdgeOn::Success,
    };
    let mut g = graph(groups, vec![expansion, edge_each(1, 2), edge_all(2, 3)]);
    g.groups[1].domain = Domain::Deferred { expansion: Expansion::Lines { file: "list.txt".into() } };
    g.groups[2].domain = Domain::Same { group: GroupId(1) };
    let env = TestEnv { core: Core::new(&g, CoreOptions::default()), ..TestEnv::new(vec![], vec![]) };
    (env, g)
}

/// `g` with the deferred group read as `items`.
fn resolved(mut g: crate::ir::Graph, items: &[&str]) -> crate::ir::Graph {
    let items = StrPool::from(items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
    let count = items.len() as u64;
    g.groups[1].domain = Domain::Lines { file: "list.txt".into(), items };
    g.groups[1].count = count;
    g.groups[2].count = count;
    g
}

#[test]
fn a_deferred_group_waits_for_its_writer_then_runs_like_any_other() {
    let (mut env, g) = env();
    env.worker(4, 0);
    assert_eq!(env.schedule(), [t(0, 0)]);
    assert!(env.core.take_resolvable().is_empty(), "the writer is still running");
    env.finish(t(0, 0));
    assert_eq!(env.schedule(), [] as [TaskId; 0], "nothing to run before the file is read");
    assert!(!env.core.is_finished());
    assert_eq!(env.core.take_resolvable(), [GroupId(1)]);
    env.core.resolve(&resolved(g, &["a", "b"]), &[GroupId(1), GroupId(2)]);
    assert_eq!(env.schedule(), [t(1, 0), t(1, 1)]);
    env.finish(t(1, 1));
    assert_eq!(env.schedule(), [t(2, 1)], "the mirror follows element by element");
    for task in [t(1, 0), t(2, 1)] {
        env.finish(task);
    }
    assert_eq!(env.schedule(), [t(2, 0)]);
    env.finish(t(2, 0));
    assert_eq!(env.schedule(), [t(3, 0)]);
    env.finish(t(3, 0));
    assert!(env.core.is_finished());
}

#[test]
fn a_deferred_group_with_no_instances_releases_what_waits_for_it() {
    let (mut env, g) = env();
    env.worker(1, 0);
    env.schedule();
    env.finish(t(0, 0));
    assert_eq!(env.core.take_resolvable(), [GroupId(1)]);
    env.core.resolve(&resolved(g, &[]), &[GroupId(1), GroupId(2)]);
    assert_eq!(env.schedule(), [t(3, 0)]);
    env.finish(t(3, 0));
    assert!(env.core.is_finished());
}

#[test]
fn a_failed_writer_cancels_the_deferred_group_as_one() {
    let (mut env, _) = env();
    env.worker(1, 0);
    env.schedule();
    let states = env.fail(t(0, 0));
    let whole = |g| TaskId::whole(GroupId(g));
    let why = TaskState::Cancelled(CancelReason::DependencyFailed(t(0, 0)));
    assert!(states.contains(&(whole(1), why)), "{states:?}");
    assert!(states.contains(&(whole(2), why)), "{states:?}");
    assert!(states.contains(&(t(3, 0), why)), "{states:?}");
    assert!(env.core.is_finished());
}

#[test]
fn an_unreadable_file_fails_the_group_and_cancels_what_waits() {
    let (mut env, _) = env();
    env.worker(1, 0);
    env.schedule();
    env.finish(t(0, 0));
    assert_eq!(env.core.take_resolvable(), [GroupId(1)]);
    let before = env.out.events.len();
    env.core.fail_deferred(GroupId(1), &mut env.out);
    let states = env.states_since(before);
    let whole = TaskId::whole(GroupId(1));
    assert_eq!(states[0], (whole, TaskState::Failed));
    assert!(states.contains(&(t(3, 0), TaskState::Cancelled(CancelReason::DependencyFailed(whole)))), "{states:?}");
    assert!(env.core.is_finished());
    assert_eq!(env.core.counts().failed, 1);
}

#[test]
fn a_queue_asks_for_a_deferred_group_once_it_is_known() {
    let (mut env, g) = env();
    let groups =
        |env: &TestEnv| env.core.backlog(|_| true).iter().map(|b| (b.group.0, b.ready, b.blocked)).collect::<Vec<_>>();
    assert_eq!(groups(&env), [(0, 1, 0), (3, 0, 1)], "no demand for the placeholders");
    env.worker(1, 0);
    env.schedule();
    env.finish(t(0, 0));
    env.core.take_resolvable();
    env.core.resolve(&resolved(g, &["a", "b", "c"]), &[GroupId(1), GroupId(2)]);
    assert_eq!(groups(&env), [(1, 3, 0), (2, 0, 3), (3, 0, 1)]);
}
