//! [`SourceRef`]: the included file a task was written in.

use serde::{Deserialize, Serialize};

/// Where a task of an included file is written: the file, as the workflow
/// file names it joined to the include's path, and the line of its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRef {
    /// The included file (`lib/ligen.toml`).
    pub file: String,
    /// The 1-based line of the task's `name`.
    pub line: usize,
}
