//! [`WorkerInfo`]: a worker of a run as `workers.json` and
//! `workers-left.json` in the run directory hold it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::ir::Amount;
use crate::resources::Capacity;

/// A worker as `flow workers` shows it (`workers.json` in the run directory).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct WorkerInfo {
    /// The worker's id in this run.
    pub id: u32,
    /// Host name (`local` for the embedded worker).
    pub hostname: String,
    /// Address it connected from (empty for the embedded worker).
    pub peer: String,
    /// CPU ids.
    pub cpus: usize,
    /// GPU ids.
    pub gpus: usize,
    /// Memory in bytes.
    pub memory: u64,
    /// Custom resources.
    #[serde(default)]
    pub custom: BTreeMap<String, Amount>,
    /// When it leaves (µs since the epoch), if it has a time limit.
    #[serde(default)]
    pub deadline_us: Option<u64>,
    /// The cluster job it runs in (Slurm or PBS job id), if any.
    #[serde(default)]
    pub allocation: Option<String>,
    /// Tasks running there now.
    pub running: u64,
}

impl WorkerInfo {
    /// What the worker has, for fitting requests to it.
    pub fn capacity(&self) -> Capacity {
        Capacity {
            cpus: Some(Amount::whole(self.cpus as u64)),
            gpus: Some(Amount::whole(self.gpus as u64)),
            memory: Some(self.memory),
            custom: Some(self.custom.clone()),
        }
    }
}
