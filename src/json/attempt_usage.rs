//! [`AttemptUsage`]: where an attempt ran and what its process used, as
//! `flow run --json`'s `task_finished` event carries it.

use flow_engine::log::AttemptMetrics;
use schemars::JsonSchema;
use serde::Serialize;

/// An attempt's metrics, measured by the worker that ran it: the same
/// numbers as `flow log list --json` shows for the attempt.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AttemptUsage<'a> {
    /// When the process started, µs since the Unix epoch.
    pub started_us: u64,
    /// When it ended, µs since the Unix epoch.
    pub ended_us: u64,
    /// Its wall time, µs.
    pub wall_us: u64,
    /// User plus system CPU time, µs.
    pub cpu_us: u64,
    /// User CPU time, µs.
    pub user_us: u64,
    /// System CPU time, µs.
    pub system_us: u64,
    /// Peak resident set size, bytes.
    pub rss_bytes: u64,
    /// Peak virtual memory of its process tree, bytes (sampled; `null` if
    /// it ended before the first sample).
    pub peak_vmem_bytes: Option<u64>,
    /// Bytes fetched from storage (`read_bytes`, from `rusage`; `null` where unknown).
    pub read_bytes: Option<u64>,
    /// Bytes sent to storage (`write_bytes`).
    pub write_bytes: Option<u64>,
    /// Bytes read through system calls (`rchar`; `null` if it ended before
    /// the first sample).
    pub rchar: Option<u64>,
    /// Bytes written through system calls (`wchar`).
    pub wchar: Option<u64>,
    /// The host it ran on.
    pub host: &'a str,
    /// The cluster job its worker ran in, if any.
    pub allocation: Option<&'a str>,
    /// The variant it ran with (its position in `variants`).
    pub variant: u32,
    /// The CPU ids it was given.
    pub cpu_ids: &'a [u32],
    /// The GPU ids it was given.
    pub gpu_ids: &'a [u32],
}

impl<'a> AttemptUsage<'a> {
    /// The usage `m` records.
    pub fn of(m: &'a AttemptMetrics) -> Self {
        let u = &m.usage;
        AttemptUsage {
            started_us: u.started_us,
            ended_us: u.ended_us,
            wall_us: u.wall_us,
            cpu_us: u.user_us + u.system_us,
            user_us: u.user_us,
            system_us: u.system_us,
            rss_bytes: u.max_rss,
            peak_vmem_bytes: u.peak_vmem,
            read_bytes: u.io.map(|io| io.read_bytes),
            write_bytes: u.io.map(|io| io.write_bytes),
            rchar: u.io.and_then(|io| io.rchar),
            wchar: u.io.and_then(|io| io.wchar),
            host: &m.host,
            allocation: m.allocation.as_deref(),
            variant: m.variant,
            cpu_ids: &m.cpus,
            gpu_ids: &m.gpus,
        }
    }
}
