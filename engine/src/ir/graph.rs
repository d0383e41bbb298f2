//! [`Graph`]: the validated, compact task graph the runtime executes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::container::{ContainerEngine, ResolvedImage};

use super::{Domain, Dropped, Edge, EdgeOrigin, Finally, Group, GroupId, Item, MaxFails};

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
    /// Stop the run (cancel what has not started) once this many instances
    /// failed; `flow run --max-fails` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_fails: Option<MaxFails>,
    /// The command run once at the end of every run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finally: Option<Finally>,
    /// The workflow's `[containers] engine`, if it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_engine: Option<ContainerEngine>,
    /// The task images (each group's `container` text) as the run checked
    /// them at its start; empty before a run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub images: BTreeMap<String, ResolvedImage>,
    /// Tasks of the file left out of the run (`when` false, or needing one
    /// that is), in file order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<Dropped>,
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

    /// Whether group `id`'s instances come part by part, from a file per
    /// instance of its parent (its base domain is [`Domain::Nested`]).
    pub fn is_nested(&self, id: GroupId) -> bool {
        matches!(self.base_domain(id), Domain::Nested { .. })
    }

    /// Whether group `id`'s instances are not known before the run:
    /// [`Graph::is_deferred`] or [`Graph::is_nested`].
    pub fn is_dynamic(&self, id: GroupId) -> bool {
        matches!(self.base_domain(id), Domain::Deferred { .. } | Domain::Nested { .. })
    }

    /// Gives nested group `base` and its `for_each` mirrors the part that
    /// instance `outer` of its parent gave (nothing if it has it already);
    /// returns the groups that share its instances and the positions of the
    /// new ones.
    pub fn add_part<'a>(
        &mut self,
        base: GroupId,
        outer: u64,
        items: impl IntoIterator<Item = &'a str>,
    ) -> (Vec<GroupId>, std::ops::Range<u64>) {
        let Some(Domain::Nested { parent, .. }) = self.groups.get(base.index()).map(|g| &g.domain) else {
            return (Vec::new(), 0..0);
        };
        let index = self.index(*parent, outer);
        let Domain::Nested { parts, .. } = &mut self.groups[base.index()].domain else { return (Vec::new(), 0..0) };
        let added = parts.push(outer, index, items);
        let count = parts.instances();
        let members: Vec<GroupId> =
            (0..self.groups.len() as u32).map(GroupId).filter(|&g| self.base_group(g) == base).collect();
        for &g in &members {
            self.groups[g.index()].count = count;
        }
        (members, added)
    }

    /// For a group whose instances are known only at run time, the groups
    /// whose end makes them known (the writers of its expansion file; for a
    /// nested group, also its parent).
    pub fn waits_for(&self, id: GroupId) -> Option<Vec<GroupId>> {
        let base = self.base_group(id);
        self.is_dynamic(id).then(|| {
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
        let domain = self.base_domain(task.group);
        match (domain, task.part_of()) {
            (Domain::Single, _) => group.name.clone(),
            _ if task.is_whole() => group.name.clone(),
            (Domain::Nested { parent, .. }, Some(outer)) => {
                format!("{}[{}.?]", group.name, self.index(*parent, outer))
            }
            (Domain::Nested { .. }, None) => {
                let sub = domain.subindex(task.instance).unwrap_or_default();
                format!("{}[{}.{sub}]", group.name, domain.index(task.instance))
            }
            _ => {
                // The common case, made without the formatting machinery:
                // room for the name, the brackets and any i64 at once.
                use std::fmt::Write as _;
                let mut label = String::with_capacity(group.name.len() + 22);
                label.push_str(&group.name);
                label.push('[');
                let _ = write!(label, "{}", self.index(task.group, task.instance));
                label.push(']');
                label
            }
        }
    }

    /// The `item` of instance `i` of group `id`.
    pub fn item(&self, id: GroupId, i: u64) -> Item<'_> {
        self.base_domain(id).item(i)
    }
}
