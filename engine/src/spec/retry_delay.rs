//! [`RetryDelay`]: `retry_delay`, a duration or a back-off table.

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::scalar::Quantity;
use super::sp::Sp;

/// The keys of a back-off table, in the order they are documented.
pub const BACK_OFF_KEYS: [&str; 3] = ["first", "factor", "max"];

/// `retry_delay = "30s"`, or `retry_delay = { first = "30s", factor = 2, max = "10m" }`.
#[derive(Debug, Clone, PartialEq)]
pub enum RetryDelay {
    /// The same wait before every retry (a duration, or a number of seconds).
    Fixed(Quantity),
    /// The table's entries as written, each key with its span; the compiler
    /// checks the keys ([`BACK_OFF_KEYS`]) so a misspelt one gets a suggestion.
    BackOff(Vec<(Sp<String>, Sp<Quantity>)>),
}

impl JsonSchema for RetryDelay {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RetryDelay".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                { "type": ["string", "number"], "description": "The same wait before every retry: a duration (\"30s\") or seconds." },
                {
                    "type": "object",
                    "description": "A wait that grows: `first` before the first retry, multiplied by `factor` before each later one, at most `max`.",
                    "properties": {
                        "first": { "type": ["string", "number"], "description": "The wait before the first retry (a duration). Required." },
                        "factor": { "type": "number", "description": "What each later wait is multiplied by (at least 1). Default 2." },
                        "max": { "type": ["string", "number"], "description": "The longest wait (a duration). Default: no limit." }
                    },
                    "required": ["first"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

impl<'de> Deserialize<'de> for RetryDelay {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RetryDelay;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration or a table { first, factor, max }")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RetryDelay, E> {
                Ok(RetryDelay::Fixed(Quantity::Number(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RetryDelay, E> {
                Ok(RetryDelay::Fixed(Quantity::Number(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RetryDelay, E> {
                Ok(RetryDelay::Fixed(Quantity::Number(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RetryDelay, E> {
                Ok(RetryDelay::Fixed(Quantity::Text(v.to_owned())))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RetryDelay, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Sp<String>>()? {
                    entries.push((key, map.next_value::<Sp<Quantity>>()?));
                }
                Ok(RetryDelay::BackOff(entries))
            }
        }
        deserializer.deserialize_any(V)
    }
}
