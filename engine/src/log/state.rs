//! [`State`]: where a task instance, or one attempt of it, stands — the
//! one set of words for it, which the journal's entries, `flow explain`
//! (an instance, what it waits for, how its attempt before ended) and
//! every `--json` use. Each serializes as its lower-case word.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a task instance, or one attempt of it, stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
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
    /// Failed, and runs again (an upstream instance's state).
    Retrying,
    /// Cancelled (a failure upstream, `--max-fails`, or an interruption).
    Cancelled,
    /// Its worker disappeared (while it runs, or when it ran last).
    Lost,
    /// The run stopped before it ran.
    NotRun,
    /// Not run: its `when` was false, or it waits on a skipped instance.
    Skipped,
}

impl State {
    /// The word for it: `running`, `not_run`, as `--json` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Waiting => "waiting",
            State::Running => "running",
            State::Succeeded => "succeeded",
            State::Cached => "cached",
            State::Failed => "failed",
            State::Retrying => "retrying",
            State::Cancelled => "cancelled",
            State::Lost => "lost",
            State::NotRun => "not_run",
            State::Skipped => "skipped",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `as_str` says is what `--json` writes.
    #[test]
    fn each_word_is_the_serialized_one() {
        use State::*;
        for state in [Waiting, Running, Succeeded, Cached, Failed, Retrying, Cancelled, Lost, NotRun, Skipped] {
            assert_eq!(serde_json::to_value(state).unwrap(), state.as_str());
        }
    }
}
