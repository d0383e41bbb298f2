//! [`CheckReport`]: what `flow check --json` prints.

use schemars::JsonSchema;
use serde::Serialize;

/// What `flow check --json` prints.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CheckReport {
    /// Whether the workflow is valid (notes do not make it invalid).
    pub ok: bool,
    /// The workflow file, as named on the command line.
    pub file: String,
    /// The workflow's name, when it is valid.
    pub workflow: Option<String>,
    /// Every problem, or the notes about a valid workflow.
    pub diagnostics: Vec<CheckDiagnostic>,
}

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The workflow cannot run.
    Error,
    /// Worth knowing; the workflow is valid.
    Note,
    /// The workflow is valid, but `flow run` would refuse it as things
    /// are (an image the container engine does not have).
    Warning,
}

/// One problem or note of `flow check --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CheckDiagnostic {
    /// A stable code, e.g. `flow::compile::cycle`.
    pub code: &'static str,
    /// How serious it is.
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
    /// The file it points into (the workflow, or a file it reads).
    pub file: String,
    /// The line it points at, from 1.
    pub line: Option<usize>,
    /// The column, from 1, in characters.
    pub column: Option<usize>,
    /// The text drawn under the span.
    pub label: Option<String>,
    /// How to fix it.
    pub help: Option<String>,
}
