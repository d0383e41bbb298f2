//! [`Meta`]: what a run's `meta.json` records about how it was started.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The contents of `meta.json`, written when a run starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// The workflow file the run ran.
    pub workflow: PathBuf,
    /// When the run started (µs since the Unix epoch).
    pub started_us: u64,
    /// Whether it was a `--dry-exec` run (absent in the file when not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_exec: bool,
    /// The command line that started the run (absent in the file when not recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
}
