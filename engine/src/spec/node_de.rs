//! [`NodeDe`]: the serde [`Deserializer`] over one [`Node`], and the serde
//! access it gives a visitor to the node's children: list items
//! ([`ItemsAccess`]), table entries ([`EntriesAccess`]) and struct fields
//! ([`StructAccess`]), each skipping dropped nodes; struct fields also report
//! unknown keys.

use std::slice;

use serde::de::value::StrDeserializer;
use serde::de::{
    DeserializeSeed, Deserializer, Error as _, IntoDeserializer, MapAccess, SeqAccess, Unexpected, Visitor,
};
use serde_spanned::de::{SpannedDeserializer, is_spanned};

use super::de_error::Error;
use super::pass::Pass;
use super::tree::{Node, NodeKind};
use super::unknown_key::{struct_context, unknown_key};

/// Deserializes one node.
#[derive(Clone, Copy)]
pub(crate) struct NodeDe<'a> {
    /// The node.
    pub(crate) node: &'a Node,
    /// The pass it belongs to.
    pub(crate) pass: &'a Pass<'a>,
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
                            && !(self.pass.is_live(key) && self.pass.is_live(value))
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

/// The items of a list node.
pub(crate) struct ItemsAccess<'a> {
    de: NodeDe<'a>,
    items: slice::Iter<'a, Node>,
}

impl<'a> ItemsAccess<'a> {
    /// Access to `items`, children of `de`'s node.
    pub(crate) fn new(de: NodeDe<'a>, items: &'a [Node]) -> Self {
        Self { de, items: items.iter() }
    }
}

impl<'de> SeqAccess<'de> for ItemsAccess<'_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        let pass = self.de.pass;
        match self.items.find(|item| pass.is_live(item)) {
            Some(item) => seed.deserialize(self.de.child(item)).map(Some),
            None => Ok(None),
        }
    }
}

/// The entries of a table node read as a map.
pub(crate) struct EntriesAccess<'a> {
    de: NodeDe<'a>,
    entries: slice::Iter<'a, (Node, Node)>,
    value: Option<&'a Node>,
}

impl<'a> EntriesAccess<'a> {
    /// Access to `entries`, children of `de`'s node.
    pub(crate) fn new(de: NodeDe<'a>, entries: &'a [(Node, Node)]) -> Self {
        Self { de, entries: entries.iter(), value: None }
    }
}

impl<'de> MapAccess<'de> for EntriesAccess<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        let pass = self.de.pass;
        match self.entries.find(|(key, value)| pass.is_live(key) && pass.is_live(value)) {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(self.de.child(key)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(self.de.child(value)),
            None => Err(Error::custom("a table value was read before its key")),
        }
    }
}

/// The entries of a table node read as the fields of struct `name`.
pub(crate) struct StructAccess<'a> {
    de: NodeDe<'a>,
    entries: slice::Iter<'a, (Node, Node)>,
    name: &'static str,
    fields: &'static [&'static str],
    value: Option<(&'a str, &'a Node)>,
}

impl<'a> StructAccess<'a> {
    /// Access to `entries`, children of `de`'s node, as the `fields` of `name`.
    pub(crate) fn new(
        de: NodeDe<'a>,
        entries: &'a [(Node, Node)],
        name: &'static str,
        fields: &'static [&'static str],
    ) -> Self {
        Self { de, entries: entries.iter(), name, fields, value: None }
    }
}

impl<'de> MapAccess<'de> for StructAccess<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        let pass = self.de.pass;
        for (key, value) in self.entries.by_ref() {
            let NodeKind::Str(name) = &key.kind else { continue };
            if !(pass.is_live(key) && pass.is_live(value)) {
                continue;
            }
            if !self.fields.contains(&name.as_str()) {
                pass.sink.push(unknown_key(key, name, self.name, self.de.section, self.fields));
                continue;
            }
            self.value = Some((name, value));
            return seed.deserialize(self.de.child(key)).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some((key, value)) = self.value.take() else {
            return Err(Error::custom("a table value was read before its key"));
        };
        let section = match (self.name, key) {
            ("Workflow", "templates") => Some("template"),
            ("Workflow", "defaults") => Some("defaults"),
            ("Workflow", "tasks") => Some("task"),
            _ => self.de.section,
        };
        let de = NodeDe { node: value, section, ..self.de };
        seed.deserialize(de).map_err(|e| e.in_field(self.name, key))
    }
}
