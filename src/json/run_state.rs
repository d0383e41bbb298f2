//! [`RunState`]: the lower-case words for where a whole run stands.

use flow_engine::rundir::{IO_FAILURE, RunView};
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

    /// The state of `run`: what its summary says once it ended, else
    /// whether its process still runs it.
    pub fn of_view(run: &RunView) -> Self {
        match &run.summary {
            Some(s) => Self::of_summary(s),
            None if run.live => RunState::Running,
            None => RunState::Crashed,
        }
    }

    /// The state of `run` in words, as `flow status` and `flow log
    /// summary` print it: a dry run and a failure to store are told apart.
    pub fn words(run: &RunView) -> &'static str {
        match &run.summary {
            Some(s) => match (s.exit_code(), s.dry_exec) {
                (0, false) => "succeeded",
                (0, true) => "dry (nothing ran)",
                (130, _) => "interrupted",
                (IO_FAILURE, _) => "failed: storage",
                (_, false) => "failed",
                (_, true) => "dry, failed",
            },
            None if run.live => "running",
            None => "crashed",
        }
    }
}
