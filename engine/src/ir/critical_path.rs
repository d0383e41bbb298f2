//! [`Graph::critical_path`]: the longest chain of instances, in tasks.
//! A stage whose instances are known only at run time counts as one
//! instance that waits for every instance it depends on: it is on the
//! chain, however many instances it turns out to have.

use super::{EdgeKind, Graph, GroupId};

/// The longest dependency chain of a graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriticalPath {
    /// Instances on the chain.
    pub length: u64,
    /// Groups the chain passes through, first to last (a group may repeat
    /// when it waits on its own instances, and is listed once per run).
    pub groups: Vec<GroupId>,
}

impl Graph {
    /// The longest chain of instances, computed per instance in one pass
    /// over the groups (which are in topological order).
    pub fn critical_path(&self) -> CriticalPath {
        // A dynamic stage not yet expanded stands for one instance.
        let unknown = |g: usize| self.groups[g].count == 0 && self.is_dynamic(GroupId(g as u32));
        let counts: Vec<u64> =
            (0..self.groups.len()).map(|g| if unknown(g) { 1 } else { self.groups[g].count }).collect();
        // depth[g][i]: instances on the longest chain ending at instance i of g;
        // via[g][i]: the group the chain came from.
        let mut depth: Vec<Vec<u64>> = counts.iter().map(|&n| vec![1; n as usize]).collect();
        let mut via: Vec<Vec<Option<(GroupId, u64)>>> = counts.iter().map(|&n| vec![None; n as usize]).collect();
        for (g, &count) in counts.iter().enumerate() {
            let incoming: Vec<_> = self.edges.iter().filter(|e| e.to.index() == g).collect();
            // Groups are in topological order, so every other source group comes before `g`.
            let (before, rest) = depth.split_at_mut(g);
            let mine = &mut rest[0];
            for e in incoming.iter().filter(|e| e.from.index() < g) {
                let from = &before[e.from.index()];
                let best = from.iter().enumerate().max_by_key(|(_, d)| **d).map(|(i, d)| (i as u64, *d));
                for i in 0..count {
                    let candidate = if unknown(g) || e.kind == EdgeKind::All {
                        best
                    } else {
                        e.kind.sources(i, from.len() as u64).map(|s| (s, from[s as usize])).max_by_key(|(_, d)| *d)
                    };
                    if let Some((s, d)) = candidate
                        && d + 1 > mine[i as usize]
                    {
                        mine[i as usize] = d + 1;
                        via[g][i as usize] = Some((e.from, s));
                    }
                }
            }
            if let Some(e) = incoming.iter().find(|e| e.from.index() == g && !unknown(g)) {
                self.relax_self(g, &e.kind, &mut depth[g], &mut via[g]);
            }
        }
        let end = depth
            .iter()
            .enumerate()
            .flat_map(|(g, d)| d.iter().enumerate().map(move |(i, &d)| (d, g, i as u64)))
            .max_by_key(|&(d, g, i)| (d, std::cmp::Reverse((g, i))));
        let Some((length, g, i)) = end else { return CriticalPath { length: 0, groups: Vec::new() } };
        let mut groups = vec![GroupId(g as u32)];
        let mut at = (GroupId(g as u32), i);
        while let Some(prev) = via[at.0.index()][at.1 as usize] {
            if groups.last() != Some(&prev.0) {
                groups.push(prev.0);
            }
            at = prev;
        }
        groups.reverse();
        CriticalPath { length, groups }
    }

    /// Longest chains inside a group that waits on its own instances
    /// (acyclic, checked by the compiler): relax in dependency order.
    fn relax_self(&self, g: usize, kind: &EdgeKind, depth: &mut [u64], via: &mut [Option<(GroupId, u64)>]) {
        let n = depth.len();
        let mut indegree: Vec<usize> = (0..n).map(|i| kind.sources(i as u64, n as u64).count()).collect();
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
        for to in 0..n {
            for s in kind.sources(to as u64, n as u64) {
                dependents[s as usize].push(to);
            }
        }
        let mut ready: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
        while let Some(i) = ready.pop() {
            for &d in &dependents[i] {
                if depth[i] + 1 > depth[d] {
                    depth[d] = depth[i] + 1;
                    via[d] = Some((GroupId(g as u32), i as u64));
                }
                indegree[d] -= 1;
                if indegree[d] == 0 {
                    ready.push(d);
                }
            }
        }
    }
}
