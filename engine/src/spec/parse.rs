//! Reading files: [`parse`] a workflow file, [`parse_vars`] a vars file, in
//! either [`Format`], with every problem reported as a [`Diagnostic`].
//!
//! Text becomes a [`Node`] tree ([`super::tree`], [`super::yaml`]), which is
//! then deserialized ([`super::de`]). This module also names the
//! diagnostic codes of the spec layer.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::format::Format;
use super::sp::Sp;
use super::tree::{self, Node, NodeKind};
use super::workflow::Workflow;
use super::{de, yaml};
use crate::diag::{Code, Diagnostic, Source};

/// Reads a workflow file.
///
/// On failure returns every problem found, sorted by position; each has a
/// span into `source`.
pub fn parse(source: &Arc<Source>, format: Format) -> Result<Workflow, Vec<Diagnostic>> {
    match parse_recoverable(source, format) {
        (Some(workflow), diags) if diags.is_empty() => Ok(workflow),
        (_, diags) => Err(diags),
    }
}

/// Reads a workflow file as far as possible: every problem, and the
/// workflow without the values that had problems (`None` only when the text
/// cannot be read as a table at all), so later stages can report theirs too.
pub fn parse_recoverable(source: &Arc<Source>, format: Format) -> (Option<Workflow>, Vec<Diagnostic>) {
    read(source, format, "a workflow file")
}

/// Reads a vars file: a table of names to values (nested tables and lists
/// allowed), as given to `--vars-file`.
///
/// On failure returns every problem found, sorted by position; each points
/// into `source` ([`Diagnostic::source`] is set).
pub fn parse_vars(
    source: &Arc<Source>,
    format: Format,
) -> Result<BTreeMap<String, Sp<serde_json::Value>>, Vec<Diagnostic>> {
    match read(source, format, "a vars file") {
        (Some(vars), diags) if diags.is_empty() => Ok(vars),
        (_, diags) => Err(diags.into_iter().map(|diag| diag.in_source(source.clone())).collect()),
    }
}

/// Reads `source` as `T` (`what` names it in messages, e.g. "a vars file"),
/// as far as possible: every problem found, sorted by position, and the
/// value without the parts that had problems.
pub(crate) fn read<T: DeserializeOwned>(source: &Source, format: Format, what: &str) -> (Option<T>, Vec<Diagnostic>) {
    read_at(source, format, what, 0)
}

/// [`read`] for a file whose text starts at byte `base` of a longer text
/// (an included file, see [`Source::with_parts`]): the value's spans and
/// the diagnostics' are offsets into that longer text.
pub(crate) fn read_at<T: DeserializeOwned>(
    source: &Source,
    format: Format,
    what: &str,
    base: usize,
) -> (Option<T>, Vec<Diagnostic>) {
    let text = &*source.text;
    let mut diags = Vec::new();
    let root = match format {
        Format::Toml => tree::from_toml(text, &mut diags),
        Format::Yaml => yaml::from_yaml(text, &mut diags),
    };
    let value = root.and_then(|mut root| match root.kind {
        NodeKind::Map(_) => {
            root.shift(base);
            let mut found = Vec::new();
            let value = de::deserialize::<T>(&root, format, &mut found);
            diags.extend(found.into_iter().map(|mut d| {
                d.span = d.span.map(|s| s.start.saturating_sub(base)..s.end.saturating_sub(base));
                d
            }));
            value
        }
        _ => {
            diags.push(not_a_table(&root, what));
            None
        }
    });
    for diag in &mut diags {
        let span = fit(text, diag.span.clone().unwrap_or(0..0));
        diag.span = Some(span.start + base..span.end + base);
    }
    diags.sort_by_key(|diag| diag.span.as_ref().map_or(0, |span| span.start));
    // An aliased YAML node repeats the problems of its anchor.
    diags.dedup_by(|a, b| a.code == b.code && a.span == b.span && a.message == b.message);
    (value, diags)
}

fn not_a_table(root: &Node, what: &str) -> Diagnostic {
    Diagnostic::new(Code::SpecType, format!("{what} must be a table of keys"))
        .at(root.span.clone(), "expected a table")
        .help("write `key: value` lines at the top level")
}

/// `span` narrowed to lie within `text` and on character boundaries.
fn fit(text: &str, span: Range<usize>) -> Range<usize> {
    let floor = |mut at: usize| {
        at = at.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let end = floor(span.end);
    floor(span.start.min(end))..end
}
