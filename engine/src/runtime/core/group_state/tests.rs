//! Unit tests of [`GroupState`]'s cursor, queue and blocking.

use super::*;
use crate::runtime::core::tests::env::GroupSpec;

fn state(count: u64, remaining: Vec<u32>) -> GroupState {
    let group = GroupSpec::new("g", count).build();
    GroupState::new(&group, vec![Request::default()], Vec::new(), remaining, 0, false)
}

#[test]
fn cursor_then_requeued_instances() {
    let mut g = state(3, vec![]);
    assert_eq!((g.take(), g.take()), (Some(0), Some(1)));
    g.requeue(0);
    assert!(g.end_pending(2, Instance::Succeeded));
    assert_eq!((g.take(), g.take()), (Some(0), None));
    assert!(!g.is_active());
    assert_eq!((g.pending, g.succeeded), (0, 1));
}

#[test]
fn counted_instances_queue_when_released() {
    let mut g = state(3, vec![1, 0, 2]);
    assert_eq!(g.ready(), 1);
    assert_eq!(g.take(), Some(1));
    g.release(2);
    assert!(!g.is_active());
    g.release(2);
    g.release(0);
    assert_eq!(g.ready(), 2);
    assert!(g.end_pending(0, Instance::Cancelled));
    assert_eq!((g.take(), g.take()), (Some(2), None));
    assert_eq!(g.cancelled, 1);
}

#[test]
fn blocked_groups_are_not_ready() {
    let mut g = state(2, vec![]);
    g.blocked_by = 1;
    assert_eq!((g.ready(), g.take()), (0, None));
    g.blocked_by = 0;
    assert_eq!(g.ready(), 2);
}
