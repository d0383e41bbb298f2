//! [`QueueSettings`]: how a profile describes an allocation queue.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_spanned::Spanned;

/// Which resource manager a queue submits to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Manager {
    /// Slurm: `sbatch`, `scancel`, `squeue`.
    Slurm,
    /// PBS Pro / OpenPBS / Torque: `qsub`, `qdel`, `qstat`.
    Pbs,
}

impl Manager {
    /// The manager's name as users know it.
    pub fn name(self) -> &'static str {
        match self {
            Manager::Slurm => "Slurm",
            Manager::Pbs => "PBS",
        }
    }
}

/// An allocation queue, as a profile's `[profile.NAME.queue]` table gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// The name only shows in messages: "unknown key `x` in a queue".
#[serde(deny_unknown_fields, rename = "a queue")]
pub struct QueueSettings {
    /// `slurm` or `pbs`.
    pub manager: Manager,
    /// Slurm partition / PBS queue (`-p` / `-q`); the manager's default if unset.
    #[serde(default, alias = "queue")]
    pub partition: Option<String>,
    /// Account (project) to charge (`--account` / `-A`).
    #[serde(default)]
    pub account: Option<String>,
    /// Wall-time of each allocation, e.g. `"1h"` (`--time` / `-l walltime`).
    pub time_limit: Spanned<String>,
    /// Workers (nodes) each allocation starts.
    #[serde(default = "default_one")]
    pub workers_per_allocation: u32,
    /// Most workers alive or queued at once.
    #[serde(default = "default_max_workers")]
    pub max_workers: u32,
    /// Most allocations waiting in the manager's queue at once.
    #[serde(default = "default_one")]
    pub backlog: u32,
    /// Workers exit after this long without work, e.g. `"5m"`.
    #[serde(default = "five_minutes")]
    pub idle_timeout: Spanned<String>,
    /// How often the manager is asked about allocations no worker has
    /// come from yet (to notice ones that failed), e.g. `"30s"`.
    #[serde(default = "thirty_seconds")]
    pub poll_interval: Spanned<String>,
    /// What each worker owns (default: the whole node, detected).
    #[serde(default)]
    pub worker: QueueWorker,
    /// Extra arguments for `sbatch` / `qsub`, e.g. `["--qos=short"]`.
    #[serde(default)]
    pub submit_args: Vec<String>,
    /// Shell lines run before the worker starts (`module load …`).
    #[serde(default)]
    pub setup: Vec<String>,
    /// The `flow` executable on the compute nodes (default: this one).
    #[serde(default)]
    pub flow: Option<String>,
}

/// What each worker of a queue asks the manager for, as the profile
/// writes it (`worker = { cpus = 16, memory = "64 GiB" }`); what a
/// worker then has is a [`crate::resources::WorkerShape`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename = "a queue's worker")]
pub struct QueueWorker {
    /// CPUs (requested per node; unset: the whole node, `--exclusive`).
    #[serde(default)]
    pub cpus: Option<u32>,
    /// GPUs per node.
    #[serde(default)]
    pub gpus: Option<u32>,
    /// Memory per node, e.g. `"16 GiB"`.
    #[serde(default)]
    pub memory: Option<Spanned<String>>,
    /// Custom resources, e.g. `{ fpga = 2 }`.
    #[serde(default)]
    pub resources: BTreeMap<String, f64>,
}

/// The default of `workers_per_allocation` and `backlog`.
pub(super) fn default_one() -> u32 {
    1
}

/// The default of `max_workers`.
pub(super) fn default_max_workers() -> u32 {
    4
}

/// The default of `idle_timeout`.
pub(super) fn five_minutes() -> Spanned<String> {
    Spanned::new(0..0, "5m".to_owned())
}

/// The default of `poll_interval`.
pub(super) fn thirty_seconds() -> Spanned<String> {
    Spanned::new(0..0, "30s".to_owned())
}
