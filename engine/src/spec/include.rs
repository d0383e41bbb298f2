//! [`Include`]: one element of a workflow file's `include` list.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::sp::Sp;

/// Another workflow file whose `vars`, `templates` and `tasks` come in
/// under a namespace: `"lib/ligen.toml"`, or a table naming the file, the
/// namespace and values for its variables.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(untagged)]
pub enum Include {
    /// The file's path, relative to the including file; the namespace is its stem.
    Path(String),
    /// The file, and optionally its namespace and variables.
    Table(IncludeTable),
}

/// `{ path = "lib/ligen.toml", as = "lg", vars = { receptor = "x.pdb" } }`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IncludeTable {
    /// The file, relative to the including file (TOML or YAML).
    pub path: Sp<String>,
    /// The namespace its tasks and templates are named under (`lg.score`). Default: the file's stem.
    #[serde(rename = "as")]
    pub namespace: Option<Sp<String>>,
    /// Values for the included file's `vars`, overriding its own.
    #[serde(default)]
    pub vars: BTreeMap<String, Sp<serde_json::Value>>,
}

impl<'de> Deserialize<'de> for Include {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Include;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a file path or a table with `path`, `as` and `vars`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Include, E> {
                Ok(Include::Path(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Include, A::Error> {
                IncludeTable::deserialize(de::value::MapAccessDeserializer::new(map)).map(Include::Table)
            }
        }
        deserializer.deserialize_any(V)
    }
}
