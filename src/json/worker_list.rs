//! [`WorkerList`]: what `flow workers --json` prints.

use schemars::JsonSchema;
use serde::Serialize;

use super::Worker;

/// A run's workers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkerList<'a> {
    /// The run's id.
    pub run_id: &'a str,
    /// Whether the run is running.
    pub live: bool,
    /// Its workers (those connected at its end, for a finished run).
    pub workers: Vec<Worker>,
}
