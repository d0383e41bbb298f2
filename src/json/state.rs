//! [`State`]: the lower-case words for where an instance or an attempt stands.

use flow_engine::log::JournalStatus;
use flow_engine::runtime::Status;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a task instance, or one attempt of it, stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Not started, or waiting to run again.
    Waiting,
    /// Running.
    Running,
    /// Ran and succeeded.
    Succeeded,
    /// Skipped: an earlier run did the same work.
    Cached,
    /// Failed.
    Failed,
    /// Cancelled (a failure upstream, `--max-fails`, or an interruption).
    Cancelled,
    /// Its worker disappeared.
    Lost,
    /// The run stopped before it ran.
    NotRun,
}

impl From<JournalStatus> for State {
    fn from(status: JournalStatus) -> Self {
        match status {
            JournalStatus::Running => State::Running,
            JournalStatus::Succeeded => State::Succeeded,
            JournalStatus::Cached => State::Cached,
            JournalStatus::Failed => State::Failed,
            JournalStatus::Cancelled => State::Cancelled,
            JournalStatus::Lost => State::Lost,
        }
    }
}

impl From<&Status> for State {
    /// An attempt killed because the run stopped is `cancelled`, as the journal records it.
    fn from(status: &Status) -> Self {
        match status {
            Status::Succeeded => State::Succeeded,
            Status::Cached => State::Cached,
            Status::Failed { .. } => State::Failed,
            Status::Stopped => State::Cancelled,
        }
    }
}

#[cfg(test)]
mod tests {
    use flow_engine::explain;

    use super::*;

    /// `flow explain --json` serializes its own state types: their words are this vocabulary's.
    #[test]
    fn explain_uses_the_same_words() {
        use explain::{EarlierStatus, State as E, UpstreamState as U};
        let words = serde_json::json!([
            E::Waiting,
            E::Running,
            E::Succeeded,
            E::Cached,
            E::Failed,
            E::Cancelled,
            E::Lost,
            E::NotRun,
            U::Waiting,
            U::Running,
            U::Failed,
            U::Cancelled,
            U::Lost,
            EarlierStatus::Failed,
            EarlierStatus::Lost,
        ]);
        let states: Vec<State> = serde_json::from_value(words).expect("every word is a State");
        assert_eq!(states.len(), 15);
    }

    #[test]
    fn journal_and_run_statuses_read_as_the_log_writes_them() {
        for status in [JournalStatus::Running, JournalStatus::Failed, JournalStatus::Lost] {
            assert_eq!(serde_json::to_value(State::from(status)).unwrap(), status.as_str());
        }
        assert_eq!(State::from(&Status::Stopped), State::Cancelled);
    }
}
