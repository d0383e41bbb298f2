//! `--profile NAME`: finding and reading the named profile for a workflow.

use std::path::Path;

use flow_engine::diag::Source;
use flow_engine::runtime::alloc::profile::{self, PROFILES_FILE, Profile};

use crate::load::Failure;

/// Reads profile `name` for the workflow in `dir`.
pub fn load(dir: &Path, name: &str) -> Result<Profile, Failure> {
    let path = profile::find(dir).ok_or_else(|| {
        Failure::Usage(format!(
            "`--profile {name}`: no profiles file; write `{PROFILES_FILE}` next to the workflow \
             (or `~/.config/flow/profiles.toml`) with a `[profile.{name}]` table"
        ))
    })?;
    let text = fs_err::read_to_string(&path).map_err(|e| Failure::Usage(e.to_string()))?;
    let source = Source::new(shown(&path), text);
    profile::load(&source, name).map_err(|diagnostics| Failure::Invalid { source, diagnostics })
}

/// The path as the user would write it: relative to the current directory when inside it.
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd).unwrap_or(path).display().to_string()
}
