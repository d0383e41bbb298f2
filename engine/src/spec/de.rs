//! A serde [`Deserializer`] over [`Node`]s that reports every problem in a
//! file, not only the first.
//!
//! serde stops at the first error, and a visitor cannot be run twice, so
//! [`deserialize`] works in passes. When a pass fails, the error becomes a
//! diagnostic at the innermost node it happened in, that node is *dropped*
//! (its list or table skips it as if it were not written: an optional key
//! becomes `None`, a list loses the element) and the next pass starts over.
//! A table that cannot do without a dropped key fails in turn, without a
//! second diagnostic. Unknown keys are dropped and reported as they are met
//! ([`super::de_map`]); each diagnostic is kept once across passes.
//!
//! A null (in YAML, a key with no value) reads as `None` for an optional key
//! and as an empty list or table for a list or table.

use std::cell::RefCell;
use std::collections::HashSet;

use serde::de::value::StrDeserializer;
use serde::de::{DeserializeOwned, Deserializer, Error as _, IntoDeserializer, Unexpected, Visitor};
use serde_spanned::de::{SpannedDeserializer, is_spanned};

use super::de_error::{Error, NodeId};
use super::de_map::{EntriesAccess, ItemsAccess, StructAccess, struct_context};
use super::parse::Format;
use super::tree::{Node, NodeKind};
use crate::diag::{Code, Diagnostic};

/// Deserializes a `T` from `root`, pushing a diagnostic for every problem
/// found. Returns `None` when there were problems a `T` cannot be built
/// around (and then at least one diagnostic was pushed).
pub(crate) fn deserialize<T: DeserializeOwned>(root: &Node, format: Format, diags: &mut Vec<Diagnostic>) -> Option<T> {
    let sink = Sink::default();
    let root_id = NodeId::of(root);
    let mut dropped = HashSet::new();
    let value = loop {
        let ctx = Ctx { sink: &sink, dropped: &dropped };
        match T::deserialize(NodeDe { node: root, ctx: &ctx, section: None }) {
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
    diags.extend(sink.diags.into_inner());
    value
}

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
}

/// What every deserializer of one pass shares.
pub(crate) struct Ctx<'s> {
    /// Where diagnostics go.
    pub(crate) sink: &'s Sink,
    /// Nodes an earlier pass failed on; their containers skip them.
    dropped: &'s HashSet<NodeId>,
}

impl Ctx<'_> {
    /// Whether `node` is still part of the document (not dropped).
    pub(crate) fn is_live(&self, node: &Node) -> bool {
        !self.dropped.contains(&NodeId::of(node))
    }
}

/// Deserializes one node.
#[derive(Clone, Copy)]
pub(crate) struct NodeDe<'a> {
    /// The node.
    pub(crate) node: &'a Node,
    /// The pass it belongs to.
    pub(crate) ctx: &'a Ctx<'a>,
    /// Which part of the workflow a task table belongs to ("template",
    /// "defaults", "task"), for messages; `None` outside one.
    pub(crate) section: Option<&'static str>,
}

impl<'a> NodeDe<'a> {
    /// A deserializer for `node`, inside this one.
    pub(crate) fn child(self, node: &'a Node) -> Self {
        Self { node, ..self }
    }

    fn wrong_type(self, expected: &str) -> Error {
        Error::invalid_type(unexpected(&self.node.kind), &expected)
    }
}

fn unexpected(kind: &NodeKind) -> Unexpected<'_> {
    match kind {
        NodeKind::Null => Unexpected::Unit,
        NodeKind::Bool(b) => Unexpected::Bool(*b),
        NodeKind::Int(i) => Unexpected::Signed(*i),
        NodeKind::Float(x) => Unexpected::Float(*x),
        NodeKind::Str(s) => Unexpected::Str(s),
        NodeKind::Seq(_) => Unexpected::Seq,
        NodeKind::Map(_) => Unexpected::Map,
    }
}

impl<'de> IntoDeserializer<'de, Error> for NodeDe<'_> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// `deserialize_*` for an integer type: range-checked, errors at this node.
macro_rules! integer {
    ($($method:ident => $visit:ident($ty:ty),)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            let result = match self.node.kind {
                NodeKind::Int(i) => match <$ty>::try_from(i) {
                    Ok(value) => visitor.$visit(value),
                    Err(_) => Err(Error::invalid_value(
                        Unexpected::Signed(i),
                        &format!("an integer from {} to {}", <$ty>::MIN, <$ty>::MAX).as_str(),
                    )),
                },
                _ => Err(self.wrong_type("an integer")),
            };
            result.map_err(|e| e.at(self.node))
        }
    )*};
}

