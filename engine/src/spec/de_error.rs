//! [`Error`]: the error of the tree deserializer, which remembers where it
//! happened, and how it becomes a [`Diagnostic`] that says what the key takes.

use std::fmt;
use std::ops::Range;

use serde::de::{self, Expected, Unexpected};

use super::format::Format;
use super::tree::Node;
use crate::diag::{Code, Diagnostic};

/// Identity of a node within one (immutable) tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct NodeId(usize);

impl NodeId {
    /// The identity of `node`: its address, stable while the tree lives.
    pub(crate) fn of(node: &Node) -> Self {
        Self(std::ptr::from_ref(node).addr())
    }
}

/// A deserialization error and where it happened.
#[derive(Debug)]
pub(crate) struct Error {
    problem: Problem,
    /// The innermost node being read when the error happened.
    at: Option<(NodeId, Range<usize>)>,
    /// The innermost struct field whose value failed: struct name and key.
    field: Option<(&'static str, String)>,
    /// Set when the error only follows from a problem already reported.
    pub(crate) consequence: bool,
}

#[derive(Debug)]
enum Problem {
    Type { expected: String, found: String },
    Missing { field: &'static str, context: Option<String> },
    Other(String),
}

impl Error {
    fn new(problem: Problem) -> Self {
        Self { problem, at: None, field: None, consequence: false }
    }

    /// Records `node` as where the error happened, unless a node inside it
    /// already was.
    #[must_use]
    pub(crate) fn at(mut self, node: &Node) -> Self {
        if self.at.is_none() {
            self.at = Some((NodeId::of(node), node.span.clone()));
        }
        self
    }

    /// The node the error happened in, if recorded.
    pub(crate) fn node(&self) -> Option<NodeId> {
        self.at.as_ref().map(|(id, _)| *id)
    }

    /// Records the struct field whose value failed, unless an inner one was.
    #[must_use]
    pub(crate) fn in_field(mut self, strukt: &'static str, key: &str) -> Self {
        if self.field.is_none() {
            self.field = Some((strukt, key.to_owned()));
        }
        self
    }

    /// The field a struct found missing, for an error raised by that struct.
    pub(crate) fn missing_field(&self) -> Option<&'static str> {
        match self.problem {
            Problem::Missing { field, .. } => Some(field),
            _ => None,
        }
    }

    /// Names the struct a missing field belongs to ("in each_chunk").
    #[must_use]
    pub(crate) fn in_struct(mut self, name: String) -> Self {
        if let Problem::Missing { context: context @ None, .. } = &mut self.problem {
            *context = Some(name);
        }
        self
    }

