//! [`WorkerShape`]: what one worker has — its CPU and GPU ids, memory and
//! custom resources — the one description the scheduler core, a remote
//! worker's offer, `workers.json` and this machine's detection share.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ir::Amount;

use super::capacity::Capacity;

/// What one worker has, by id: a worker's [`Capacity`] is its totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerShape {
    /// CPU ids, distinct (each one unit; fractions of an id may be shared).
    pub cpus: Vec<u32>,
    /// GPU device ids, distinct (each one unit, like CPUs).
    pub gpus: Vec<u32>,
    /// Memory in bytes.
    pub memory: u64,
    /// Custom resources by name (sums); a name not listed is none.
    #[serde(default)]
    pub custom: BTreeMap<String, Amount>,
}

impl WorkerShape {
    /// What this worker has in all, for fitting requests to it.
    pub fn capacity(&self) -> Capacity {
        Capacity {
            cpus: Some(Amount::whole(self.cpus.len() as u64)),
            gpus: Some(Amount::whole(self.gpus.len() as u64)),
            memory: Some(self.memory),
            custom: Some(self.custom.clone()),
        }
    }

    /// A worker of `cpus` and `gpus` ids numbered from 0, for a file that
    /// records how many a worker has but not which.
    pub fn counted(cpus: usize, gpus: usize, memory: u64, custom: BTreeMap<String, Amount>) -> Self {
        let ids = |n: usize| (0..n as u32).collect();
        Self { cpus: ids(cpus), gpus: ids(gpus), memory, custom }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_counts_the_ids() {
        let shape = WorkerShape {
            cpus: vec![2, 5],
            gpus: vec![7],
            memory: 1 << 30,
            custom: [("fpga".to_owned(), Amount::whole(1))].into(),
        };
        let capacity = shape.capacity();
        assert_eq!((capacity.cpus, capacity.gpus), (Some(Amount::whole(2)), Some(Amount::whole(1))));
        assert_eq!(capacity.custom.as_ref().map(BTreeMap::len), Some(1));
        assert_eq!(WorkerShape::counted(2, 1, 1 << 30, shape.custom.clone()).capacity(), capacity);
    }
}
