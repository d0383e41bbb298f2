//! [`StatusReport`]: what `flow status --json` prints.

use std::path::Path;

use flow_engine::profile::Manager;
use schemars::JsonSchema;
use serde::Serialize;

use super::{RunStanding, Worker};

/// The run's standing, its workers and its queue.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StatusReport<'a> {
    /// Where the run stands.
    #[serde(flatten)]
    pub standing: RunStanding,
    /// The workers of a live run.
    pub workers: Vec<Worker>,
    /// The run's allocation queue, if it has one.
    pub queue: Option<QueueSummary<'a>>,
    /// The run directory.
    pub dir: &'a Path,
}

/// A run's queue and its allocations by state.
#[derive(Debug, Serialize, JsonSchema)]
pub struct QueueSummary<'a> {
    /// The resource manager it submits to.
    pub manager: Manager,
    /// The profile that defined it.
    pub profile: &'a str,
    /// Allocations submitted.
    pub allocations: usize,
    /// Of those, queued.
    pub queued: usize,
    /// Running.
    pub running: usize,
    /// Failed.
    pub failed: usize,
    /// Why it stopped submitting, if it did.
    pub paused: Option<&'a str>,
}
