//! [`Sp`]: a value together with the byte range of the file text it came from.

use std::borrow::Cow;
use std::ops::Range;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};

/// A value from the workflow file and the byte range it was written at.
///
/// Deserializes through [`serde_spanned::Spanned`], so any deserializer that
/// supports spans (flow's own tree deserializer, `toml`) fills in the range.
#[derive(Debug, Clone, PartialEq)]
pub struct Sp<T> {
    /// The parsed value.
    pub value: T,
    /// Byte offsets of the value in the source text.
    pub span: Range<usize>,
}

impl<T> Sp<T> {
    /// Wraps `value` with `span`.
    pub fn new(value: T, span: Range<usize>) -> Self {
        Self { value, span }
    }

    /// The same span around a transformed value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Sp<U> {
        Sp { value: f(self.value), span: self.span }
    }

    /// Borrows the value, keeping the span.
    pub fn as_ref(&self) -> Sp<&T> {
        Sp { value: &self.value, span: self.span.clone() }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Sp<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = serde_spanned::Spanned::<T>::deserialize(deserializer)?;
        let span = spanned.span();
        Ok(Self { value: spanned.into_inner(), span })
    }
}

impl<T: JsonSchema> JsonSchema for Sp<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}
