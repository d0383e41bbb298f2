//! [`AttemptRecord`]: a line of `flow log list --json`.

use schemars::JsonSchema;
use serde::Serialize;

use super::{State, TaskRef, WorkerRef};

/// One attempt as `flow log list --json` prints it, one per line. Fields
/// the journal does not know (yet) are `null`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AttemptRecord {
    /// Which instance.
    #[serde(flatten)]
    pub task: TaskRef,
    /// The attempt, 0 for the first.
    pub attempt: u32,
    /// Where it got to; `null` for output with no journal record yet.
    pub state: Option<State>,
    /// The exit code of a failed attempt, if it exited.
    pub exit_code: Option<i32>,
    /// The signal that killed a failed attempt.
    pub signal: Option<i32>,
    /// When the process started, µs since the Unix epoch.
    pub started_us: Option<u64>,
    /// When the process ended, µs since the Unix epoch.
    pub ended_us: Option<u64>,
    /// From the journal's start record to its end record, µs.
    pub duration_us: Option<u64>,
    /// The process's wall time, µs.
    pub wall_us: Option<u64>,
    /// User plus system CPU time, µs.
    pub cpu_us: Option<u64>,
    /// User CPU time, µs.
    pub user_us: Option<u64>,
    /// System CPU time, µs.
    pub system_us: Option<u64>,
    /// Peak resident set size, bytes.
    pub rss_bytes: Option<u64>,
    /// The worker it ran on.
    pub worker: Option<WorkerRef>,
    /// The variant it ran with (its position in `variants`).
    pub variant: Option<u32>,
    /// The CPU ids it was given.
    pub cpu_ids: Option<Vec<u32>>,
    /// The GPU ids it was given.
    pub gpu_ids: Option<Vec<u32>>,
    /// Why it failed or was cancelled.
    pub reason: Option<String>,
    /// When the next attempt of this failed one may start (`retry_delay`), µs since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_at_us: Option<u64>,
    /// A failure its task's `continue_on_failure` ignores: what depends on it ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignored: bool,
    /// Bytes written to stdout.
    pub stdout_bytes: u64,
    /// Bytes written to stderr.
    pub stderr_bytes: u64,
    /// The fingerprint of a succeeded or cached attempt, 64 hex digits:
    /// the same work has the same fingerprint in every run.
    pub fingerprint: Option<String>,
    /// CPU time over wall time, in percent (200 is two CPUs kept busy).
    pub cpu_percent: Option<f64>,
    /// The CPUs the variant it ran with asks for.
    pub requested_cpus: Option<f64>,
    /// The GPUs it asks for.
    pub requested_gpus: Option<f64>,
    /// The memory it asks for, bytes.
    pub requested_memory_bytes: Option<u64>,
    /// The run time it asks for (`time_request`), µs.
    pub requested_time_us: Option<u64>,
    /// When the instance became ready to start (its dependencies done, its
    /// comparison with an earlier run made, its retry due), µs since the
    /// Unix epoch, by the coordinator's clock.
    pub ready_us: Option<u64>,
    /// From ready to started (dispatched to its worker), µs.
    pub queue_wait_us: Option<u64>,
    /// Peak virtual memory of its process tree, bytes (sampled).
    pub peak_vmem_bytes: Option<u64>,
    /// Bytes its processes fetched from storage (`read_bytes` of `/proc/<pid>/io`).
    pub read_bytes: Option<u64>,
    /// Bytes its processes sent to storage (`write_bytes`).
    pub write_bytes: Option<u64>,
    /// Bytes its processes read through system calls, pipes and cache included (`rchar`).
    pub rchar: Option<u64>,
    /// Bytes its processes wrote through system calls (`wchar`).
    pub wchar: Option<u64>,
}
