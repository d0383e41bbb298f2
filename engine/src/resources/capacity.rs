//! [`Capacity`]: what one worker has, and the one answer to "does this
//! request fit it, how many instances run side by side, and if none, what
//! is short?" — for `flow check`, the scheduler's unschedulable groups,
//! `flow explain` and an allocation queue's planner alike.
//!
//! The rules are the pools' (`pools.rs`): CPUs and GPUs are ids of one unit
//! each, a request's whole part takes whole ids and its fraction shares one
//! id; memory and custom resources are sums.

use std::collections::BTreeMap;

use crate::ir::{Amount, Resources};

use super::pools::Pools;
use super::request::{Names, Request};
use super::shortfall::Shortfall;

/// [`Capacity::slots`] counts at most this many instances: a worker that
/// would start more is said to start this many.
pub const MAX_SLOTS: u64 = 1 << 16;

/// What one worker has, when nothing runs on it. `None` is unknown — a
/// whole node before its worker joins, a resource `flow check` was not
/// told about — and limits nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Capacity {
    /// CPUs: ids of one unit each (a fraction only where `flow check --cpus` says so).
    pub cpus: Option<Amount>,
    /// GPUs: ids of one unit each, like CPUs.
    pub gpus: Option<Amount>,
    /// Memory in bytes.
    pub memory: Option<u64>,
    /// Custom resources by name; a name not listed is none.
    pub custom: Option<BTreeMap<String, Amount>>,
}

impl Capacity {
    /// Whether `request` fits this worker when nothing runs on it.
    pub fn fits(&self, request: &Resources) -> bool {
        self.shortfall(request).is_none()
    }

    /// The first resource `request` needs more of than this worker has
    /// (CPUs, GPUs, memory, then custom resources by name), if any.
    pub fn shortfall(&self, request: &Resources) -> Option<Shortfall> {
        if let Some(has) = self.cpus.filter(|&has| !ids_fit(request.cpus, has)) {
            return Some(Shortfall::Cpus { needs: request.cpus, largest: has });
        }
        if let Some(has) = self.gpus.filter(|&has| !ids_fit(request.gpus, has)) {
            return Some(Shortfall::Gpus { needs: request.gpus, largest: has });
        }
        if let Some(has) = self.memory.filter(|&has| request.memory > has) {
            return Some(Shortfall::Memory { needs: request.memory, largest: has });
        }
        let custom = self.custom.as_ref()?;
        request.custom.iter().find_map(|(name, &needs)| {
            let has = custom.get(name).copied().unwrap_or_default();
            (needs > has).then(|| Shortfall::Custom { name: name.clone(), needs, largest: has })
        })
    }

