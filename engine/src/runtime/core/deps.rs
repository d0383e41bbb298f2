//! [`Deps`]: the edges of the graph as the core follows them — from a
//! finished instance to the instances (or groups) that wait for it — and the
//! initial dependency counters of each group.
//!
//! `All` edges are counted per group: a waiting group is blocked by the
//! number of its `All` sources that have not fully succeeded. Element-wise
//! and explicit edges are counted per instance, and only groups that have
//! such incoming edges get a counter per instance.
//!
//! An edge that waits for its source's failure, or for it whatever happened
//! ([`EdgeOn::Failure`], [`EdgeOn::Always`]), is released by any end of the
//! source — success, failure, cancellation or skip — and never cancels or
//! skips what waits on it: its link has `any_end` set. Whether a failure
//! happened is the driver's question when the waiting instance starts.

use crate::ir::{EdgeKind, EdgeOn, Graph, GroupId};

/// An edge seen from its source group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Link {
    /// Group `to` waits for this whole group.
    All {
        /// The waiting group.
        to: usize,
        /// Released once every instance of this group ended, however.
        any_end: bool,
    },
    /// Instance `i` of `to` waits for instance `i` of this group.
    ElementWise {
        /// The waiting group.
        to: usize,
        /// Released by any end of the instance.
        any_end: bool,
    },
    /// Instance `s` of this group is the parent of part `s` of nested group `to`.
    Parts {
        /// The nested group.
        to: usize,
    },
    /// Instance `s` of this group is waited for by instances
    /// `targets[offsets[s]..offsets[s + 1]]` of `to` (the edge's rows, reversed).
    Explicit {
        /// The waiting group.
        to: usize,
        /// Row starts, one per instance of this group plus one.
        offsets: Vec<usize>,
        /// Waiting instances of `to`.
        targets: Vec<u64>,
        /// Released by any end of the instance.
        any_end: bool,
    },
}

impl Link {
    /// The waiting group.
    pub(super) fn to(&self) -> usize {
        match self {
            Link::All { to, .. } | Link::ElementWise { to, .. } | Link::Parts { to } | Link::Explicit { to, .. } => *to,
        }
    }

    /// Whether any end of the source releases the target, a failure too:
    /// the edge never cancels or skips it.
    pub(super) fn any_end(&self) -> bool {
        match self {
            Link::All { any_end, .. } | Link::ElementWise { any_end, .. } | Link::Explicit { any_end, .. } => *any_end,
            Link::Parts { .. } => false,
        }
    }

    /// The instances of `to` (which has `to_count`) that wait for instance
    /// `*s` of this group; empty for `All`, whose target waits as a group.
    pub(super) fn dependents<'a>(&'a self, s: &'a u64, to_count: u64) -> &'a [u64] {
        match self {
            Link::All { .. } | Link::Parts { .. } => &[],
            Link::ElementWise { .. } if *s < to_count => std::slice::from_ref(s),
            Link::ElementWise { .. } => &[],
            Link::Explicit { offsets, targets, .. } => {
                let s = *s as usize;
                match (offsets.get(s), offsets.get(s + 1)) {
                    (Some(&start), Some(&end)) => &targets[start..end],
                    _ => &[],
                }
            }
        }
    }

    /// Whether instances of the target wait for single instances of this group.
    pub(super) fn is_per_instance(&self) -> bool {
        !matches!(self, Link::All { .. })
    }
}

/// The edges of a graph by source group, and each group's initial counters.
#[derive(Debug, Clone, Default)]
pub(super) struct Deps {
    /// Outgoing links of each group.
    pub(super) links: Vec<Vec<Link>>,
    /// Per group: how many `All` sources have not fully succeeded.
    pub(super) blocked_by: Vec<u32>,
    /// Per group: unfinished per-instance sources of each instance; empty
    /// for groups without element-wise or explicit incoming edges.
    pub(super) remaining: Vec<Vec<u32>>,
}

