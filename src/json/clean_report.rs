//! [`CleanReport`]: what `flow clean --json` prints.

use schemars::JsonSchema;
use serde::Serialize;

/// The runs `flow clean` removed (or, with `--dry-run`, would remove) and
/// those it kept, oldest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CleanReport {
    /// Whether nothing was removed (`--dry-run`).
    pub dry_run: bool,
    /// The runs removed, or that would be.
    pub removed: Vec<CleanedRun>,
    /// The runs kept.
    pub kept: Vec<CleanedRun>,
    /// The bytes the removed runs took.
    pub bytes: u64,
}

/// One run directory.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CleanedRun {
    /// The run's id.
    pub run_id: String,
    /// The size of its directory, in bytes.
    pub bytes: u64,
    /// Why it is kept: `newest`, `live`, `in_use`, `unreadable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<KeptWhy>,
    /// For `in_use`: how many instances stand on its records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<u64>,
}

/// Why `flow clean` keeps a run.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeptWhy {
    /// The newest run of its workflow file.
    Newest,
    /// A process runs it now.
    Live,
    /// Instances stand on its records: a new run reads them to decide what to skip.
    InUse,
    /// Its files cannot be read.
    Unreadable,
}
