//! [`Graph`]: the validated, compact task graph the runtime executes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Domain, Edge, EdgeOrigin, Group, GroupId, Item};

/// The compiled workflow: groups (tasks and task arrays) and the edges between them.
///
/// Groups are in a topological order of the group graph: every edge goes
/// from a lower id to a higher id, except a group's edges to itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    /// The workflow's name.
    pub name: String,
    /// Variables after command-line overrides.
    pub vars: BTreeMap<String, serde_json::Value>,
    /// Tasks and task arrays.
    pub groups: Vec<Group>,
    /// Dependencies between groups.
    pub edges: Vec<Edge>,
}

impl Graph {
    /// The group with id `id`.
    pub fn group(&self, id: GroupId) -> &Group {
        &self.groups[id.index()]
    }

    /// The id of the group named `name`.
    pub fn find(&self, name: &str) -> Option<GroupId> {
        self.groups.iter().position(|g| g.name == name).map(|i| GroupId(i as u32))
    }

    /// Total number of task instances.
    pub fn instance_count(&self) -> u64 {
        self.groups.iter().map(|g| g.count).sum()
    }

    /// The domain that actually holds a group's instances (following `for_each`).
    pub fn base_domain(&self, id: GroupId) -> &Domain {
        &self.group(self.base_group(id)).domain
    }

    /// Whether group `id`'s instances are known only at run time
    /// (its base domain is [`Domain::Deferred`]).
    pub fn is_deferred(&self, id: GroupId) -> bool {
        matches!(self.base_domain(id), Domain::Deferred { .. })
    }

    /// For a group whose instances are known only at run time, the groups
    /// whose end makes them known (the writers of its expansion file).
    pub fn waits_for(&self, id: GroupId) -> Option<Vec<GroupId>> {
        let base = self.base_group(id);
        self.is_deferred(id).then(|| {
            self.edges.iter().filter(|e| e.to == base && e.origin == EdgeOrigin::Expansion).map(|e| e.from).collect()
        })
    }

    /// The group that owns `id`'s instances (following `for_each`).
    pub fn base_group(&self, mut id: GroupId) -> GroupId {
        while let Domain::Same { group } = &self.group(id).domain {
            id = *group;
        }
        id
    }

    /// The `index` of instance `i` of group `id`: the integer for ranges,
    /// the position otherwise.
    pub fn index(&self, id: GroupId, i: u64) -> i64 {
        self.base_domain(id).index(i)
    }

    /// The instance position whose `index` is `index`, if any.
    pub fn position(&self, id: GroupId, index: i64) -> Option<u64> {
        self.base_domain(id).position(index, self.group(id).count)
    }

    /// `name[index]` for an instance, or just `name` for a plain task.
    pub fn label(&self, task: super::TaskId) -> String {
        let group = self.group(task.group);
        match group.domain {
            Domain::Single => group.name.clone(),
            _ if task.is_whole() => group.name.clone(),
            _ => format!("{}[{}]", group.name, self.index(task.group, task.instance)),
        }
    }

    /// The `item` of instance `i` of group `id`.
    pub fn item(&self, id: GroupId, i: u64) -> Item<'_> {
        self.base_domain(id).item(i)
    }
}