    /// The most of each resource any of `workers` has (unknown if any
    /// leaves it unknown); everything unknown for no workers.
    pub fn largest<'a>(workers: impl IntoIterator<Item = &'a Capacity>) -> Capacity {
        fn most<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
            Some(a?.max(b?))
        }
        let mut workers = workers.into_iter();
        let Some(first) = workers.next() else { return Capacity::default() };
        workers.fold(first.clone(), |most_yet, w| Capacity {
            cpus: most(most_yet.cpus, w.cpus),
            gpus: most(most_yet.gpus, w.gpus),
            memory: most(most_yet.memory, w.memory),
            custom: most_yet.custom.zip(w.custom.as_ref()).map(|(mut custom, w)| {
                for (name, &has) in w {
                    let entry = custom.entry(name.clone()).or_default();
                    *entry = has.max(*entry);
                }
                custom
            }),
        })
    }

    /// What of `request` not even the largest of `workers` has; when each
    /// resource fits some worker but none has them all,
    /// [`Shortfall::Combination`].
    pub fn shortfall_among<'a>(workers: impl IntoIterator<Item = &'a Capacity>, request: &Resources) -> Shortfall {
        Capacity::largest(workers).shortfall(request).unwrap_or(Shortfall::Combination)
    }

    /// How many instances the scheduler starts side by side on an empty
    /// worker of this capacity, choosing for each the first of `variants`
    /// that fits what is left, as it does: `Some(0)` when no variant fits,
    /// `None` when one that fits takes nothing (no limit). A resource a
    /// fitting variant asks for and this capacity leaves unknown counts as
    /// room for one instance; a fraction of a CPU or GPU adds no room.
    /// Counting stops at [`MAX_SLOTS`].
    pub fn slots(&self, variants: &[Resources]) -> Option<u64> {
        let fitting: Vec<&Resources> = variants.iter().filter(|r| self.fits(r)).collect();
        if fitting.is_empty() {
            return Some(0);
        }
        if fitting.iter().any(|r| takes_nothing(r)) {
            return None;
        }
        if fitting.iter().any(|r| self.needs_unknown(r)) {
            return Some(1);
        }
        let mut names = Names::default();
        let requests: Vec<Request> = fitting.iter().map(|r| Request::new(r, &mut names)).collect();
        let ids = |a: Option<Amount>| (0..a.map_or(0, |a| a.0 / Amount::SCALE) as u32).collect();
        let none = BTreeMap::new();
        let custom = self.custom.as_ref().unwrap_or(&none);
        let mut pools = Pools::new(ids(self.cpus), ids(self.gpus), self.memory.unwrap_or(0), custom, &mut names);
        let (mut cpus, mut gpus) = (Vec::new(), Vec::new());
        let mut started = 0;
        // Taking only shrinks what is free, so a variant that no longer fits never will.
        for request in &requests {
            while started < MAX_SLOTS && pools.has_room(request) {
                cpus.clear();
                gpus.clear();
                pools.take(request, &mut cpus, &mut gpus);
                started += 1;
            }
        }
        Some(started)
    }

    /// Whether `request` asks for a resource this capacity leaves unknown.
    fn needs_unknown(&self, request: &Resources) -> bool {
        (self.cpus.is_none() && request.cpus.0 > 0)
            || (self.gpus.is_none() && request.gpus.0 > 0)
            || (self.memory.is_none() && request.memory > 0)
            || (self.custom.is_none() && request.custom.values().any(|a| a.0 > 0))
    }
}

/// Whether `request` takes nothing from any pool.
fn takes_nothing(request: &Resources) -> bool {
    request.cpus.0 == 0 && request.gpus.0 == 0 && request.memory == 0 && request.custom.values().all(|a| a.0 == 0)
}

