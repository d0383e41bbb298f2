//! [`Worker`] and [`WorkerRef`]: how every `--json` names a worker — its
//! id, the host it runs on (this machine's name for the embedded worker)
//! and the cluster job it runs in — and what `flow workers` and
//! `flow status` add about its resources. `flow explain` names workers
//! with the same type.

use std::collections::BTreeMap;

pub use flow_engine::explain::WorkerRef;
use flow_engine::rundir::WorkerInfo;
use schemars::JsonSchema;
use serde::Serialize;

/// A worker with its resources: each of `flow workers --json` and the
/// `workers` of `flow status --json`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Worker {
    /// Which worker.
    #[serde(flatten)]
    pub worker: WorkerRef,
    /// The embedded worker, in the `flow run` process itself.
    pub local: bool,
    /// The address a remote worker connected from; `null` for the embedded one.
    pub peer: Option<String>,
    /// How many CPUs it has.
    pub cpus: usize,
    /// How many GPUs it has.
    pub gpus: usize,
    /// Its memory, in bytes.
    pub memory_bytes: u64,
    /// Its custom resources, by name.
    pub custom: BTreeMap<String, f64>,
    /// When it leaves, µs since the Unix epoch, if it has a time limit.
    pub deadline_us: Option<u64>,
    /// Tasks running there now.
    pub running: u64,
}

impl Worker {
    /// `info`, as a run file holds it, in the output's words.
    pub fn new(info: &WorkerInfo) -> Self {
        let local = info.peer.is_empty();
        Worker {
            worker: WorkerRef { id: info.id, host: Some(info.hostname.clone()), allocation: info.allocation.clone() },
            local,
            peer: (!local).then(|| info.peer.clone()),
            cpus: info.shape.cpus.len(),
            gpus: info.shape.gpus.len(),
            memory_bytes: info.shape.memory,
            custom: info.shape.custom.iter().map(|(k, v)| (k.clone(), v.as_f64())).collect(),
            deadline_us: info.deadline.map(|d| d.0),
            running: info.running,
        }
    }

    /// Each of `infos`.
    pub fn all(infos: &[WorkerInfo]) -> Vec<Self> {
        infos.iter().map(Worker::new).collect()
    }
}
