//! [`Explained`]: a line of `flow explain --json`.

use flow_engine::explain::Explanation;
use schemars::JsonSchema;
use serde::Serialize;

use super::TaskRef;

/// A line of `flow explain --json`: the explanation, `sub` for an
/// instance of a nested task (as every `--json` names one), and its headline.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Explained<'a> {
    /// Where the instance stands and why.
    #[serde(flatten)]
    pub explanation: &'a Explanation,
    /// For an instance of a nested task, its position in its parent's part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<u64>,
    /// The line `flow explain` prints.
    pub message: String,
}

impl<'a> Explained<'a> {
    /// `explanation`, with `message`, its headline.
    pub fn new(explanation: &'a Explanation, message: String) -> Self {
        let sub = TaskRef::labelled(&explanation.task, explanation.label.clone()).sub;
        Explained { explanation, sub, message }
    }
}
