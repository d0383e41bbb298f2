//! [`TaskId`]: one instance of one group.

use serde::{Deserialize, Serialize};

use super::GroupId;

/// The bit that marks a [`TaskId::part`].
const PART: u64 = 1 << 63;

/// Instance `instance` (a position, not the user-facing `index`) of group `group`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TaskId {
    /// The group.
    pub group: GroupId,
    /// Position of the instance in the group's domain.
    pub instance: u64,
}

impl TaskId {
    /// Instance `instance` of `group`.
    pub fn new(group: GroupId, instance: u64) -> Self {
        Self { group, instance }
    }

    /// The whole of `group`, before its instances are known: what a group
    /// known only at run time reports a state with.
    pub fn whole(group: GroupId) -> Self {
        Self { group, instance: u64::MAX }
    }

    /// Whether this stands for a whole group ([`TaskId::whole`]).
    pub fn is_whole(self) -> bool {
        self.instance == u64::MAX
    }

    /// The part of nested `group` that instance `outer` of its parent
    /// gives, before it is known: what a part never known reports a state with.
    pub fn part(group: GroupId, outer: u64) -> Self {
        Self { group, instance: PART | outer }
    }

    /// For a [`TaskId::part`], the position of the parent instance.
    pub fn part_of(self) -> Option<u64> {
        (!self.is_whole() && self.instance & PART != 0).then_some(self.instance & !PART)
    }

    /// Whether this names one instance (not a whole group or a part).
    pub fn is_instance(self) -> bool {
        self.instance & PART == 0
    }
}
