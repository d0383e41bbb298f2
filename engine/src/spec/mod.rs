//! The workflow file as written: [`Workflow`] and its parts, each value kept
//! with its source span ([`Sp`]).
//!
//! This module owns parsing TOML and YAML into one model. It never knows
//! about graphs, templates being rendered, or processes; [`crate::compile`]
//! turns a [`Workflow`] into an [`crate::ir::Graph`].

mod after;
mod de;
mod de_error;
mod finally_spec;
mod format;
mod include;
mod loader;
mod namespace;
mod node_de;
mod parse;
#[cfg(test)]
mod parse_tests;
mod pass;
mod retry_delay;
mod scalar;
mod sp;
mod tree;
mod unknown_key;
mod workflow;
mod yaml;

pub use after::{After, AfterOn, AfterTable};
pub use finally_spec::FinallySpec;
pub use format::Format;
pub use include::{Include, IncludeTable};
pub use loader::load;
pub(crate) use parse::read;
pub use parse::{parse, parse_recoverable, parse_vars};
pub use retry_delay::{BACK_OFF_KEYS, RetryDelay};
pub use scalar::{Quantity, RangeSpec, Text};
pub use sp::Sp;
pub use workflow::{Containers, EachChunk, TaskSpec, Variant, Workflow};

/// The JSON Schema of the workflow file, generated from [`Workflow`].
pub fn json_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(Workflow);
    let mut schema = serde_json::to_value(schema).expect("a JSON schema always serializes");
    shared_keys_only(&mut schema);
    schema
}

/// Keys a task has that `[defaults]` and `[templates.NAME]` may not (the
/// compiler rejects them there: `flow::compile::misplaced_key`).
pub const TASK_ONLY_KEYS: [&str; 2] = ["name", "use"];

/// Points `defaults` and `templates` at a copy of the task schema without
/// [`TASK_ONLY_KEYS`], so an editor flags them where `flow check` does.
fn shared_keys_only(schema: &mut serde_json::Value) {
    let mut shared = schema["$defs"]["TaskSpec"].clone();
    if let Some(properties) = shared["properties"].as_object_mut() {
        for key in TASK_ONLY_KEYS {
            properties.remove(key);
        }
    }
    shared["description"] = "Keys a task inherits: every task key except `name` and `use`.".into();
    schema["$defs"]["SharedTaskKeys"] = shared;
    let reference = serde_json::json!({ "$ref": "#/$defs/SharedTaskKeys" });
    schema["properties"]["defaults"]["anyOf"][0] = reference.clone();
    schema["properties"]["templates"]["additionalProperties"] = reference;
}
