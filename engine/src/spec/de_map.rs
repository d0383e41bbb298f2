//! serde access to the children of a node: list items ([`ItemsAccess`]),
//! table entries ([`EntriesAccess`]) and struct fields ([`StructAccess`]),
//! each skipping dropped nodes; struct fields also report unknown keys.

use std::slice;

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess};

use super::de::NodeDe;
use super::de_error::Error;
use super::tree::{Node, NodeKind};
use crate::diag::{Code, Diagnostic};

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
        let ctx = self.de.ctx;
        match self.items.find(|item| ctx.is_live(item)) {
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
        let ctx = self.de.ctx;
        match self.entries.find(|(key, value)| ctx.is_live(key) && ctx.is_live(value)) {
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

    fn unknown_key(&self, key: &Node, name: &str) -> Diagnostic {
        let context = struct_context(self.name, self.de.section);
        Diagnostic::new(Code::SpecUnknownKey, format!("unknown key `{name}` {context}"))
            .at(key.span.clone(), "unknown key")
            .help(suggest(name, self.fields))
    }
}

impl<'de> MapAccess<'de> for StructAccess<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        let ctx = self.de.ctx;
        while let Some((key, value)) = self.entries.next() {
            let NodeKind::Str(name) = &key.kind else { continue };
            if !(ctx.is_live(key) && ctx.is_live(value)) {
                continue;
            }
            if !self.fields.contains(&name.as_str()) {
                ctx.sink.push(self.unknown_key(key, name));
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

/// Where a key of struct `name` sits, for messages: "at top level",
/// "in task", "in template", "in each_chunk", ...
pub(crate) fn struct_context(name: &str, section: Option<&str>) -> String {
    match name {
        "Workflow" => "at top level".to_owned(),
        "TaskSpec" => format!("in {}", section.unwrap_or("task")),
        "Variant" => "in variant".to_owned(),
        "EachChunk" => "in each_chunk".to_owned(),
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
