//! `--profile NAME`: finding and reading the named profile for a workflow.

use std::path::Path;

use flow_engine::diag::Source;
use flow_engine::profile::{self, PROFILES_FILE, Profile};
use flow_engine::text_file::read_text;

use crate::failure::Failure;

/// Reads profile `name` for the workflow in `dir`: from the first profiles
/// file that defines it (next to the workflow, then the user's config).
pub fn load(dir: &Path, name: &str) -> Result<Profile, Failure> {
    let files = profile::files(dir);
    if files.is_empty() {
        return Err(Failure::Usage(format!(
            "`--profile {name}`: no profiles file; write `{PROFILES_FILE}` next to the workflow \
             (or `~/.config/flow/profiles.toml`) with a `[profile.{name}]` table"
        )));
    }
    let mut first_miss = None;
    for path in files {
        let text = read_text(&path)
            .map_err(|e| Failure::Usage(format!("cannot read the profiles file `{}`: {e}", shown(&path))))?;
        let source = Source::new(shown(&path), text);
        match profile::load(&source, name) {
            Ok(profile) => return Ok(profile),
            Err(diagnostics) if profile::is_unknown(&diagnostics) => {
                first_miss.get_or_insert(Failure::Invalid { source, diagnostics });
            }
            Err(diagnostics) => return Err(Failure::Invalid { source, diagnostics }),
        }
    }
    Err(first_miss.expect("a file was read"))
}

/// The path as the user would write it: relative to the current directory when inside it.
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd).unwrap_or(path).display().to_string()
}
