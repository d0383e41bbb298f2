//! [`unknown_key`]: the diagnostic for a key a struct does not have, with
//! the field it most likely meant, and [`struct_context`]: where a key sits,
//! for messages.

use super::tree::Node;
use crate::diag::{Code, Diagnostic};

/// The diagnostic for `key`, named `name`, in a table read as struct
/// `strukt` (of `section`, for a task table), which has `fields`.
pub(crate) fn unknown_key(key: &Node, name: &str, strukt: &str, section: Option<&str>, fields: &[&str]) -> Diagnostic {
    let context = struct_context(strukt, section);
    Diagnostic::new(Code::SpecUnknownKey, format!("unknown key `{name}` {context}"))
        .at(key.span.clone(), "unknown key")
        .help(suggest(name, fields))
}

/// Where a key of struct `name` sits, for messages: "at top level",
/// "in task", "in template", "in each_chunk", ...
pub(crate) fn struct_context(name: &str, section: Option<&str>) -> String {
    match name {
        "Workflow" => "at top level".to_owned(),
        "TaskSpec" => format!("in {}", section.unwrap_or("task")),
        "Variant" => "in variant".to_owned(),
        "EachChunk" => "in each_chunk".to_owned(),
        "FinallySpec" => "in [finally]".to_owned(),
        "AfterTable" => "in an `after` entry".to_owned(),
        other => format!("in {other}"),
    }
}

/// The help line for an unknown key: the field it most likely meant, or the
/// list of fields.
fn suggest(key: &str, fields: &[&str]) -> String {
    let lower = key.to_lowercase();
    let synonym = match lower.as_str() {
        "cmd" | "run" | "script" | "shell" => Some("command"),
        "depends_on" | "deps" | "needs" | "requires" | "dependencies" => Some("after"),
        "args" | "arguments" => Some("argv"),
        "mem" => Some("memory"),
        "cpu" | "threads" | "cores" | "ncpus" => Some("cpus"),
        "gpu" => Some("gpus"),
        "dir" | "workdir" | "working_dir" | "working_directory" => Some("cwd"),
        "environment" => Some("env"),
        "template" | "extends" => Some("use"),
        "walltime" | "time" => Some("time_request"),
        _ => None,
    };
    let similar = fields
        .iter()
        .map(|field| (strsim::jaro_winkler(&lower, field), *field))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, field)| field);
    match synonym.filter(|s| fields.contains(s)).or(similar) {
        Some(field) => format!("did you mean `{field}`?"),
        None => format!("expected one of: {}", fields.join(", ")),
    }
}