/// Whether `needs` can be taken from an idle indexed pool of `has`: whole
/// ids for the whole part and one more id, or what is left of a partial
/// id, for the fraction.
fn ids_fit(needs: Amount, has: Amount) -> bool {
    let one = Amount::SCALE;
    let (whole, frac) = (needs.0 / one, needs.0 % one);
    let (ids, part) = (has.0 / one, has.0 % one);
    if frac == 0 { whole <= ids } else { whole < ids || (whole == ids && frac <= part) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn amount(units: f64) -> Amount {
        Amount::from_f64(units).expect("valid amount")
    }

    fn worker(cpus: u64, gpus: u64, memory: u64) -> Capacity {
        Capacity {
            cpus: Some(Amount::whole(cpus)),
            gpus: Some(Amount::whole(gpus)),
            memory: Some(memory),
            custom: Some(BTreeMap::new()),
        }
    }

    fn request(cpus: f64, gpus: f64, memory: u64) -> Resources {
        Resources { cpus: amount(cpus), gpus: amount(gpus), memory, ..Resources::default() }
    }

    #[test]
    fn fits_by_ids_memory_and_custom_resources() {
        let w = worker(2, 1, 1 << 30);
        assert!(w.fits(&request(2.0, 1.0, 1 << 30)));
        assert!(w.fits(&request(1.5, 0.25, 0)));
        assert!(!w.fits(&request(2.5, 0.0, 0)), "2.5 cpus touch 3 ids");
        assert!(!w.fits(&request(1.0, 0.0, 2 << 30)));
        let mut fpga = request(1.0, 0.0, 0);
        fpga.custom.insert("fpga".into(), Amount::whole(1));
        assert!(!w.fits(&fpga));
        let with_fpga = Capacity { custom: Some([("fpga".into(), Amount::whole(2))].into()), ..w.clone() };
        assert!(with_fpga.fits(&fpga));
        fpga.custom.insert("license".into(), Amount::ZERO);
        assert!(with_fpga.fits(&fpga), "a zero request needs nothing");
    }

    #[test]
    fn what_is_not_described_limits_nothing() {
        let gpus_only = Capacity { gpus: Some(amount(0.5)), ..Capacity::default() };
        let mut big = request(64.0, 0.5, 1 << 40);
        big.custom.insert("fpga".into(), Amount::whole(9));
        assert!(gpus_only.fits(&big), "half a gpu holds half a gpu");
        big.gpus = amount(0.75);
        assert_eq!(gpus_only.shortfall(&big), Some(Shortfall::Gpus { needs: amount(0.75), largest: amount(0.5) }));
        let one_and_a_half = Capacity { cpus: Some(amount(1.5)), ..Capacity::default() };
        assert!(one_and_a_half.fits(&request(1.5, 0.0, 0)) && one_and_a_half.fits(&request(0.75, 0.0, 0)));
        assert!(!one_and_a_half.fits(&request(1.75, 0.0, 0)) && !one_and_a_half.fits(&request(2.0, 0.0, 0)));
    }

    #[test]
    fn the_first_resource_no_worker_has_is_named() {
        let workers = [worker(2, 0, 4 << 30), worker(1, 1, 8 << 30)];
        let short = |r: &Resources| Capacity::shortfall_among(&workers, r);
        assert_eq!(
            short(&request(4.0, 0.0, 0)),
            Shortfall::Cpus { needs: Amount::whole(4), largest: Amount::whole(2) }
        );
        assert_eq!(
            short(&request(1.0, 2.0, 0)),
            Shortfall::Gpus { needs: Amount::whole(2), largest: Amount::whole(1) }
        );
        assert_eq!(short(&request(1.0, 0.0, 16 << 30)), Shortfall::Memory { needs: 16 << 30, largest: 8 << 30 });
        let mut fpga = request(1.0, 0.0, 0);
        fpga.custom.insert("fpga".into(), Amount::whole(1));
        assert_eq!(
            short(&fpga),
            Shortfall::Custom { name: "fpga".into(), needs: Amount::whole(1), largest: Amount::ZERO }
        );
        assert_eq!(short(&request(2.0, 1.0, 0)), Shortfall::Combination);
    }

    /// Issue 13: the planner counted 5 instances of `cpus = 0.75` on a
    /// 4-CPU worker, where the scheduler starts 4 (a fraction does not span
    /// two CPU ids), so a queue asked for too few workers.
    #[test]
    fn fractions_are_counted_per_cpu_id() {
        let w = worker(4, 0, 0);
        assert_eq!(w.slots(&[request(0.75, 0.0, 0)]), Some(4));
        assert_eq!(w.slots(&[request(0.25, 0.0, 0)]), Some(16));
        assert_eq!(w.slots(&[request(1.4, 0.0, 0)]), Some(2), "two whole ids and two shares of 0.4");
        assert_eq!(worker(7, 0, 0).slots(&[request(1.4, 0.0, 0)]), Some(4));
    }

    #[test]
    fn slots_try_the_variants_in_order_like_the_scheduler() {
        let w = worker(4, 1, 0);
        assert_eq!(w.slots(&[request(1.0, 1.0, 0), request(2.0, 0.0, 0)]), Some(2), "one on the gpu, one of 2 cpus");
        assert_eq!(w.slots(&[request(8.0, 0.0, 0)]), Some(0));
        assert_eq!(w.slots(&[request(0.0, 0.0, 0)]), None, "a request for nothing has no limit");
        let whole_node = Capacity { cpus: None, gpus: None, ..w };
        assert_eq!(whole_node.slots(&[request(1.0, 0.0, 0)]), Some(1), "an unknown size holds one");
        assert_eq!(worker(1, 0, 0).slots(&[request(0.0001, 0.0, 0)]), Some(10_000));
        assert_eq!(worker(8, 0, 0).slots(&[request(0.0001, 0.0, 0)]), Some(MAX_SLOTS));
    }
}
