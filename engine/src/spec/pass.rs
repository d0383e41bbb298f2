//! [`Pass`]: what the deserializers of one pass over a tree share, the
//! [`Sink`] its diagnostics go to and the nodes earlier passes dropped.

use std::cell::RefCell;
use std::collections::HashSet;

use super::de_error::NodeId;
use super::tree::Node;
use crate::diag::{Code, Diagnostic};

/// What makes two diagnostics the same: code, span and message.
type Identity = (Code, Option<(usize, usize)>, String);

/// Collects diagnostics across passes, keeping one copy of each.
#[derive(Default)]
pub(crate) struct Sink {
    diags: RefCell<Vec<Diagnostic>>,
    seen: RefCell<HashSet<Identity>>,
}

impl Sink {
    /// Records `diagnostic` unless an identical one was recorded before.
    pub(crate) fn push(&self, diagnostic: Diagnostic) {
        let span = diagnostic.span.as_ref().map(|span| (span.start, span.end));
        if self.seen.borrow_mut().insert((diagnostic.code, span, diagnostic.message.clone())) {
            self.diags.borrow_mut().push(diagnostic);
        }
    }

    /// The diagnostics recorded, in the order they were.
    pub(crate) fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diags.into_inner()
    }
}

/// What every deserializer of one pass shares.
pub(crate) struct Pass<'s> {
    /// Where diagnostics go.
    pub(crate) sink: &'s Sink,
    /// Nodes an earlier pass failed on; their containers skip them.
    dropped: &'s HashSet<NodeId>,
}

impl<'s> Pass<'s> {
    /// A pass that reports to `sink` and skips the `dropped` nodes.
    pub(crate) fn new(sink: &'s Sink, dropped: &'s HashSet<NodeId>) -> Self {
        Self { sink, dropped }
    }

    /// Whether `node` is still part of the document (not dropped).
    pub(crate) fn is_live(&self, node: &Node) -> bool {
        !self.dropped.contains(&NodeId::of(node))
    }
}
