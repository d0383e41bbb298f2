//! [`ReportWritten`]: what `flow report --json` prints.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use super::Counts;

/// The report `flow report` wrote: where, of which run, how big, and the
/// run's instances by state as the page shows them.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReportWritten {
    /// The run's id.
    pub run_id: String,
    /// The page's file.
    pub path: PathBuf,
    /// Its size, in bytes.
    pub bytes: u64,
    /// The run's instances by state.
    pub counts: Counts,
    /// Failed instances, the page lists the first few.
    pub failures: u64,
    /// What could not be read completely (a torn journal, a damaged file).
    pub warnings: Vec<String>,
}
