//! The workflow file as written: [`Workflow`] and its parts, each value kept
//! with its source span ([`Sp`]).
//!
//! This module owns parsing TOML and YAML into one model. It never knows
//! about graphs, templates being rendered, or processes; [`crate::compile`]
//! turns a [`Workflow`] into an [`crate::ir::Graph`].

mod de;
mod de_error;
mod de_map;
mod parse;
#[cfg(test)]
mod parse_tests;
mod scalar;
mod sp;
mod tree;
mod workflow;
mod yaml;

pub(crate) use parse::read;
pub use parse::{Format, parse, parse_recoverable, parse_vars};
pub use scalar::{Quantity, RangeSpec, Text};
pub use sp::Sp;
pub use workflow::{EachChunk, TaskSpec, Variant, Workflow};

/// The JSON Schema of the workflow file, generated from [`Workflow`].
pub fn json_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(Workflow);
    serde_json::to_value(schema).expect("a JSON schema always serializes")
}
