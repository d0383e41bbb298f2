//! `flow schema` and `flow completions`.

use crate::support::{Test, root};

#[test]
fn checked_in_schema_is_current() {
    let printed = Test::new().args(["schema"]).success();
    let checked_in = fs_err::read_to_string(root().join("schema/workflow.schema.json")).expect("schema file");
    assert!(
        printed == checked_in,
        "schema/workflow.schema.json is stale: run `cargo run -- schema > schema/workflow.schema.json`"
    );
    let schema: serde_json::Value = serde_json::from_str(&printed).expect("schema is JSON");
    let task = &schema["$defs"]["TaskSpec"]["properties"];
    for key in ["command", "each_chunk", "variants", "after", "for_each", "matrix"] {
        assert!(task.get(key).is_some(), "schema lacks task key `{key}`");
    }
}

/// Issue 11: the schema of the `--json` output's shared objects is checked in.
#[test]
fn checked_in_output_schema_is_current() {
    let printed = Test::new().args(["schema", "output"]).success();
    let checked_in = fs_err::read_to_string(root().join("schema/output.schema.json")).expect("schema file");
    assert!(
        printed == checked_in,
        "schema/output.schema.json is stale: run `cargo run -- schema output > schema/output.schema.json`"
    );
    let schema: serde_json::Value = serde_json::from_str(&printed).expect("schema is JSON");
    assert_eq!(schema["properties"]["version"]["const"], 2);
    let defs = &schema["$defs"];
    for name in ["TaskRef", "State", "RunState", "Counts", "AttemptRecord", "RunSummary", "CheckReport", "RunStanding"]
    {
        assert!(defs.get(name).is_some(), "the output schema lacks `{name}`");
    }
    let states: Vec<&str> = defs["State"]["oneOf"]
        .as_array()
        .expect("documented states")
        .iter()
        .filter_map(|s| s["const"].as_str())
        .collect();
    assert!(states.contains(&"succeeded") && states.contains(&"cached"), "{states:?}");
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = Test::new().args(["completions", shell]).success();
        assert!(out.contains("plan") && out.contains("check"), "{shell} completion lacks subcommands");
    }
    Test::new().args(["completions", "tcsh"]).invalid();
}

/// Issue 13: the schema accepted `name` inside `[defaults]`, which `flow
/// check` rejects. Every task key is allowed in `[defaults]` and templates by
/// both, except `name` and `use`, which both reject.
#[test]
fn schema_and_checker_agree_on_defaults() {
    let schema: serde_json::Value =
        serde_json::from_str(&Test::new().args(["schema"]).success()).expect("schema is JSON");
    let task = schema["$defs"]["TaskSpec"]["properties"].as_object().expect("task keys");
    let shared = schema["$defs"]["SharedTaskKeys"]["properties"].as_object().expect("shared keys");
    assert_eq!(schema["properties"]["defaults"]["anyOf"][0]["$ref"], "#/$defs/SharedTaskKeys");
    assert_eq!(schema["properties"]["templates"]["additionalProperties"]["$ref"], "#/$defs/SharedTaskKeys");
    for key in task.keys() {
        let task_only = matches!(key.as_str(), "name" | "use");
        assert_eq!(shared.contains_key(key), !task_only, "`{key}` in the schema of [defaults]");
    }
    for key in ["name", "use"] {
        let workflow = format!("[defaults]\n{key} = \"x\"\n\n[[tasks]]\nname = \"a\"\ncommand = \"true\"\n");
        let stderr = Test::new().workflow(&workflow).args(["check"]).invalid();
        assert!(stderr.contains(&format!("`{key}` is not allowed in [defaults]")), "{stderr}");
    }
    let workflow = "[defaults]\ncpus = 2\nretries = 1\nenv = { A = \"1\" }\ncwd = \".\"\ntimeout = \"1h\"\n\n\
                    [[tasks]]\nname = \"a\"\ncommand = \"true\"\n";
    Test::new().workflow(workflow).args(["check"]).success();
}
