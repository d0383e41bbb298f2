//! [`metrics`]: the journaled [`AttemptMetrics`] of an attempt whose
//! process ran — the usage its worker measured, with its variant, the CPU
//! and GPU ids it was given (what the core holds for it until it ends) and
//! the worker's host and cluster job.

use crate::log::{AttemptMetrics, ProcessUsage};
use crate::runtime::coordinator::workers::links::Links;
use crate::runtime::core::{Allocation, WorkerId};

/// The metrics of an attempt whose process ran with `alloc` on `worker`
/// and used `usage`.
pub fn metrics(alloc: &Allocation, worker: WorkerId, usage: ProcessUsage, links: &Links) -> Box<AttemptMetrics> {
    let ids = |ids: &[(u32, _)]| ids.iter().map(|&(id, _)| id).collect();
    let (host, allocation) = links.place(worker);
    Box::new(AttemptMetrics {
        usage,
        variant: alloc.variant as u32,
        cpus: ids(&alloc.cpus),
        gpus: ids(&alloc.gpus),
        host,
        allocation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Amount;

    #[test]
    fn an_attempt_that_ran_ends_with_its_placement_and_usage() {
        let links = Links::default();
        let alloc = Allocation {
            variant: 1,
            cpus: vec![(2, Amount(10_000)), (3, Amount(10_000))],
            gpus: vec![(0, Amount(5_000))],
            ..Allocation::default()
        };
        let usage = ProcessUsage { max_rss: 1 << 20, ..ProcessUsage::default() };
        let ran = metrics(&alloc, WorkerId(0), usage, &links);
        assert_eq!((ran.variant, &ran.cpus[..], &ran.gpus[..]), (1, &[2, 3][..], &[0][..]));
        assert_eq!((ran.usage, &ran.host), (usage, &crate::host::hostname()));
    }
}
