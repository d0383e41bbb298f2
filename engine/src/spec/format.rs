//! [`Format`]: the syntax a workflow or vars file is written in.

use std::path::Path;

/// The syntax of a workflow or vars file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// TOML 1.0.
    Toml,
    /// YAML 1.2 (core schema), which also reads JSON.
    Yaml,
}

impl Format {
    /// The format a file's extension names: `.toml`, or `.yaml`, `.yml` and
    /// `.json` (read as YAML). `None` for any other extension.
    pub fn from_path(path: &Path) -> Option<Format> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "toml" => Some(Format::Toml),
            "yaml" | "yml" | "json" => Some(Format::Yaml),
            _ => None,
        }
    }
}
