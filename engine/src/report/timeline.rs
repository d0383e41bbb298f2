//! [`Timeline`]: the attempts of a run over time, one lane per worker, and
//! the CPUs they used. Up to [`MAX_BARS`] attempts are drawn one bar each;
//! beyond that each lane becomes [`BINS`] bins holding how many attempts ran.
//! [`super::timeline_builder`] lays it out.

use serde::Serialize;

/// Attempts drawn one by one at most; a larger run is drawn in bins.
pub const MAX_BARS: usize = 2000;
/// Bins across the run, for the CPU chart and for lanes of a large run.
pub const BINS: usize = 200;

/// Attempts over time by worker, and CPU use.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    /// Where the time axis starts, µs since the Unix epoch.
    pub start_us: u64,
    /// Where it ends.
    pub end_us: u64,
    /// The width of one bin, µs.
    pub bin_us: u64,
    /// Whether lanes hold bins instead of bars.
    pub binned: bool,
    /// One per worker (host and worker id), in worker order.
    pub lanes: Vec<Lane>,
    /// CPUs kept busy in each bin, from the attempts' CPU time (empty when no attempt reported it).
    pub cpu_used: Vec<f64>,
    /// CPUs given to the attempts running in each bin.
    pub cpu_given: Vec<f64>,
    /// CPUs of all the run's workers together, if known.
    pub cpu_capacity: Option<f64>,
    /// GPUs given to the attempts running in each bin (empty when no attempt had one).
    pub gpu_given: Vec<f64>,
    /// GPUs of all the run's workers together, if known.
    pub gpu_capacity: Option<f64>,
    /// Bytes of memory the attempts running in each bin asked for (empty
    /// when no attempt asked for memory or reported its peak).
    pub mem_asked: Vec<f64>,
    /// Bytes of memory the attempts running in each bin used at most: each
    /// attempt's peak RSS held over its whole run, so an upper bound
    /// (empty when no attempt reported it).
    pub mem_used: Vec<f64>,
    /// Bytes of memory of all the run's workers together, if known.
    pub mem_capacity: Option<f64>,
}

/// What the run's workers offered together, where known.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Capacity {
    /// CPUs.
    pub cpus: Option<f64>,
    /// GPUs.
    pub gpus: Option<f64>,
    /// Bytes of memory.
    pub memory: Option<f64>,
}

/// The attempts of one worker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lane {
    /// `host · worker N`.
    pub label: String,
    /// Rows its bars need so that none overlap.
    pub rows: u32,
    /// Its attempts, unless the timeline is binned.
    pub bars: Vec<Bar>,
    /// Attempts running on average in each bin, if the timeline is binned.
    pub busy: Vec<f64>,
    /// Failed attempts that ended in each bin, if the timeline is binned.
    pub failed: Vec<u32>,
    /// Retries (attempts after the first) that started in each bin, if the
    /// timeline is binned.
    pub retried: Vec<u32>,
}

/// One attempt in a lane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bar {
    /// Position of its task in the graph (for its colour).
    pub group: u32,
    /// `name[index]`, and `#attempt` after a retry.
    pub label: String,
    /// Start, µs after the timeline's start.
    pub start_us: u64,
    /// End, µs after the timeline's start.
    pub end_us: u64,
    /// Its row in the lane.
    pub row: u32,
    /// How it ended: `succeeded`, `failed`, `lost`, `cancelled` or `running`.
    pub state: &'static str,
}