    /// The diagnostic for this error; `fallback` is the span used when the
    /// error carries none.
    pub(crate) fn into_diagnostic(self, format: Format, fallback: &Range<usize>) -> Diagnostic {
        let span = self.at.map_or_else(|| fallback.clone(), |(_, span)| span);
        let key = self.field.as_ref().map(|(_, key)| key.as_str());
        let help = self
            .field
            .as_ref()
            .and_then(|(strukt, key)| accepts(strukt, key).map(|accepts| format!("`{key}` takes {accepts}")));
        let diagnostic = match &self.problem {
            Problem::Missing { field, context } => {
                let context = context.as_deref().unwrap_or("here");
                let example = match format {
                    Format::Toml => format!("add `{field} = ...`"),
                    Format::Yaml => format!("add `{field}: ...`"),
                };
                return Diagnostic::new(Code::SpecMissingKey, format!("missing key `{field}` {context}"))
                    .at(span, format!("`{field}` is required here"))
                    .help(example);
            }
            Problem::Type { expected, found } => {
                let message = match key {
                    Some(key) => format!("wrong type for `{key}`: expected {expected}, found {found}"),
                    None => format!("expected {expected}, found {found}"),
                };
                Diagnostic::new(Code::SpecType, message).at(span, format!("expected {expected}"))
            }
            Problem::Other(message) => {
                let suggestion = did_you_mean(message);
                let message = match key {
                    Some(key) => format!("invalid `{key}`: {message}"),
                    None => message.clone(),
                };
                let diagnostic = Diagnostic::new(Code::SpecType, message).at(span, "invalid value");
                if let Some(suggestion) = suggestion {
                    return diagnostic.help(suggestion);
                }
                diagnostic
            }
        };
        match help {
            Some(help) => diagnostic.help(help),
            None => diagnostic,
        }
    }
}

/// "did you mean `failure`?" for serde's "unknown variant `failur`,
/// expected one of `success`, `failure`, `always`" (and the same for an
/// unknown field of a table read as a whole), when one is close.
fn did_you_mean(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown variant ").or_else(|| message.strip_prefix("unknown field "))?;
    let mut quoted = rest.split('`').skip(1).step_by(2);
    let given = quoted.next()?;
    crate::diag::closest(given, quoted).map(|best| format!("did you mean `{best}`?"))
}

/// What the value of `key` in struct `strukt` of a workflow file may be,
/// for help lines (none for other files read the same way, e.g. profiles).
fn accepts(strukt: &str, key: &str) -> Option<&'static str> {
    const NUMBER_OR_TEMPLATE: &str = "a number or a string like \"{{ vars.threads }}\"";
    if !matches!(strukt, "Workflow" | "TaskSpec" | "Variant" | "EachChunk") {
        return None;
    }
    Some(match (strukt, key) {
        ("EachChunk", "stdin") => "true or false",
        ("EachChunk", "lines") => NUMBER_OR_TEMPLATE,
        (
            _,
            "name" | "use" | "command" | "cwd" | "stdin" | "stdout" | "stderr" | "each_line" | "from_json" | "for_each"
            | "file",
        ) => "a string",
        (_, "argv" | "inputs" | "outputs") => "a list of strings",
        (_, "after") => "a list of task names, or tables like { task = \"dock\", on = \"failure\" }",
        (_, "env") => "a table of strings",
        (_, "cpus" | "gpus" | "nodes" | "priority" | "retries" | "crash_limit") => NUMBER_OR_TEMPLATE,
        (_, "memory") => "a number of MiB or a string like \"4 GiB\"",
        (_, "time_request" | "timeout") => "a number of seconds or a string like \"1h30m\"",
        (_, "resources") => "a table of numbers",
        (_, "variants") => "a list of tables of resource requests",
        (_, "range") => "a string like \"1-100\" or a list of integers",
        (_, "each_chunk") => "a table with `file` and `lines`",
        (_, "matrix") => "a table of lists",
        (_, "vars") => "a table of values",
        (_, "defaults") => "a table of task keys",
        (_, "templates") => "a table of templates, each a table of task keys",
        (_, "tasks") => "a list of tasks, each a table of task keys",
        _ => return None,
    })
}

/// How a value found in the file is described in messages.
fn describe(unexpected: &Unexpected<'_>) -> String {
    match unexpected {
        Unexpected::Unit => "null".to_owned(),
        Unexpected::Bool(b) => format!("`{b}`"),
        Unexpected::Signed(i) => format!("the number {i}"),
        Unexpected::Unsigned(i) => format!("the number {i}"),
        Unexpected::Float(x) => format!("the number {x}"),
        Unexpected::Str(s) => format!("the string {s:?}"),
        Unexpected::Seq => "a list".to_owned(),
        Unexpected::Map => "a table".to_owned(),
        other => other.to_string(),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            Problem::Type { expected, found } => write!(f, "expected {expected}, found {found}"),
            Problem::Missing { field, .. } => write!(f, "missing key `{field}`"),
            Problem::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::new(Problem::Other(msg.to_string()))
    }

    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Self {
        let problem = Problem::Type { expected: expected.to_string(), found: describe(&unexpected) };
        Self::new(problem)
    }

    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Self {
        Self::invalid_type(unexpected, expected)
    }

    fn invalid_length(len: usize, expected: &dyn Expected) -> Self {
        let problem = Problem::Type { expected: expected.to_string(), found: format!("{len} elements") };
        Self::new(problem)
    }

    fn missing_field(field: &'static str) -> Self {
        Self::new(Problem::Missing { field, context: None })
    }
}
