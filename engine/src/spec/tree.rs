//! [`Node`]: the format-neutral value tree that TOML and YAML files are read
//! into before deserialization, every value and key with its byte span.
//!
//! This module owns the tree and reading TOML into it ([`from_toml`]);
//! [`super::yaml`] reads YAML into it. Syntax errors and values flow cannot
//! represent (dates, numbers beyond 64 bits) become [`Diagnostic`]s here.

use std::ops::Range;

use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue};

use crate::diag::{Code, Diagnostic};

/// Deepest nesting of lists and tables accepted, in either format. A run
/// writes what the compiler accepts to its run directory as JSON, whose
/// reader stops at 128 levels; this leaves room for the levels the graph
/// and includes add around a value (issue 29).
pub(crate) const MAX_DEPTH: usize = 64;

/// One value of the file and the byte range it was written at.
#[derive(Debug)]
pub(crate) struct Node {
    /// The value.
    pub(crate) kind: NodeKind,
    /// Byte offsets of the value in the source text.
    pub(crate) span: Range<usize>,
}

/// The value of a [`Node`].
#[derive(Debug)]
pub(crate) enum NodeKind {
    /// YAML `null`, `~` or an empty value (TOML has none).
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A string.
    Str(String),
    /// An array / sequence.
    Seq(Vec<Node>),
    /// A table / mapping in file order; every key is a [`NodeKind::Str`] node
    /// spanning the key itself, and keys are unique.
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// A node of `kind` at `span`.
    pub(crate) fn new(kind: NodeKind, span: Range<usize>) -> Self {
        Self { kind, span }
    }

    /// Where the first value nested deeper than [`MAX_DEPTH`] starts, this
    /// node being at `depth`. TOML's parser stops well before the stack is at
    /// risk, so its trees can be walked recursively.
    fn too_deep(&self, depth: usize) -> Option<usize> {
        if depth > MAX_DEPTH {
            return Some(self.span.start);
        }
        match &self.kind {
            NodeKind::Seq(items) => items.iter().find_map(|n| n.too_deep(depth + 1)),
            NodeKind::Map(entries) => entries.iter().find_map(|(_, v)| v.too_deep(depth + 1)),
            _ => None,
        }
    }

    /// Moves this node's span and those of everything inside it `by` bytes on.
    pub(crate) fn shift(&mut self, by: usize) {
        self.span = self.span.start + by..self.span.end + by;
        match &mut self.kind {
            NodeKind::Seq(items) => items.iter_mut().for_each(|n| n.shift(by)),
            NodeKind::Map(entries) => entries.iter_mut().for_each(|(k, v)| {
                k.shift(by);
                v.shift(by);
            }),
            _ => {}
        }
    }
}

/// Reads a TOML document.
///
/// Returns `None` when the text is not valid TOML, after pushing one
/// [`Code::SpecSyntax`] (or [`Code::SpecDuplicateKey`]) diagnostic per error the parser
/// recovered from. Dates and out-of-range numbers are reported as [`Code::SpecType`]
/// diagnostics but kept (as their text) in the tree, so the rest of the file
/// is still checked.
pub(crate) fn from_toml(text: &str, diags: &mut Vec<Diagnostic>) -> Option<Node> {
    let (root, errors) = DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        for error in errors {
            let span = error.span().unwrap_or(0..0);
            let message = error.message();
            let diag = if message.starts_with("duplicate key") {
                let key = text.get(span.clone()).unwrap_or_default().trim().trim_matches('"');
                Diagnostic::new(Code::SpecDuplicateKey, format!("duplicate key `{key}`"))
                    .at(span, "set again here")
                    .help(format!("`{key}` is already set earlier in this table; keep one of them"))
            } else {
                Diagnostic::new(Code::SpecSyntax, message.trim_end().to_owned())
                    .at(span, "invalid TOML")
                    .help("check the quotes, brackets and `=` near here (TOML syntax: https://toml.io)")
            };
            diags.push(diag);
        }
        return None;
    }
    let entries = toml_entries(text, root.get_ref(), diags);
    let root = Node::new(NodeKind::Map(entries), 0..text.len());
    if let Some(at) = root.too_deep(0) {
        diags.push(too_deep(at));
        return None;
    }
    Some(root)
}

/// The problem of a value nested deeper than [`MAX_DEPTH`], at byte `at`.
pub(crate) fn too_deep(at: usize) -> Diagnostic {
    Diagnostic::new(Code::SpecSyntax, "the document is nested too deeply")
        .at(at..at, "here")
        .help(format!("flow reads at most {MAX_DEPTH} levels of lists and tables inside each other"))
}

/// The entries of a TOML table in file order (the parser sorts them by name).
fn toml_entries(text: &str, table: &DeTable<'_>, diags: &mut Vec<Diagnostic>) -> Vec<(Node, Node)> {
    let mut entries: Vec<(Node, Node)> = table
        .iter()
        .map(|(key, value)| {
            let key_node = Node::new(NodeKind::Str(key.get_ref().to_string()), key.span());
            (key_node, toml_value(text, value, diags))
        })
        .collect();
    entries.sort_by_key(|(key, _)| key.span.start);
    entries
}

fn toml_value(text: &str, value: &Spanned<DeValue<'_>>, diags: &mut Vec<Diagnostic>) -> Node {
    let span = value.span();
    let raw = || NodeKind::Str(text.get(span.clone()).unwrap_or_default().to_owned());
    let kind = match value.get_ref() {
        DeValue::String(s) => NodeKind::Str(s.to_string()),
        DeValue::Boolean(b) => NodeKind::Bool(*b),
        DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(i) => NodeKind::Int(i),
            Err(_) => {
                diags.push(out_of_range(span.clone()));
                raw()
            }
        },
        DeValue::Float(f) => match f.as_str().parse::<f64>() {
            Ok(x) if x.is_finite() || f.as_str().contains("inf") => NodeKind::Float(x),
            Ok(x) if x.is_nan() => {
                diags.push(
                    Diagnostic::new(Code::SpecType, "`nan` is not a number flow can use")
                        .at(span.clone(), "not a number")
                        .help("write a number, or quote the value to pass it on as a string"),
                );
                raw()
            }
            _ => {
                diags.push(out_of_range(span.clone()));
                raw()
            }
        },
        DeValue::Datetime(_) => {
            diags.push(
                Diagnostic::new(Code::SpecType, "dates are not supported; quote the value")
                    .at(span.clone(), "a TOML date")
                    .help("write it in quotes to pass it on as a string"),
            );
            raw()
        }
        DeValue::Array(items) => NodeKind::Seq(items.iter().map(|item| toml_value(text, item, diags)).collect()),
        DeValue::Table(table) => NodeKind::Map(toml_entries(text, table, diags)),
    };
    Node::new(kind, span)
}

fn out_of_range(span: Range<usize>) -> Diagnostic {
    Diagnostic::new(Code::SpecType, "number is out of range")
        .at(span, "does not fit in 64 bits")
        .help("use a number between -9223372036854775808 and 9223372036854775807")
}