impl<'de> Deserializer<'de> for NodeDe<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            NodeKind::Null => visitor.visit_unit(),
            NodeKind::Bool(b) => visitor.visit_bool(*b),
            NodeKind::Int(i) => visitor.visit_i64(*i),
            NodeKind::Float(x) => visitor.visit_f64(*x),
            NodeKind::Str(s) => visitor.visit_str(s),
            NodeKind::Seq(items) => visitor.visit_seq(ItemsAccess::new(self, items)),
            NodeKind::Map(entries) => visitor.visit_map(EntriesAccess::new(self, entries)),
        };
        result.map_err(|e| e.at(self.node))
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match self.node.kind {
            NodeKind::Bool(b) => visitor.visit_bool(b),
            _ => Err(self.wrong_type("true or false")),
        };
        result.map_err(|e| e.at(self.node))
    }

    integer! {
        deserialize_i8 => visit_i8(i8),
        deserialize_i16 => visit_i16(i16),
        deserialize_i32 => visit_i32(i32),
        deserialize_i64 => visit_i64(i64),
        deserialize_i128 => visit_i128(i128),
        deserialize_u8 => visit_u8(u8),
        deserialize_u16 => visit_u16(u16),
        deserialize_u32 => visit_u32(u32),
        deserialize_u64 => visit_u64(u64),
        deserialize_u128 => visit_u128(u128),
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match self.node.kind {
            NodeKind::Float(x) => visitor.visit_f64(x),
            NodeKind::Int(i) => visitor.visit_i64(i),
            _ => Err(self.wrong_type("a number")),
        };
        result.map_err(|e| e.at(self.node))
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            NodeKind::Str(s) => visitor.visit_str(s),
            _ => Err(self.wrong_type("a string")),
        };
        result.map_err(|e| e.at(self.node))
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match self.node.kind {
            NodeKind::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        };
        result.map_err(|e| e.at(self.node))
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match self.node.kind {
            NodeKind::Null => visitor.visit_unit(),
            _ => Err(self.wrong_type("null")),
        };
        result.map_err(|e| e.at(self.node))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self).map_err(|e| e.at(self.node))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            NodeKind::Seq(items) => visitor.visit_seq(ItemsAccess::new(self, items)),
            NodeKind::Null => visitor.visit_seq(ItemsAccess::new(self, &[])),
            _ => Err(self.wrong_type("a list")),
        };
        result.map_err(|e| e.at(self.node))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            NodeKind::Map(entries) => visitor.visit_map(EntriesAccess::new(self, entries)),
            NodeKind::Null => visitor.visit_map(EntriesAccess::new(self, &[])),
            _ => Err(self.wrong_type("a table")),
        };
        result.map_err(|e| e.at(self.node))
    }

    /// A [`serde_spanned::Spanned`] (so an [`super::Sp`]) gets this node's
    /// span; any other struct reads a table, dropping and reporting keys that
    /// are not among `fields`.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if is_spanned(name) {
            let spanned = SpannedDeserializer::new(self, self.node.span.clone());
            return visitor.visit_map(spanned).map_err(|e| e.at(self.node));
        }
        let NodeKind::Map(entries) = &self.node.kind else {
            return Err(self.wrong_type("a table").at(self.node));
        };
        let access = StructAccess::new(self, entries, name, fields);
        visitor.visit_map(access).map_err(|mut error| {
            if error.node().is_none() {
                // Raised by the struct itself: a required key is missing.
                // When the key was written but dropped, it was reported.
                let dropped = error.missing_field().is_some_and(|field| {
                    entries.iter().any(|(key, value)| {
                        matches!(&key.kind, NodeKind::Str(k) if k == field)
                            && !(self.ctx.is_live(key) && self.ctx.is_live(value))
                    })
                });
                error.consequence = dropped;
                error = error.in_struct(struct_context(name, self.section));
            }
            error.at(self.node)
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            NodeKind::Str(s) => {
                let variant: StrDeserializer<'_, Error> = s.as_str().into_deserializer();
                visitor.visit_enum(variant)
            }
            _ => Err(self.wrong_type("a string")),
        };
        result.map_err(|e| e.at(self.node))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}
