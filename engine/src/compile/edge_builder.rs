//! [`EdgeBuilder`]: instance pairs collected for one pair of groups, then
//! compressed into the smallest [`EdgeKind`] that says the same.

use std::collections::BTreeMap;

use crate::ir::{Edge, EdgeKind, EdgeOn, EdgeOrigin, GroupId};

/// Dependencies found between instances, keyed by (from, to, origin, on).
#[derive(Default)]
pub struct EdgeBuilder {
    edges: BTreeMap<(u32, u32, EdgeOrigin, EdgeOn), Pairs>,
}

#[derive(Default)]
struct Pairs {
    /// (to instance, from instance).
    pairs: Vec<(u64, u64)>,
    /// `to` instances that wait for every `from` instance.
    whole: Vec<u64>,
}

impl EdgeBuilder {
    /// Instance `to_inst` of `to` waits for instance `from_inst` of `from`.
    pub fn add(&mut self, from: u32, from_inst: u64, to: u32, to_inst: u64, origin: EdgeOrigin) {
        self.add_on(from, from_inst, to, to_inst, origin, EdgeOn::Success);
    }

    /// Instance `to_inst` of `to` waits for instance `from_inst` of `from`
    /// to end as `on` says.
    pub fn add_on(&mut self, from: u32, from_inst: u64, to: u32, to_inst: u64, origin: EdgeOrigin, on: EdgeOn) {
        self.edges.entry((from, to, origin, on)).or_default().pairs.push((to_inst, from_inst));
    }

    /// Instance `to_inst` of `to` waits for every instance of `from`.
    pub fn add_whole(&mut self, from: u32, to: u32, to_inst: u64, origin: EdgeOrigin) {
        self.add_whole_on(from, to, to_inst, origin, EdgeOn::Success);
    }

    /// Instance `to_inst` of `to` waits for every instance of `from` to end as `on` says.
    pub fn add_whole_on(&mut self, from: u32, to: u32, to_inst: u64, origin: EdgeOrigin, on: EdgeOn) {
        let whole = &mut self.edges.entry((from, to, origin, on)).or_default().whole;
        if whole.last() != Some(&to_inst) {
            whole.push(to_inst);
        }
    }

    /// The edges, each in its most compact form, given each group's
    /// instance count. A task that waits for another's failure (or for it
    /// whatever happened) also waits for the files it reads from that task
    /// whatever happened: a file edge between the same two tasks does not
    /// cancel it.
    pub fn finish(self, counts: &[u64]) -> Vec<Edge> {
        let status: BTreeMap<(u32, u32), EdgeOn> = self
            .edges
            .keys()
            .filter(|&&(_, _, origin, on)| origin == EdgeOrigin::After && on != EdgeOn::Success)
            .map(|&(from, to, _, _)| ((from, to), EdgeOn::Always))
            .collect();
        let mut merged: BTreeMap<(u32, u32, EdgeOrigin, EdgeOn), Pairs> = BTreeMap::new();
        for ((from, to, origin, on), p) in self.edges {
            let on = match status.get(&(from, to)) {
                Some(&always) if origin == EdgeOrigin::Files => always,
                _ => on,
            };
            let into = merged.entry((from, to, origin, on)).or_default();
            into.pairs.extend(p.pairs);
            into.whole.extend(p.whole);
        }
        merged
            .into_iter()
            .map(|((from, to, origin, on), p)| {
                let kind = compress(p, counts[from as usize], counts[to as usize]);
                Edge { from: GroupId(from), to: GroupId(to), kind, origin, on }
            })
            .collect()
    }
}

fn compress(mut p: Pairs, n_from: u64, n_to: u64) -> EdgeKind {
    p.whole.sort_unstable();
    p.whole.dedup();
    if p.whole.len() as u64 == n_to {
        return EdgeKind::All;
    }
    for &to in &p.whole {
        p.pairs.extend((0..n_from).map(|f| (to, f)));
    }
    p.pairs.sort_unstable();
    p.pairs.dedup();
    if n_from == n_to
        && p.pairs.len() as u64 == n_to
        && p.pairs.iter().enumerate().all(|(i, &(t, f))| t == i as u64 && f == i as u64)
    {
        return EdgeKind::ElementWise;
    }
    let mut offsets = Vec::with_capacity(n_to as usize + 1);
    let mut sources = Vec::with_capacity(p.pairs.len());
    let mut next = 0;
    for to in 0..n_to {
        offsets.push(sources.len() as u64);
        while next < p.pairs.len() && p.pairs[next].0 == to {
            sources.push(p.pairs[next].1);
            next += 1;
        }
    }
    offsets.push(sources.len() as u64);
    if sources.len() as u64 == n_from * n_to {
        return EdgeKind::All;
    }
    EdgeKind::Explicit { offsets, sources }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(b: EdgeBuilder, counts: &[u64]) -> EdgeKind {
        b.finish(counts).remove(0).kind
    }

    #[test]
    fn compresses_to_the_smallest_kind() {
        let mut b = EdgeBuilder::default();
        for i in 0..3 {
            b.add(0, i, 1, i, EdgeOrigin::Files);
        }
        assert_eq!(one(b, &[3, 3]), EdgeKind::ElementWise);

        let mut b = EdgeBuilder::default();
        b.add_whole(0, 1, 0, EdgeOrigin::After);
        assert_eq!(one(b, &[5, 1]), EdgeKind::All);

        let mut b = EdgeBuilder::default();
        for f in 0..4 {
            b.add(0, f, 1, 0, EdgeOrigin::Files);
        }
        assert_eq!(one(b, &[4, 1]), EdgeKind::All);

        let mut b = EdgeBuilder::default();
        b.add(0, 1, 1, 0, EdgeOrigin::After);
        b.add(0, 0, 1, 1, EdgeOrigin::After);
        assert_eq!(one(b, &[2, 2]), EdgeKind::Explicit { offsets: vec![0, 1, 2], sources: vec![1, 0] });
    }
}
