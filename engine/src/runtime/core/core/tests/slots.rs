//! [`Capacity::slots`] counts what the core starts: for random requests
//! and worker shapes, the instances one empty worker takes at once.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::env::{GroupSpec, TestEnv};
use crate::ir::{Amount, Resources};
use crate::resources::WorkerShape;

const MIB: u64 = 1 << 20;

/// CPUs: whole, a fraction, or a whole number and a fraction (at least 0.05,
/// so a worker holds a few hundred instances at most).
fn cpus() -> impl Strategy<Value = Amount> {
    prop_oneof![(1..=4u64).prop_map(Amount::whole), (500..=30_000u64).prop_map(|n| Amount(n / 100 * 100))]
}

/// GPUs: none, whole, or a fraction of one device.
fn gpus() -> impl Strategy<Value = Amount> {
    prop_oneof![Just(Amount::ZERO), (1..=2u64).prop_map(Amount::whole), (1..=9u64).prop_map(|n| Amount(n * 1000))]
}

fn request() -> impl Strategy<Value = Resources> {
    (cpus(), gpus(), 0..=4u64, 0..=4u64).prop_map(|(cpus, gpus, memory, fpga)| Resources {
        cpus,
        gpus,
        memory: memory * 512 * MIB,
        custom: [("fpga".to_owned(), Amount(fpga * 5000))].into(),
        time_request: None,
    })
}

fn worker() -> impl Strategy<Value = WorkerShape> {
    (1..=8u32, 0..=3u32, 0..=8u64, 0..=6u64, any::<bool>()).prop_map(|(cpus, gpus, memory, fpga, custom)| WorkerShape {
        cpus: (0..cpus).collect(),
        gpus: (0..gpus).collect(),
        memory: memory * 512 * MIB,
        custom: if custom { [("fpga".to_owned(), Amount(fpga * 5000))].into() } else { BTreeMap::new() },
    })
}

proptest! {
    #[test]
    fn slots_count_what_the_core_starts(variants in prop::collection::vec(request(), 1..=3), w in worker()) {
        let slots = w.capacity().slots(&variants);
        let mut env = TestEnv::new(vec![GroupSpec::new("g", 1_000).variants(variants)], vec![]);
        env.core.add_worker(w, None);
        let started = env.schedule().len() as u64;
        prop_assert_eq!(slots, Some(started));
    }
}
