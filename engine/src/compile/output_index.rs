//! [`OutputIndex`]: every rendered output file name and its producer,
//! interned in one string pool with a hash table of indices, so a million
//! outputs cost one buffer rather than a million allocations.

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

use crate::ir::StrPool;

/// A file name's producer: (group, instance).
pub type Producer = (u32, u64);

/// Output file names → producer.
#[derive(Default)]
pub struct OutputIndex {
    paths: StrPool,
    owners: Vec<Producer>,
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

impl OutputIndex {
    /// Records `producer` for `path`; returns the earlier producer if the path has one.
    pub fn insert(&mut self, path: &str, producer: Producer) -> Option<Producer> {
        let hash = self.hasher.hash_one(path);
        let Self { paths, owners, table, hasher } = self;
        let entry = table.entry(
            hash,
            |&i| paths.get(i as usize) == Some(path),
            |&i| hasher.hash_one(paths.get(i as usize).unwrap_or_default()),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(e) => Some(owners[*e.get() as usize]),
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert(paths.len() as u32);
                paths.push(path);
                owners.push(producer);
                None
            }
        }
    }

    /// The producer of `path`.
    pub fn get(&self, path: &str) -> Option<Producer> {
        let hash = self.hasher.hash_one(path);
        self.table.find(hash, |&i| self.paths.get(i as usize) == Some(path)).map(|&i| self.owners[i as usize])
    }

    /// Every output and its producer.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Producer)> {
        self.paths.iter().zip(self.owners.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_producer_wins() {
        let mut index = OutputIndex::default();
        assert_eq!(index.insert("a/1", (0, 1)), None);
        assert_eq!(index.insert("a/2", (0, 2)), None);
        assert_eq!(index.insert("a/1", (1, 0)), Some((0, 1)));
        assert_eq!(index.get("a/2"), Some((0, 2)));
        assert_eq!(index.get("a/3"), None);
        assert_eq!(index.iter().count(), 2);
    }
}
