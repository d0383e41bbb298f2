//! [`Finally`]: the one command a run runs at its end, whatever happened.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::{Command, GroupId, TaskId};

/// The workflow's `[finally]` command, its templates rendered with `vars`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finally {
    /// Byte range of the `[finally]` table in the workflow file.
    pub span: Range<usize>,
    /// What to execute.
    pub command: Command,
    /// Working directory, relative to the workflow directory.
    pub cwd: Option<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// Kill it after this many seconds.
    pub timeout: Option<u64>,
    /// Shell lines run before the command, in the same shell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
    /// The image it runs in (a key of [`super::Graph::images`] once checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

impl Finally {
    /// The id its output is logged under: no group has it.
    pub const TASK: TaskId = TaskId { group: GroupId(u32::MAX), instance: 0 };
    /// The label its output is logged under (`flow log cat finally`).
    pub const LABEL: &str = "finally";
}
