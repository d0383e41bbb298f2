//! [`WorkerInfo`]: a worker of a run as `workers.json` and
//! `workers-left.json` in the run directory hold it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ir::Amount;
use crate::resources::{Deadline, WorkerShape};

/// A worker as `flow workers` shows it (`workers.json` in the run directory).
///
/// The file records how many CPUs and GPUs a worker has, not which: a
/// worker read back has them numbered from 0 ([`WorkerShape::counted`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "WorkerRecord", into = "WorkerRecord")]
pub struct WorkerInfo {
    /// The worker's id in this run.
    pub id: u32,
    /// Host name (this machine's for the embedded worker).
    pub hostname: String,
    /// Address it connected from (empty for the embedded worker).
    pub peer: String,
    /// What it has.
    pub shape: WorkerShape,
    /// When it leaves, if it has a time limit.
    pub deadline: Option<Deadline>,
    /// The cluster job it runs in (Slurm or PBS job id), if any.
    pub allocation: Option<String>,
    /// Tasks running there now.
    pub running: u64,
}

/// [`WorkerInfo`] as the file writes it: CPUs and GPUs counted.
#[derive(Serialize, Deserialize)]
struct WorkerRecord {
    id: u32,
    hostname: String,
    peer: String,
    cpus: usize,
    gpus: usize,
    memory: u64,
    #[serde(default)]
    custom: BTreeMap<String, Amount>,
    #[serde(default)]
    deadline_us: Option<Deadline>,
    #[serde(default)]
    allocation: Option<String>,
    running: u64,
}

impl From<WorkerRecord> for WorkerInfo {
    fn from(r: WorkerRecord) -> Self {
        let WorkerRecord { id, hostname, peer, cpus, gpus, memory, custom, deadline_us, allocation, running } = r;
        let shape = WorkerShape::counted(cpus, gpus, memory, custom);
        WorkerInfo { id, hostname, peer, shape, deadline: deadline_us, allocation, running }
    }
}

impl From<WorkerInfo> for WorkerRecord {
    fn from(w: WorkerInfo) -> Self {
        let WorkerInfo { id, hostname, peer, shape, deadline, allocation, running } = w;
        let WorkerShape { cpus, gpus, memory, custom } = shape;
        let (cpus, gpus) = (cpus.len(), gpus.len());
        WorkerRecord { id, hostname, peer, cpus, gpus, memory, custom, deadline_us: deadline, allocation, running }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_keeps_its_fields() {
        let text = r#"{"id":1,"hostname":"node1","peer":"10.0.0.2:5000","cpus":2,"gpus":1,"memory":1024,"custom":{},"deadline_us":42,"allocation":"77","running":3}"#;
        let worker: WorkerInfo = serde_json::from_str(text).expect("a worker");
        assert_eq!((worker.shape.cpus.as_slice(), worker.deadline), (&[0, 1][..], Some(Deadline(42))));
        assert_eq!(serde_json::to_string(&worker).expect("json"), text);
        let old = r#"{"id":0,"hostname":"local","peer":"","cpus":1,"gpus":0,"memory":0,"running":0}"#;
        let worker: WorkerInfo = serde_json::from_str(old).expect("a worker without optional fields");
        assert_eq!((worker.deadline, worker.shape.custom.len()), (None, 0));
    }
}
