//! [`AllocList`]: what `flow alloc list --json` prints.

use flow_engine::profile::Manager;
use flow_engine::rundir::AllocRecord;
use schemars::JsonSchema;
use serde::Serialize;

/// A run's queue and its allocations; `queue` is `null` and `allocations`
/// empty for a run without a queue.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AllocList<'a> {
    /// The run's id.
    pub run_id: &'a str,
    /// Its queue, if it has one.
    pub queue: Option<QueueLimits<'a>>,
    /// Every allocation submitted, oldest first.
    pub allocations: &'a [AllocRecord],
}

/// A run's queue: its limits, µs for times.
#[derive(Debug, Serialize, JsonSchema)]
pub struct QueueLimits<'a> {
    /// The profile that defined it.
    pub profile: &'a str,
    /// The resource manager it submits to.
    pub manager: Manager,
    /// Longest life of an allocation, µs.
    pub time_limit_us: u64,
    /// Workers one allocation starts.
    pub workers_per_allocation: u32,
    /// Most workers alive or queued at once.
    pub max_workers: u32,
    /// Most allocations queued at once.
    pub backlog: u32,
    /// Why it stopped submitting, if it did.
    pub paused: Option<&'a str>,
    /// Tasks it can never run, each with the reason.
    pub unschedulable: &'a [String],
}
