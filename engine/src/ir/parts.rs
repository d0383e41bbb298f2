//! [`Parts`]: the instances of a per-instance expansion ([`super::Domain::Nested`]),
//! known part by part as the instances of the parent group finish.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::StrPool;

/// The parts of a nested group known so far, in the order they became
/// known: instance positions are given out in that order, so the label
/// (`refine[12.3]`), not the position, names an instance across runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parts {
    list: Vec<Part>,
    items: StrPool,
}

/// The instances one parent instance's file gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// The position of the parent instance.
    pub outer: u64,
    /// The parent instance's `index`: the first number of the label.
    pub index: i64,
    /// The position of the part's first instance in the group.
    pub start: u64,
}

impl Parts {
    /// Number of instances known.
    pub fn instances(&self) -> u64 {
        self.items.len() as u64
    }

    /// The parts known, in order.
    pub fn list(&self) -> &[Part] {
        &self.list
    }

    /// Adds the part of parent instance `outer` (whose `index` is `index`)
    /// with `items`; returns the positions its instances got. A part that
    /// is known already is not added again (empty range).
    pub fn push<'a>(&mut self, outer: u64, index: i64, items: impl IntoIterator<Item = &'a str>) -> Range<u64> {
        let start = self.instances();
        if self.part(outer).is_some() {
            return start..start;
        }
        self.list.push(Part { outer, index, start });
        items.into_iter().for_each(|item| self.items.push(item));
        start..self.instances()
    }

    /// The part of parent instance `outer`, if known.
    pub fn part(&self, outer: u64) -> Option<&Part> {
        self.list.iter().rev().find(|p| p.outer == outer)
    }

    /// The part holding instance `i`, and `i`'s position in it (its `subindex`).
    pub fn locate(&self, i: u64) -> Option<(&Part, u64)> {
        let k = self.list.partition_point(|p| p.start <= i).checked_sub(1)?;
        let part = &self.list[k];
        (i < self.instances()).then(|| (part, i - part.start))
    }

    /// The positions of the instances of the part whose `index` is `index`.
    pub fn positions(&self, index: i64) -> Option<Range<u64>> {
        let k = self.list.iter().position(|p| p.index == index)?;
        let end = self.list.get(k + 1).map_or(self.instances(), |p| p.start);
        Some(self.list[k].start..end)
    }

    /// The item of instance `i`.
    pub fn item(&self, i: u64) -> Option<&str> {
        self.items.get(i as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_numbered_in_the_order_they_come() {
        let mut parts = Parts::default();
        assert_eq!(parts.push(4, 40, ["a", "b"]), 0..2);
        assert_eq!(parts.push(1, 10, []), 2..2);
        assert_eq!(parts.push(0, 0, ["c"]), 2..3);
        assert_eq!(parts.push(4, 40, ["again"]), 3..3);
        assert_eq!(parts.instances(), 3);
        assert_eq!(parts.locate(1).map(|(p, sub)| (p.index, sub)), Some((40, 1)));
        assert_eq!(parts.locate(2).map(|(p, sub)| (p.index, sub)), Some((0, 0)));
        assert_eq!(parts.locate(3), None);
        assert_eq!(parts.positions(40), Some(0..2));
        assert_eq!(parts.positions(10), Some(2..2));
        assert_eq!(parts.positions(7), None);
        assert_eq!(parts.item(2), Some("c"));
    }
}
