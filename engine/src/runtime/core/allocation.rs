//! [`Allocation`]: the resources a started task was given.

use std::sync::Arc;

use crate::ir::Amount;

use super::worker_id::WorkerId;

/// What a task got on its worker: the driver turns it into `FLOW_*`
/// variables (CPU ids, GPU ids, …) and CPU pinning.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allocation {
    /// Index of the chosen variant in [`crate::ir::Group::variants`].
    pub variant: usize,
    /// CPU ids and the share of each (one unit, or a fraction of a shared id).
    pub cpus: Vec<(u32, Amount)>,
    /// GPU device ids and the share of each.
    pub gpus: Vec<(u32, Amount)>,
    /// Memory in bytes.
    pub memory: u64,
    /// Custom resources and amounts.
    pub custom: Vec<(Arc<str>, Amount)>,
    /// For a multi-node task (`nodes > 1`), every worker it holds — the one
    /// it was started on first; each is held whole, and the resources above
    /// are all of the first worker's. Empty for a single-node task.
    pub nodes: Vec<WorkerId>,
    /// Set for a task sent ahead to a worker across a network: it holds
    /// the resources of this task, already running there, and starts the
    /// moment that one ends (see `prefetch.rs`).
    pub after: Option<crate::ir::TaskId>,
}

impl Allocation {
    /// Empties the allocation, keeping its buffers for reuse.
    pub(super) fn clear(&mut self) {
        self.variant = 0;
        self.cpus.clear();
        self.gpus.clear();
        self.memory = 0;
        self.custom.clear();
        self.nodes.clear();
        self.after = None;
    }
}
