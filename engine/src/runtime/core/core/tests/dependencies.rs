//! Readiness along each edge kind, self-chains, and resumed instances.

use super::env::{GroupSpec, TestEnv, edge_all, edge_each, edge_explicit, t};
use crate::runtime::core::{StateCounts, TaskResult};

#[test]
fn element_wise_instances_become_ready_one_by_one() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 3).priority(1), GroupSpec::new("b", 4)], vec![edge_each(0, 1)]);
    env.worker(3, 0);
    // b[3] has no source in a (a has 3 instances), so it is ready at once.
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1), t(0, 2)]);
    assert_eq!(env.counts(), StateCounts { waiting: 3, ready: 1, running: 3, ..StateCounts::default() });
    env.finish(t(0, 1));
    assert_eq!(env.counts().ready, 2);
    assert_eq!(env.schedule(), [t(1, 3)], "queued instances go first, in order of readiness");
    env.finish(t(0, 0));
    env.finish(t(1, 3));
    assert_eq!(env.schedule(), [t(1, 1), t(1, 0)]);
}

#[test]
fn all_edges_wait_for_the_whole_source_group() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 2), GroupSpec::new("b", 2)], vec![edge_all(0, 1)]);
    env.worker(4, 0);
    assert_eq!(env.schedule(), [t(0, 0), t(0, 1)]);
    env.finish(t(0, 0));
    assert_eq!(env.schedule(), []);
    assert_eq!(env.counts().waiting, 2);
    env.finish(t(0, 1));
    assert_eq!(env.counts().ready, 2);
    assert_eq!(env.schedule(), [t(1, 0), t(1, 1)]);
}

#[test]
fn explicit_edges_follow_their_rows() {
    let rows: &[&[u64]] = &[&[0, 1], &[2], &[]];
    let mut env =
        TestEnv::new(vec![GroupSpec::new("a", 3).priority(1), GroupSpec::new("b", 3)], vec![edge_explicit(0, 1, rows)]);
    env.worker(1, 0);
    let order = env.drain(|_| TaskResult::Succeeded);
    // Priority puts a first; b[2] has no sources and is ready before b[1] and b[0].
    assert_eq!(order, [t(0, 0), t(0, 1), t(0, 2), t(1, 2), t(1, 0), t(1, 1)]);
}

#[test]
fn a_self_chain_runs_in_order() {
    let rows: &[&[u64]] = &[&[], &[0], &[1], &[2]];
    let mut env = TestEnv::new(vec![GroupSpec::new("chain", 4)], vec![edge_explicit(0, 0, rows)]);
    env.worker(4, 0);
    for i in 0..4 {
        assert_eq!(env.schedule(), [t(0, i)]);
        env.finish(t(0, i));
    }
    assert!(env.core.is_finished());
}

#[test]
fn mixed_all_and_element_wise_edges() {
    // c[i] waits for a[i] and for all of b.
    let mut env = TestEnv::new(
        vec![GroupSpec::new("a", 2), GroupSpec::new("b", 1), GroupSpec::new("c", 2)],
        vec![edge_each(0, 2), edge_all(1, 2)],
    );
    env.worker(1, 0);
    let order = env.drain(|_| TaskResult::Succeeded);
    assert_eq!(order, [t(0, 0), t(0, 1), t(1, 0), t(2, 0), t(2, 1)]);
}

#[test]
fn resumed_instances_never_start_and_release_their_dependents() {
    let mut env = TestEnv::new(vec![GroupSpec::new("a", 3), GroupSpec::new("b", 1)], vec![edge_all(0, 1)]);
    assert!(env.core.mark_succeeded(t(0, 0)));
    assert!(env.core.mark_succeeded(t(0, 2)));
    assert!(!env.core.mark_succeeded(t(0, 2)), "only once");
    assert!(!env.core.mark_succeeded(t(7, 0)), "no such group");
    assert_eq!(env.counts(), StateCounts { ready: 1, waiting: 1, succeeded: 2, ..StateCounts::default() });
    env.worker(2, 0);
    assert_eq!(env.schedule(), [t(0, 1)]);
    env.finish(t(0, 1));
    assert_eq!(env.schedule(), [t(1, 0)]);
}

#[test]
fn empty_groups_do_not_block_their_dependents() {
    let mut env = TestEnv::new(vec![GroupSpec::new("none", 0), GroupSpec::new("b", 1)], vec![edge_all(0, 1)]);
    env.worker(1, 0);
    assert_eq!(env.schedule(), [t(1, 0)]);
}
