//! [`Placements`]: what the driver remembers of each running attempt — its
//! variant and the CPU and GPU ids it was given — to journal them, with the
//! usage its worker measured and the worker's host and cluster job, as the
//! attempt's [`AttemptMetrics`] when it ends.

use std::collections::HashMap;

use super::links::Links;
use crate::ir::TaskId;
use crate::log::{AttemptMetrics, ProcessUsage};
use crate::runtime::core::{Allocation, WorkerId};

/// The placement of every running attempt.
#[derive(Default)]
pub struct Placements(HashMap<TaskId, AttemptMetrics>);

impl Placements {
    /// `task` starts with `alloc`.
    pub fn start(&mut self, task: TaskId, alloc: &Allocation) {
        let ids = |ids: &[(u32, _)]| ids.iter().map(|&(id, _)| id).collect();
        let placement = AttemptMetrics {
            variant: alloc.variant as u32,
            cpus: ids(&alloc.cpus),
            gpus: ids(&alloc.gpus),
            ..AttemptMetrics::default()
        };
        self.0.insert(task, placement);
    }

    /// `task` ended on `worker`: its metrics, if its process ran (`usage`).
    pub fn end(
        &mut self,
        task: TaskId,
        worker: WorkerId,
        usage: Option<ProcessUsage>,
        links: &Links,
    ) -> Option<Box<AttemptMetrics>> {
        let placement = self.0.remove(&task)?;
        let (host, allocation) = links.place(worker);
        Some(Box::new(AttemptMetrics { usage: usage?, host, allocation, ..placement }))
    }

    /// `task` ended without a report (its worker was lost).
    pub fn forget(&mut self, task: TaskId) {
        self.0.remove(&task);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Amount, GroupId};

    #[test]
    fn an_attempt_that_ran_ends_with_its_placement_and_usage() {
        let (links, task) = (Links::default(), TaskId::new(GroupId(0), 7));
        let alloc = Allocation {
            variant: 1,
            cpus: vec![(2, Amount(10_000)), (3, Amount(10_000))],
            gpus: vec![(0, Amount(5_000))],
            ..Allocation::default()
        };
        let usage = ProcessUsage { max_rss: 1 << 20, ..ProcessUsage::default() };
        let mut placements = Placements::default();
        placements.start(task, &alloc);
        let metrics = placements.end(task, WorkerId(0), Some(usage), &links).expect("metrics");
        assert_eq!((metrics.variant, &metrics.cpus[..], &metrics.gpus[..]), (1, &[2, 3][..], &[0][..]));
        assert_eq!((metrics.usage, &metrics.host), (usage, &crate::host::hostname()));
        assert_eq!(placements.end(task, WorkerId(0), Some(usage), &links), None, "ended once");

        // No process ran (it could not start): no metrics.
        placements.start(task, &alloc);
        assert_eq!(placements.end(task, WorkerId(0), None, &links), None);
        placements.start(task, &alloc);
        placements.forget(task);
        assert!(placements.0.is_empty());
    }
}
