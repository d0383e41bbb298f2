//! A serde [`Deserializer`](serde::Deserializer) over [`Node`]s that reports
//! every problem in a file, not only the first.
//!
//! serde stops at the first error, and a visitor cannot be run twice, so
//! [`deserialize`] works in passes. When a pass fails, the error becomes a
//! diagnostic at the innermost node it happened in, that node is *dropped*
//! (its list or table skips it as if it were not written: an optional key
//! becomes `None`, a list loses the element) and the next pass starts over.
//! A table that cannot do without a dropped key fails in turn, without a
//! second diagnostic. Unknown keys are dropped and reported as they are met
//! ([`super::node_de`]); each diagnostic is kept once across passes.
//!
//! A null (in YAML, a key with no value) reads as `None` for an optional key
//! and as an empty list or table for a list or table.

use std::collections::HashSet;

use serde::de::DeserializeOwned;

use super::de_error::NodeId;
use super::format::Format;
use super::node_de::NodeDe;
use super::pass::{Pass, Sink};
use super::tree::Node;
use crate::diag::Diagnostic;

/// Deserializes a `T` from `root`, pushing a diagnostic for every problem
/// found. Returns `None` when there were problems a `T` cannot be built
/// around (and then at least one diagnostic was pushed).
pub(crate) fn deserialize<T: DeserializeOwned>(root: &Node, format: Format, diags: &mut Vec<Diagnostic>) -> Option<T> {
    let sink = Sink::default();
    let root_id = NodeId::of(root);
    let mut dropped = HashSet::new();
    let value = loop {
        let pass = Pass::new(&sink, &dropped);
        match T::deserialize(NodeDe { node: root, pass: &pass, section: None }) {
            Ok(value) => break Some(value),
            Err(error) => {
                let id = error.node().unwrap_or(root_id);
                let last = id == root_id || dropped.contains(&id);
                if last || !error.consequence {
                    sink.push(error.into_diagnostic(format, &root.span));
                }
                if last {
                    break None;
                }
                dropped.insert(id);
            }
        }
    };
    diags.extend(sink.into_diagnostics());
    value
}
