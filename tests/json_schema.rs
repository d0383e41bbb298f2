//! Every object each `--json` command prints, on real runs — a success, a
//! failure with a retry, a rerun, a stage known only at run time — is
//! valid against its entry in `flow schema output`, so a field renamed
//! without the schema fails here.

use std::time::Duration;

use flow_engine::rundir::{RunDir, STATE_DIR};

use crate::support::Test;
use crate::support::process::{finish, read, spawn_flow_out, wait_child, wait_for};

const WORKFLOW: &str = r#"
name = "schema"

[[tasks]]
name = "list"
command = "printf 'a\nb\n' > items.txt"
outputs = ["items.txt"]

[[tasks]]
name = "each"
each_line = "items.txt"
command = "echo item {{ item }}"

[[tasks]]
name = "score"
range = "1-3"
retries = 1
command = "echo scoring {{ index }}; test {{ index }} -ne 2 || { echo bad input >&2; exit 3; }"
after = ["list"]
"#;

/// The `$defs` entry `flow schema output` names for `command`, as a validator.
fn validator(schema: &serde_json::Value, command: &str) -> jsonschema::Validator {
    let key = format!("flow {command} --json");
    let reference = schema["x-commands"][&key]["$ref"].as_str().unwrap_or_else(|| panic!("no schema for `{key}`"));
    let mut root = schema.clone();
    root["$ref"] = serde_json::Value::String(reference.to_owned());
    jsonschema::validator_for(&root).expect("the schema compiles")
}

/// Checks every object `out` holds (a document, or NDJSON) against `command`'s entry.
fn check(schema: &serde_json::Value, command: &str, out: &str) -> usize {
    let validator = validator(schema, command);
    let objects: Vec<serde_json::Value> = match serde_json::from_str(out) {
        Ok(document) => vec![document],
        Err(_) => out.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect(),
    };
    for object in &objects {
        let errors: Vec<String> =
            validator.iter_errors(object).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "`flow {command} --json` printed {object}:\n{}", errors.join("\n"));
        assert_eq!(object["version"], schema["properties"]["version"]["const"], "{object}");
    }
    objects.len()
}

#[test]
fn every_command_prints_what_the_schema_says() {
    let t = Test::new().workflow(WORKFLOW);
    let schema: serde_json::Value = serde_json::from_str(&t.success_with(&["schema", "output"])).expect("JSON");
    let json = |command: &str, args: &[&str]| {
        let out = t.run_with(args);
        assert!(out.code == 0 || out.code == 1, "{args:?}: exit {}\n{}", out.code, out.stderr);
        check(&schema, command, &out.stdout)
    };
    assert!(json("check", &["check", "--json"]) == 1);
    json("plan --why", &["plan", "--why", "--json"]);
    assert!(json("run", &["run", "--json", "--cpus", "1"]) > 5);
    json("run", &["run", "--json", "--cpus", "1"]);
    json("status", &["status", "--json"]);
    json("runs", &["runs", "--json"]);
    json("workers", &["workers", "--json"]);
    json("alloc list", &["alloc", "list", "--json"]);
    assert!(json("explain", &["explain", "--json", "score"]) == 3);
    assert!(json("explain", &["explain", "--json", "each"]) == 2);
    assert!(json("log list", &["log", "list", "--json"]) >= 6);
    json("log summary", &["log", "summary", "--json"]);
    assert!(json("log grep", &["log", "grep", "--json", "scoring"]) >= 1);
    assert!(json("log export", &["log", "export", "--json"]) >= 1);
    json("log cat", &["log", "cat", "--json", "score"]);
    json("log tail", &["log", "tail", "--json"]);
    json("report", &["report", "--json", "-o", "report.html"]);
    json("clean", &["clean", "--dry-run", "--json"]);
    json("clean", &["clean", "--json"]);
}

#[test]
fn a_renamed_field_is_caught() {
    let t = Test::new();
    let schema: serde_json::Value = serde_json::from_str(&t.success_with(&["schema", "output"])).expect("JSON");
    let line = r#"{"version":2,"task":"a","index":0,"label":"a","attempt":0,"stream":"stdout","time_us":1,"data":"x"}"#;
    assert_eq!(check(&schema, "log export", line), 1);
    let renamed = line.replace("time_us", "at_us");
    let result = std::panic::catch_unwind(|| check(&schema, "log export", &renamed));
    assert!(result.is_err(), "a record without `time_us` passed");
}

#[test]
fn a_remote_worker_and_its_run_print_what_the_schema_says() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\nrange = \"1-3\"\ncommand = \"echo {{ index }}\"\n");
    let schema: serde_json::Value = serde_json::from_str(&t.success_with(&["schema", "output"])).expect("JSON");
    let mut run = spawn_flow_out(&t, &["run", "--listen", "127.0.0.1:0", "--no-local-worker", "--json"], "run.json");
    let listening = || RunDir::latest(&t.path().join(STATE_DIR)).filter(|run| run.access().exists());
    if !wait_for(Duration::from_secs(10), || listening().is_some()) {
        let _ = run.kill();
        panic!("no access file; stderr:\n{}", read(&t, "run.json.stderr"));
    }
    let access = listening().expect("a run").access();
    let access = access.to_str().expect("a UTF-8 path");
    let mut worker = spawn_flow_out(&t, &["worker", "--access", access, "--cpus", "1", "--json"], "worker.json");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0, "{}", read(&t, "run.json.stderr"));
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some(), "the worker did not leave");
    let events = read(&t, "run.json");
    assert!(events.contains("\"event\":\"worker_joined\""), "{events}");
    check(&schema, "run", &events);
    let worker = read(&t, "worker.json");
    assert_eq!(check(&schema, "worker", &worker), 3, "{worker}");
    // Issue 28: a script can tell when the worker is in the run.
    let events: Vec<String> = worker
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON")["event"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(events, ["started", "joined", "left"], "{worker}");
    assert!(worker.contains("\"event\":\"joined\",\"address\":\"127.0.0.1:"), "{worker}");
    assert!(worker.contains("\"rejoined\":false"), "{worker}");
    assert!(worker.contains("\"reason\":\"run_ended\""), "{worker}");
    check(&schema, "workers", &t.success_with(&["workers", "--json"]));
    check(&schema, "log list", &t.success_with(&["log", "list", "--json"]));
}
