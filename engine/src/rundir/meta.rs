//! [`Meta`]: what a run's `meta.json` records about how it was started.

use std::path::{Path, PathBuf};

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

impl Meta {
    /// Whether the run ran `workflow`. Every run under a `.flow` ran a
    /// workflow file of its directory, which may have moved since: the
    /// file name tells which, its syntax aside — `workflow.toml`
    /// converted to `workflow.yaml` is the same workflow.
    pub fn ran(&self, workflow: &Path) -> bool {
        same_workflow(&self.workflow, workflow)
    }
}

/// Whether two workflow file names name one workflow: equal, or equal
/// but for a `.toml`, `.yaml` or `.yml` extension.
fn same_workflow(a: &Path, b: &Path) -> bool {
    let syntax = |p: &Path| p.extension().is_some_and(|e| ["toml", "yaml", "yml"].iter().any(|x| e == *x));
    a.file_name() == b.file_name() || (syntax(a) && syntax(b) && a.file_stem() == b.file_stem())
}

#[cfg(test)]
mod tests {
    use super::same_workflow;
    use std::path::Path;

    #[test]
    fn a_workflow_is_the_same_in_toml_and_yaml() {
        let same = |a: &str, b: &str| same_workflow(Path::new(a), Path::new(b));
        assert!(same("/old/place/workflow.toml", "workflow.toml"));
        assert!(same("workflow.toml", "workflow.yaml"));
        assert!(same("w/flow.yml", "flow.toml"));
        assert!(!same("workflow.toml", "other.toml"));
        assert!(!same("workflow.toml", "workflow.json"));
        assert!(!same("workflow", "workflow.toml"));
    }
}
