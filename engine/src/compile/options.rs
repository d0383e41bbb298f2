//! [`Options`]: what the compiler needs besides the workflow file.

use std::path::PathBuf;

use crate::resources::Capacity;

/// The default for [`Options::max_instances`]: 100 million instances of one task.
pub const MAX_INSTANCES: u64 = 100_000_000;

/// What the compiler needs besides the workflow file.
#[derive(Debug, Clone)]
pub struct Options {
    /// Directory relative paths are resolved against (the workflow file's directory).
    pub base_dir: PathBuf,
    /// Variable overrides, applied in order after the file's `[vars]`.
    pub vars: Vec<(String, serde_json::Value)>,
    /// The largest worker the workflow will run on, when known: a task none
    /// of whose variants fits it is an error.
    pub worker: Option<Capacity>,
    /// The most instances one task may have ([`MAX_INSTANCES`] by default).
    pub max_instances: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self { base_dir: PathBuf::new(), vars: Vec::new(), worker: None, max_instances: MAX_INSTANCES }
    }
}
