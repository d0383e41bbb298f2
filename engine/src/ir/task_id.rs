//! [`TaskId`]: one instance of one group.

use serde::{Deserialize, Serialize};

use super::GroupId;

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
}
