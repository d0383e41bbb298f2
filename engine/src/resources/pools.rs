//! [`Pools`]: one worker's resources and what of them is free — the
//! arithmetic both the scheduler's workers and [`super::Capacity::slots`] run.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::ir::Amount;

use super::pool::IndexedPool;
use super::request::{Names, Request};

/// A worker's pools: CPUs and GPUs as ids of one unit each, memory and
/// custom resources as sums.
#[derive(Debug, Clone)]
pub(crate) struct Pools {
    /// CPU ids.
    pub(crate) cpus: IndexedPool,
    /// GPU device ids.
    pub(crate) gpus: IndexedPool,
    /// Memory in bytes, in all and free.
    pub(crate) memory: u64,
    memory_free: u64,
    /// Totals and free amounts by interned custom index (missing = none).
    custom: Vec<u64>,
    custom_free: Vec<u64>,
}

impl Pools {
    /// Pools with everything free, interning the custom resource names.
    pub(crate) fn new(
        cpus: Vec<u32>,
        gpus: Vec<u32>,
        memory: u64,
        custom: &BTreeMap<String, Amount>,
        names: &mut Names,
    ) -> Self {
        let mut totals = Vec::new();
        for (name, amount) in custom {
            let i = names.intern(name);
            if totals.len() <= i {
                totals.resize(i + 1, 0);
            }
            totals[i] += amount.0;
        }
        Self {
            cpus: IndexedPool::new(cpus),
            gpus: IndexedPool::new(gpus),
            memory,
            memory_free: memory,
            custom_free: totals.clone(),
            custom: totals,
        }
    }

    /// Whether `request` fits what is free now.
    pub(crate) fn has_room(&self, request: &Request) -> bool {
        self.memory_free >= request.memory
            && self.cpus.fits(request.cpus)
            && self.gpus.fits(request.gpus)
            && request.custom.iter().all(|&(i, a)| self.custom_free.get(i).is_some_and(|&free| free >= a.0))
    }

    /// Takes `request` (which must fit), adding the CPU and GPU ids and the
    /// share of each taken to `cpus` and `gpus`.
    pub(crate) fn take(&mut self, request: &Request, cpus: &mut Vec<(u32, Amount)>, gpus: &mut Vec<(u32, Amount)>) {
        self.cpus.take(request.cpus, cpus);
        self.gpus.take(request.gpus, gpus);
        self.memory_free -= request.memory;
        for &(i, amount) in &request.custom {
            self.custom_free[i] -= amount.0;
        }
    }

    /// Takes `request` as [`Pools::take`] does, but on exactly the CPU and
    /// GPU ids named (see [`IndexedPool::take_ids`]); false, and nothing
    /// taken, unless `request` fits and those ids have room.
    pub(crate) fn take_ids(
        &mut self,
        request: &Request,
        ids: (&[u32], &[u32]),
        cpus: &mut Vec<(u32, Amount)>,
        gpus: &mut Vec<(u32, Amount)>,
    ) -> bool {
        let mut taken = Vec::new();
        if !self.has_room(request) || !self.cpus.take_ids(request.cpus, ids.0, &mut taken) {
            return false;
        }
        if !self.gpus.take_ids(request.gpus, ids.1, gpus) {
            self.cpus.give(&taken);
            return false;
        }
        cpus.extend(taken);
        self.memory_free -= request.memory;
        for &(i, amount) in &request.custom {
            self.custom_free[i] -= amount.0;
        }
        true
    }

    /// Gives back what [`Pools::take`] took for `request`.
    pub(crate) fn give(&mut self, request: &Request, cpus: &[(u32, Amount)], gpus: &[(u32, Amount)]) {
        self.cpus.give(cpus);
        self.gpus.give(gpus);
        self.memory_free = (self.memory_free + request.memory).min(self.memory);
        for &(i, amount) in &request.custom {
            self.custom_free[i] = (self.custom_free[i] + amount.0).min(self.custom[i]);
        }
    }

    /// Each custom resource these pools have any of, by name, with its total.
    pub(crate) fn custom_totals<'a>(&'a self, names: &'a Names) -> impl Iterator<Item = (&'a Arc<str>, Amount)> {
        self.custom.iter().enumerate().filter(|&(_, &a)| a > 0).map(|(i, &a)| (names.get(i), Amount(a)))
    }
}