impl Deps {
    /// Follows the edges of `graph`.
    pub(super) fn new(graph: &Graph) -> Self {
        let n = graph.groups.len();
        let count = |g: usize| graph.groups[g].count;
        // A group known only at run time blocks what waits for it until it
        // is known and done, whatever its (still zero) count.
        let blocks = |g: usize| count(g) > 0 || graph.is_dynamic(GroupId(g as u32));
        let parent_of = |g: usize| match graph.groups[g].domain {
            crate::ir::Domain::Nested { parent, .. } => Some(parent.index()),
            _ => None,
        };
        let mut deps = Deps { links: vec![Vec::new(); n], blocked_by: vec![0; n], remaining: vec![Vec::new(); n] };
        for edge in &graph.edges {
            let (from, to) = (edge.from.index(), edge.to.index());
            if from >= n || to >= n {
                continue;
            }
            let any_end = edge.on != EdgeOn::Success;
            let link = match &edge.kind {
                EdgeKind::All => {
                    if blocks(from) {
                        deps.blocked_by[to] += 1;
                    }
                    Link::All { to, any_end }
                }
                EdgeKind::ElementWise if parent_of(to) == Some(from) => Link::Parts { to },
                EdgeKind::ElementWise => {
                    let remaining = deps.counters(to, count(to));
                    remaining.iter_mut().take(count(from) as usize).for_each(|r| *r += 1);
                    Link::ElementWise { to, any_end }
                }
                EdgeKind::Explicit { offsets, sources } => {
                    let rows = Rows { offsets, sources, to_count: count(to), from_count: count(from) };
                    let remaining = deps.counters(to, count(to));
                    for (i, _) in rows.pairs() {
                        remaining[i as usize] += 1;
                    }
                    rows.reversed(to, any_end)
                }
            };
            deps.links[from].push(link);
        }
        deps
    }

    fn counters(&mut self, g: usize, count: u64) -> &mut Vec<u32> {
        let remaining = &mut self.remaining[g];
        if remaining.is_empty() {
            remaining.resize(count as usize, 0);
        }
        remaining
    }
}

/// The rows of an explicit edge, read defensively: rows past the end of
/// `offsets` are empty and sources outside the `from` group are ignored.
struct Rows<'a> {
    offsets: &'a [u64],
    sources: &'a [u64],
    to_count: u64,
    from_count: u64,
}

impl Rows<'_> {
    /// Every (waiting instance, source instance) pair.
    fn pairs(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..self.to_count).flat_map(move |i| {
            let i_ = i as usize;
            let row = match (self.offsets.get(i_), self.offsets.get(i_ + 1)) {
                (Some(&start), Some(&end)) => self.sources.get(start as usize..end as usize).unwrap_or_default(),
                _ => &[],
            };
            row.iter().filter(|&&s| s < self.from_count).map(move |&s| (i, s))
        })
    }

    /// The same pairs grouped by source instance (a transposed CSR).
    fn reversed(&self, to: usize, any_end: bool) -> Link {
        let mut offsets = vec![0usize; self.from_count as usize + 1];
        for (_, s) in self.pairs() {
            offsets[s as usize + 1] += 1;
        }
        for s in 0..self.from_count as usize {
            offsets[s + 1] += offsets[s];
        }
        let mut next = offsets.clone();
        let mut targets = vec![0u64; offsets[self.from_count as usize]];
        for (i, s) in self.pairs() {
            targets[next[s as usize]] = i;
            next[s as usize] += 1;
        }
        Link::Explicit { to, offsets, targets, any_end }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::core::tests::env::{GroupSpec, edge_all, edge_each, edge_explicit, graph};

    #[test]
    fn counts_dependencies_by_kind() {
        let g = graph(
            vec![GroupSpec::new("a", 3), GroupSpec::new("b", 4), GroupSpec::new("c", 2)],
            vec![edge_each(0, 1), edge_all(0, 2), edge_explicit(1, 2, &[&[0, 3], &[3, 3]])],
        );
        let deps = Deps::new(&g);
        assert_eq!(deps.blocked_by, [0, 0, 1]);
        assert_eq!(deps.remaining, [vec![], vec![1, 1, 1, 0], vec![2, 2]]);
        assert_eq!(deps.links[0], [Link::ElementWise { to: 1, any_end: false }, Link::All { to: 2, any_end: false }]);
        let explicit = &deps.links[1][0];
        assert_eq!(explicit.dependents(&0, 2), [0]);
        assert_eq!(explicit.dependents(&1, 2), [] as [u64; 0]);
        assert_eq!(explicit.dependents(&3, 2), [0, 1, 1]);
        assert_eq!(explicit.dependents(&9, 2), [] as [u64; 0]);
        assert_eq!(deps.links[0][0].dependents(&2, 4), [2]);
        assert_eq!(deps.links[0][0].dependents(&4, 4), [] as [u64; 0]);
        assert!(!deps.links[0][1].is_per_instance());
    }

    #[test]
    fn self_chains_count_earlier_instances() {
        let g = graph(vec![GroupSpec::new("chain", 3)], vec![edge_explicit(0, 0, &[&[], &[0], &[1]])]);
        let deps = Deps::new(&g);
        assert_eq!(deps.remaining[0], [0, 1, 1]);
        assert_eq!(deps.links[0][0].dependents(&1, 3), [2]);
    }
}
