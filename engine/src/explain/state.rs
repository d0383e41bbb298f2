//! [`State`], [`UpstreamState`] and [`EarlierStatus`]: where an explained
//! instance and an instance it waits for stand, and how the attempt before
//! a wait to run again ended. All serialize as lower-case words.

use serde::Serialize;

/// Where an explained instance stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// It has not started, or waits to run again.
    Waiting,
    /// It is running.
    Running,
    /// It succeeded.
    Succeeded,
    /// An earlier run had done the same work, so it was skipped.
    Cached,
    /// It failed for good.
    Failed,
    /// It was cancelled.
    Cancelled,
    /// Its worker was lost and the run ended before it ran again.
    Lost,
    /// The run stopped before it finished.
    NotRun,
}

/// Where an upstream instance that has not succeeded stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EarlierStatus {
    /// It failed, with retries left.
    Failed,
    /// Its worker disappeared.
    Lost,
}
