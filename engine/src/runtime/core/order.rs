//! [`Order`]: the order in which matching visits groups — priority, then
//! b-level, then group id — and the set of groups with a ready instance,
//! kept as a bitset over that order so finding the next one is a word scan.

use crate::ir::Graph;

/// Groups ranked for matching, and which of them have ready instances.
#[derive(Debug, Clone, Default)]
pub(super) struct Order {
    /// `groups[rank]` is the group at that rank.
    groups: Vec<usize>,
    /// `rank[group]` is the group's rank.
    rank: Vec<usize>,
    /// Bit `rank` set: that group has a ready instance.
    active: Vec<u64>,
}

impl Order {
    /// Ranks the groups of `graph` by (priority desc, b-level desc, id).
    pub(super) fn new(graph: &Graph) -> Self {
        let levels = b_levels(graph);
        let mut groups: Vec<usize> = (0..graph.groups.len()).collect();
        groups.sort_by_key(|&g| (std::cmp::Reverse(graph.groups[g].priority), std::cmp::Reverse(levels[g]), g));
        let mut rank = vec![0; groups.len()];
        for (r, &g) in groups.iter().enumerate() {
            rank[g] = r;
        }
        Self { active: vec![0; groups.len().div_ceil(64)], groups, rank }
    }

    /// Marks `group` as having ready instances or not; returns whether it
    /// just became active.
    pub(super) fn set_active(&mut self, group: usize, active: bool) -> bool {
        let r = self.rank[group];
        let (word, bit) = (r / 64, 1u64 << (r % 64));
        let was = self.active[word] & bit != 0;
        if active {
            self.active[word] |= bit;
        } else {
            self.active[word] &= !bit;
        }
        active && !was
    }

    /// The first active group at rank `from` or later, and its rank.
    pub(super) fn next_active(&self, from: usize) -> Option<(usize, usize)> {
        let mut word = from / 64;
        let mut bits = self.active.get(word)? & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                let r = word * 64 + bits.trailing_zeros() as usize;
                return Some((self.groups[r], r));
            }
            word += 1;
            bits = *self.active.get(word)?;
        }
    }

    /// Whether no group has ready instances.
    pub(super) fn is_idle(&self) -> bool {
        self.active.iter().all(|&w| w == 0)
    }
}

/// The b-level of each group: the number of groups on the longest path from
/// it to a sink of the group graph (a sink has 1). Edges go forward, so one
/// backward pass suffices; self-edges do not count.
pub(super) fn b_levels(graph: &Graph) -> Vec<u32> {
    let mut levels = vec![1u32; graph.groups.len()];
    let mut edges: Vec<(usize, usize)> =
        graph.edges.iter().map(|e| (e.from.index(), e.to.index())).filter(|(f, t)| f < t).collect();
    edges.sort_unstable_by(|a, b| b.cmp(a));
    for (from, to) in edges {
        levels[from] = levels[from].max(levels[to] + 1);
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::core::tests::env::{GroupSpec, edge_all, graph};

    #[test]
    fn ranks_by_priority_then_b_level_then_id() {
        // 0 → 1 → 2, and 3 alone with priority 1.
        let g = graph(
            vec![
                GroupSpec::new("a", 1),
                GroupSpec::new("b", 1),
                GroupSpec::new("c", 1),
                GroupSpec::new("d", 1).priority(1),
            ],
            vec![edge_all(0, 1), edge_all(1, 2)],
        );
        assert_eq!(b_levels(&g), [3, 2, 1, 1]);
        let mut order = Order::new(&g);
        assert!(order.is_idle());
        for group in 0..4 {
            assert!(order.set_active(group, true));
        }
        assert!(!order.set_active(0, true), "already active");
        let visit: Vec<usize> =
            std::iter::successors(order.next_active(0), |&(_, r)| order.next_active(r + 1)).map(|(g, _)| g).collect();
        assert_eq!(visit, [3, 0, 1, 2]);
        order.set_active(3, false);
        assert_eq!(order.next_active(0), Some((0, 1)));
    }

    #[test]
    fn finds_active_groups_past_the_first_word() {
        let g = graph((0..200).map(|i| GroupSpec::new(&format!("g{i}"), 1)).collect(), vec![]);
        let mut order = Order::new(&g);
        order.set_active(130, true);
        assert_eq!(order.next_active(0), Some((130, 130)));
        assert_eq!(order.next_active(131), None);
    }
}
