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

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = Test::new().args(["completions", shell]).success();
        assert!(out.contains("plan") && out.contains("check"), "{shell} completion lacks subcommands");
    }
    Test::new().args(["completions", "tcsh"]).invalid();
}
