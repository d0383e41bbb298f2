//! [`RunStanding`]: where a run stands, each run of `flow runs --json`.

use schemars::JsonSchema;
use serde::Serialize;

use super::{Counts, RunState};

/// Where a run stands: what `flow status --json` prints, and each run of
/// `flow runs --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunStanding {
    /// The run's id.
    pub run_id: String,
    /// Where it stands.
    pub state: RunState,
    /// A `--dry-exec` run: nothing was executed.
    pub dry_exec: bool,
    /// Its instances by state (absent for a damaged run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// Its wall time in µs, once it ended.
    pub duration_us: Option<u64>,
    /// The exit code its `flow run` ended with (74: its run files could not
    /// be written), once it ended.
    pub exit_code: Option<u8>,
    /// Damaged stretches of its journal, whose records are lost (absent for
    /// a damaged run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_damage: Option<usize>,
    /// Why its files cannot be read (a damaged run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What `flow runs --json` prints: every run, oldest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunList {
    /// The runs.
    pub runs: Vec<RunStanding>,
}
