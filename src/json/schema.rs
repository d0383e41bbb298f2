//! [`schema`]: the JSON Schema of the output's shared objects and command
//! shapes, as `flow schema output` prints it.

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};

use super::{Counts, RunState, State, TaskRef, VERSION};

/// The schema: every printed object has `version`; `$defs` holds the shared
/// objects and the documents of the commands that print one.
pub fn schema() -> serde_json::Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    add::<TaskRef>(&mut generator);
    add::<State>(&mut generator);
    add::<RunState>(&mut generator);
    add::<Counts>(&mut generator);
    add::<crate::log_cmd::AttemptRecord>(&mut generator);
    add::<crate::log_cmd::RunSummary>(&mut generator);
    add::<crate::check_cmd::CheckReport>(&mut generator);
    add::<crate::status_cmd::RunStanding>(&mut generator);
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("flow JSON output, version {VERSION}"),
        "description": "Every object flow prints with --json carries `version`. Times and durations are in µs, \
                        sizes in bytes, attempts count from 0; an instance is named by the fields of TaskRef.",
        "type": "object",
        "properties": { "version": { "const": VERSION } },
        "required": ["version"],
        "$defs": generator.take_definitions(true),
    })
}

fn add<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}
