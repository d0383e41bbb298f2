//! [`WorkerEvent`]: a line of `flow worker --json`.

use schemars::JsonSchema;
use serde::Serialize;

/// What happened to a worker that joins a run over the network.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WorkerEvent {
    /// It is connecting to the run, offering these resources.
    Started {
        /// The address it dials.
        address: String,
        /// This machine's host name.
        host: String,
        /// How many CPUs it offers.
        cpus: usize,
        /// How many GPUs it offers.
        gpus: usize,
        /// The memory it offers, in bytes.
        memory_bytes: u64,
        /// When it leaves, µs after it starts, if it has a time limit.
        time_limit_us: Option<u64>,
    },
    /// It is in the run: the run accepted it (after `started`, and again
    /// after each rejoin).
    Joined {
        /// The address it joined.
        address: String,
        /// It joined again after its connection dropped.
        rejoined: bool,
    },
    /// Joining failed for a reason that may pass; it tries again with
    /// back-off (said once each time joining starts failing).
    Retrying {
        /// The address it dials.
        address: String,
        /// What went wrong.
        error: String,
        /// How much longer it keeps trying, in µs (`--reconnect-for`).
        retry_for_us: u64,
    },
    /// It left the run.
    Left {
        /// Why, as a word.
        reason: LeftReason,
        /// The signal that stopped it (`reason` `signal`).
        signal: Option<String>,
        /// Why, as `flow worker` says it.
        message: String,
    },
}

/// Why a worker left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LeftReason {
    /// The run ended.
    RunEnded,
    /// The coordinator was lost (killed, or unreachable).
    CoordinatorLost,
    /// Its `--time-limit` was reached.
    TimeLimit,
    /// It had no work for its `--idle-timeout`.
    Idle,
    /// A signal stopped it; its tasks run again elsewhere.
    Signal,
    /// The run refused it: a zero-execution worker and a real run, or the
    /// other way round.
    Refused,
}
