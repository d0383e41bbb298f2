//! [`schema`]: the JSON Schema of the output's shared objects and command
//! shapes, as `flow schema output` prints it.

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};

use super::{
    AllocList, AttemptRecord, CheckReport, CleanReport, Counts, Explained, OutputChunk, OutputLine, ReportWritten,
    RunEvent, RunList, RunStanding, RunState, RunSummary, State, StatusReport, TaskRef, VERSION, Worker, WorkerEvent,
    WorkerList, WorkerRef,
};

/// The schema: every printed object has `version`; `$defs` holds the shared
/// objects and, under the names [`DOCUMENTS`] gives, the document or
/// stream object of every command.
pub fn schema() -> serde_json::Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    add::<TaskRef>(&mut generator);
    add::<WorkerRef>(&mut generator);
    add::<Worker>(&mut generator);
    add::<State>(&mut generator);
    add::<RunState>(&mut generator);
    add::<Counts>(&mut generator);
    add::<RunEvent>(&mut generator);
    add::<CheckReport>(&mut generator);
    add::<StatusReport>(&mut generator);
    add::<RunList>(&mut generator);
    add::<RunStanding>(&mut generator);
    add::<WorkerList>(&mut generator);
    add::<AllocList>(&mut generator);
    add::<Explained>(&mut generator);
    add::<flow_engine::runtime::TaskPreview>(&mut generator);
    add::<AttemptRecord>(&mut generator);
    add::<RunSummary>(&mut generator);
    add::<OutputLine>(&mut generator);
    add::<OutputChunk>(&mut generator);
    add::<ReportWritten>(&mut generator);
    add::<CleanReport>(&mut generator);
    add::<WorkerEvent>(&mut generator);
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("flow JSON output, version {VERSION}"),
        "description": "Every object flow prints with --json carries `version`. Times and durations are in µs, \
                        sizes in bytes, attempts count from 0; an instance is named by the fields of TaskRef.",
        "type": "object",
        "properties": { "version": { "const": VERSION } },
        "required": ["version"],
        "x-commands": commands(),
        "$defs": closed(generator.take_definitions(true)),
    })
}

/// Each command that prints JSON and the `$defs` entry of what it prints
/// (its document, or each object of its stream).
pub const DOCUMENTS: &[(&str, &str)] = &[
    ("run", "RunEvent"),
    ("check", "CheckReport"),
    ("status", "StatusReport"),
    ("runs", "RunList"),
    ("workers", "WorkerList"),
    ("alloc list", "AllocList"),
    ("explain", "Explained"),
    ("plan --why", "TaskPreview"),
    ("log list", "AttemptRecord"),
    ("log summary", "RunSummary"),
    ("log grep", "OutputLine"),
    ("log export", "OutputChunk"),
    ("log cat", "OutputChunk"),
    ("log tail", "OutputChunk"),
    ("report", "ReportWritten"),
    ("clean", "CleanReport"),
    ("worker", "WorkerEvent"),
];

/// `defs` with `unevaluatedProperties: false` on each object (or each
/// variant of a tagged enum): flow prints no field the schema does not
/// name, so a renamed field fails validation. What a command prints at the
/// top level also gets `version`.
fn closed(mut defs: serde_json::Map<String, serde_json::Value>) -> serde_json::Map<String, serde_json::Value> {
    for (name, def) in defs.iter_mut() {
        let printed = DOCUMENTS.iter().any(|(_, d)| d == name);
        // An object with a flattened enum has both `properties` and
        // `oneOf`: closed at its root, which sees what `oneOf` evaluates.
        let objects: Vec<&mut serde_json::Value> = match def.get("properties") {
            Some(_) => vec![def],
            None => def.get_mut("oneOf").and_then(serde_json::Value::as_array_mut).into_iter().flatten().collect(),
        };
        for object in objects {
            let Some(object) = object.as_object_mut().filter(|o| o.contains_key("properties")) else { continue };
            if printed {
                if let Some(properties) = object.get_mut("properties").and_then(serde_json::Value::as_object_mut) {
                    properties.insert("version".to_owned(), serde_json::json!({ "const": VERSION }));
                }
                if let Some(required) = object.get_mut("required").and_then(serde_json::Value::as_array_mut) {
                    required.insert(0, "version".into());
                }
            }
            object.insert("unevaluatedProperties".to_owned(), false.into());
        }
    }
    defs
}

/// `flow <command> --json` → a reference to what it prints.
fn commands() -> serde_json::Map<String, serde_json::Value> {
    let reference = |def: &str| serde_json::json!({ "$ref": format!("#/$defs/{def}") });
    DOCUMENTS.iter().map(|(command, def)| (format!("flow {command} --json"), reference(def))).collect()
}

fn add<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}
