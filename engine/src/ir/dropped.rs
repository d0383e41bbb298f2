//! [`Dropped`]: a task the compiler dropped from the graph because its
//! `when` was false, or because it needs a task that was left out.

use serde::{Deserialize, Serialize};

/// A task left out of the run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    /// The task's name.
    pub name: String,
    /// Why it was left out.
    pub reason: DropReason,
}

/// Why a task was left out of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DropReason {
    /// Its own `when` rendered false.
    Condition {
        /// The `when` template as written.
        when: String,
        /// What it rendered to.
        rendered: String,
    },
    /// It needs a task that was left out (through `after`, an input only
    /// that task writes, `for_each`, or the file it expands over).
    Upstream {
        /// The task it needs.
        task: String,
    },
}

impl std::fmt::Display for DropReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DropReason::Condition { when, rendered } => write!(f, "when `{when}` was false (rendered `{rendered}`)"),
            DropReason::Upstream { task } => write!(f, "needs `{task}`, which is dropped"),
        }
    }
}
