//! [`RunState`]: the lower-case words for where a whole run stands.

use flow_engine::runtime::Summary;
use schemars::JsonSchema;
use serde::Serialize;

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Its process is running it.
    Running,
    /// It ended and every instance succeeded or was cached.
    Succeeded,
    /// It ended with failed or cancelled instances, or files it could not write.
    Failed,
    /// It was interrupted (Ctrl-C, a signal).
    Interrupted,
    /// Its process is gone and it never finished (killed or crashed).
    Crashed,
    /// Its files cannot be read.
    Damaged,
}

impl RunState {
    /// The state of a run that ended with `summary`.
    pub fn of_summary(summary: &Summary) -> Self {
        match summary.exit_code() {
            0 => RunState::Succeeded,
            130 => RunState::Interrupted,
            _ => RunState::Failed,
        }
    }
}
