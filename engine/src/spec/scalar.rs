//! Scalar value types that accept more than one spelling in the file.

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

/// A number, or a string that is a template or carries a unit
/// (`cpus = 4`, `cpus = "{{ vars.threads }}"`, `memory = "4 GiB"`, `timeout = "90s"`).
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(untagged)]
pub enum Quantity {
    /// A plain number.
    Number(f64),
    /// A string: a template, or a number with a unit.
    Text(String),
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity::Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity::Number(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity::Number(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity::Text(v.to_owned()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A string; numbers and booleans are accepted and kept as their text
/// (`env = { OMP_NUM_THREADS = 4 }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text(pub String);

impl JsonSchema for Text {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Text".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": ["string", "number", "boolean"] })
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_owned()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// The domain of a `range` expansion: `"1-1000"`, `"1-100:2"`, `"1,5,10-20"`,
/// or a list of integers.
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema)]
#[schemars(untagged)]
pub enum RangeSpec {
    /// Comma-separated `N`, `A-B` or `A-B:STEP` parts (may be a template).
    Text(String),
    /// Explicit indices.
    List(Vec<i64>),
}

impl<'de> Deserialize<'de> for RangeSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RangeSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a range like \"1-100\" or a list of integers")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RangeSpec, E> {
                Ok(RangeSpec::List(vec![v]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RangeSpec, E> {
                i64::try_from(v).map(|v| RangeSpec::List(vec![v])).map_err(|_| E::custom("range index is too large"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RangeSpec, E> {
                Ok(RangeSpec::Text(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RangeSpec, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<i64>()? {
                    out.push(v);
                }
                Ok(RangeSpec::List(out))
            }
        }
        deserializer.deserialize_any(V)
    }
}
