//! [`Upstream`] and [`Graph::upstream`]: the edges read backwards — the
//! instances one task instance waits for, group by group.

use std::collections::BTreeMap;
use std::ops::Range;

use super::{EdgeKind, Graph, GroupId, TaskId};

/// The instances of one group that a task instance waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// The group they belong to.
    pub group: GroupId,
    /// Their positions: sorted, disjoint ranges with gaps between them.
    pub instances: Vec<Range<u64>>,
}

impl Upstream {
    /// How many instances.
    pub fn count(&self) -> u64 {
        self.instances.iter().map(|r| r.end - r.start).sum()
    }

    /// Each position, in order.
    pub fn positions(&self) -> impl Iterator<Item = u64> + '_ {
        self.instances.iter().flat_map(Clone::clone)
    }
}

impl Graph {
    /// The instances `task` waits for, one [`Upstream`] per group in group
    /// order, read from the edges into its group as the runtime follows
    /// them ([`EdgeKind::sources`], which a hand-written graph cannot make
    /// panic). Edges from the group to itself count; several edges from one
    /// group (written in `after` and inferred from files) are merged.
    pub fn upstream(&self, task: TaskId) -> Vec<Upstream> {
        let mut found: BTreeMap<GroupId, Vec<Range<u64>>> = BTreeMap::new();
        for edge in self.edges.iter().filter(|e| e.to == task.group) {
            let Some(from) = self.groups.get(edge.from.index()) else { continue };
            let count = from.count;
            let ranges = found.entry(edge.from).or_default();
            match (&edge.kind, &self.group(task.group).domain) {
                // A range, not one position each: `all` over a big group stays cheap.
                (EdgeKind::All, _) => ranges.extend((count > 0).then_some(0..count)),
                // An instance of a nested group waits for the parent instance of its part.
                (EdgeKind::ElementWise, super::Domain::Nested { parent, parts, .. }) if *parent == edge.from => {
                    ranges.extend(parts.locate(task.instance).map(|(p, _)| p.outer..p.outer + 1));
                }
                (kind, _) => ranges.extend(kind.sources(task.instance, count).map(|s| s..s + 1)),
            }
        }
        found
            .into_iter()
            .map(|(group, ranges)| Upstream { group, instances: merge(ranges) })
            .filter(|u| !u.instances.is_empty())
            .collect()
    }
}

/// Sorts ranges and joins those that overlap or touch.
fn merge(mut ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
    ranges.sort_unstable_by_key(|r| (r.start, r.end));
    let mut merged: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::EdgeOrigin;
    use crate::runtime::core::tests::env::{GroupSpec, edge_all, edge_each, edge_explicit, graph, t};

    /// The instances of `group` in `[start, end)` pairs.
    fn up(group: u32, instances: &[(u64, u64)]) -> Upstream {
        Upstream { group: GroupId(group), instances: instances.iter().map(|&(s, e)| s..e).collect() }
    }

    #[test]
    fn each_edge_kind_reads_backwards() {
        let g = graph(
            vec![GroupSpec::new("a", 3), GroupSpec::new("b", 4), GroupSpec::new("c", 2)],
            vec![edge_each(0, 1), edge_all(0, 2), edge_explicit(1, 2, &[&[0, 3][..], &[3, 3, 2]])],
        );
        assert_eq!(g.upstream(t(0, 1)), []);
        assert_eq!(g.upstream(t(1, 2)), [up(0, &[(2, 3)])]);
        // `a` has no fourth instance for `b[3]` to wait for.
        assert_eq!(g.upstream(t(1, 3)), []);
        assert_eq!(g.upstream(t(2, 0)), [up(0, &[(0, 3)]), up(1, &[(0, 1), (3, 4)])]);
        assert_eq!(g.upstream(t(2, 1)), [up(0, &[(0, 3)]), up(1, &[(2, 4)])]);
        assert_eq!(g.upstream(t(2, 1))[1].count(), 2);
        assert_eq!(g.upstream(t(2, 0))[1].positions().collect::<Vec<_>>(), [0, 3]);
    }

    #[test]
    fn a_nested_instance_waits_for_the_parent_instance_of_its_part() {
        let mut g = graph(vec![GroupSpec::new("search", 3), GroupSpec::new("refine", 0)], vec![edge_each(0, 1)]);
        let expansion = crate::ir::Expansion::Lines { file: "hits/{{ index }}.txt".into() };
        g.groups[1].domain = crate::ir::Domain::Nested { parent: GroupId(0), expansion, parts: Default::default() };
        g.add_part(GroupId(1), 2, ["a", "b"]);
        g.add_part(GroupId(1), 0, ["c"]);
        assert_eq!(g.upstream(t(1, 1)), [up(0, &[(2, 3)])]);
        assert_eq!(g.upstream(t(1, 2)), [up(0, &[(0, 1)])]);
    }

    #[test]
    fn chains_within_a_group_and_merged_edges() {
        let mut g = graph(
            vec![GroupSpec::new("a", 5), GroupSpec::new("chain", 3)],
            vec![edge_explicit(1, 1, &[&[][..], &[0], &[1]]), edge_explicit(0, 1, &[&[0], &[1], &[4]])],
        );
        assert_eq!(g.upstream(t(1, 0)), [up(0, &[(0, 1)])]);
        assert_eq!(g.upstream(t(1, 2)), [up(0, &[(4, 5)]), up(1, &[(1, 2)])]);
        // An `after` edge and a files edge from the same group are one set.
        g.edges.push(edge_all(0, 1));
        g.edges.last_mut().unwrap().origin = EdgeOrigin::Files;
        assert_eq!(g.upstream(t(1, 2)), [up(0, &[(0, 5)]), up(1, &[(1, 2)])]);
    }

    #[test]
    fn malformed_rows_and_empty_groups_are_ignored() {
        let mut g = graph(vec![GroupSpec::new("a", 2), GroupSpec::new("none", 0), GroupSpec::new("b", 3)], vec![]);
        g.edges.push(edge_all(1, 2));
        g.edges.push(edge_explicit(0, 2, &[&[0, 7]]));
        assert_eq!(g.upstream(t(2, 0)), [up(0, &[(0, 1)])]);
        assert_eq!(g.upstream(t(2, 2)), []);
        if let EdgeKind::Explicit { offsets, .. } = &mut g.edges[1].kind {
            offsets[1] = 99;
        }
        assert_eq!(g.upstream(t(2, 0)), []);
    }

    #[test]
    fn ranges_merge_when_they_touch() {
        assert_eq!(merge(vec![5..6, 0..2, 2..3, 1..2, 9..12]), vec![0..3, 5..6, 9..12]);
        assert_eq!(merge(vec![]), [] as [Range<u64>; 0]);
    }
}
