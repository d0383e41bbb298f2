//! [`State`], [`UpstreamState`] and [`EarlierStatus`]: where an instance
//! (or one attempt of it) and an instance it waits for stand, and how the
//! attempt before a wait to run again ended. All serialize as lower-case
//! words; [`State`] is the vocabulary of every `--json` too.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::log::JournalStatus;

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
    /// Not run: its `when` was false, or it waits on a skipped instance.
    Skipped,
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
            JournalStatus::Skipped => State::Skipped,
        }
    }
}

/// Where an upstream instance that has not succeeded stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UpstreamState {
    /// It has not started.
    Waiting,
    /// It is running.
    Running,
    /// It failed for good.
    Failed,
    /// It failed and runs again.
    Retrying,
    /// It was cancelled.
    Cancelled,
    /// Its worker was lost; it runs again.
    Lost,
}

/// How the attempt before a wait to run again ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EarlierStatus {
    /// It failed, with retries left.
    Failed,
    /// Its worker disappeared.
    Lost,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The other state types use [`State`]'s words.
    #[test]
    fn every_word_is_a_state() {
        use UpstreamState as U;
        let words = serde_json::json!([
            U::Waiting,
            U::Running,
            U::Failed,
            U::Cancelled,
            U::Lost,
            EarlierStatus::Failed,
            EarlierStatus::Lost,
        ]);
        let states: Vec<State> = serde_json::from_value(words).expect("every word is a State");
        assert_eq!(states.len(), 7);
    }

    #[test]
    fn journal_and_run_statuses_read_as_the_log_writes_them() {
        for status in [JournalStatus::Running, JournalStatus::Failed, JournalStatus::Lost] {
            assert_eq!(serde_json::to_value(State::from(status)).unwrap(), status.as_str());
        }
    }
}
