//! [`After`]: one element of a task's `after` list — a task (or selected
//! instances) to wait for, and on which of its outcomes.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::sp::Sp;

/// `"prepare"`, `"dock[{{ index }}]"`, or `{ task = "dock", on = "failure" }`.
#[derive(Debug, Clone, PartialEq)]
pub struct After {
    /// The selector: a task name, with instances in brackets. Template.
    pub task: Sp<String>,
    /// Which outcome of those instances the waiting task runs on; `None`
    /// is `success`.
    pub on: Option<Sp<AfterOn>>,
}

/// The outcome of the instances an `after` entry waits for that lets the
/// waiting task run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AfterOn {
    /// They succeeded (or were skipped); a failure cancels the waiting task.
    #[default]
    Success,
    /// They ended, and one of them failed or was cancelled; otherwise the
    /// waiting task is skipped.
    Failure,
    /// They ended, whatever the outcome.
    Always,
}

/// `{ task = "dock", on = "failure" }`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AfterTable {
    /// The task to wait for: a name, with instances in brackets (`"dock[{{ index }}]"`). Template.
    pub task: Sp<String>,
    /// Run on its `"success"` (the default), its `"failure"` (any instance failed or was cancelled; otherwise this task is skipped), or `"always"` once it ended.
    pub on: Option<Sp<AfterOn>>,
}

/// How an entry is written, before the string form gets its span.
enum Written {
    Task(String),
    Table(AfterTable),
}

impl<'de> Deserialize<'de> for After {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Written;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a task name or a table with `task` and `on`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Written, E> {
                Ok(Written::Task(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Written, A::Error> {
                AfterTable::deserialize(de::value::MapAccessDeserializer::new(map)).map(Written::Table)
            }
        }
        struct Any(Written);
        impl<'de> Deserialize<'de> for Any {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_any(V).map(Any)
            }
        }
        let written = Sp::<Any>::deserialize(deserializer)?;
        Ok(match written.value.0 {
            Written::Task(task) => After { task: Sp::new(task, written.span), on: None },
            Written::Table(t) => After { task: t.task, on: t.on },
        })
    }
}

impl After {
    /// The outcome the entry waits for.
    pub fn on(&self) -> AfterOn {
        self.on.as_ref().map(|o| o.value).unwrap_or_default()
    }
}

impl JsonSchema for After {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "After".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let table = generator.subschema_for::<AfterTable>();
        schemars::json_schema!({
            "anyOf": [
                { "type": "string", "description": "A task to wait for the success of: `\"name\"` (all instances) or `\"name[{{ index }}]\"` (selected instances)." },
                table
            ]
        })
    }
}
