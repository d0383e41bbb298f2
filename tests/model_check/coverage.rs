//! The generator's reach (issue 26): every key of the workflow schema is
//! drawn by the grammar or listed here as exempt with a reason, and every
//! option of `flow run` is drawn, exempt, or does not change what runs. A
//! new key or option fails this test until it has a generator rule or a
//! reason. What the grammar draws is read from the workflow files it
//! writes, not taken on trust.

use std::collections::BTreeSet;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::included;
use super::sources::Sources;
use super::workflows::{Draw, shape};
use crate::support::process::flow_bin;

/// The keys the grammar writes, with every feature switched on.
const DRAWN: &[&str] = &[
    "after",
    "argv",
    "as",
    "command",
    "continue_on_failure",
    "cpus",
    "crash_limit",
    "cwd",
    "defaults",
    "each_chunk",
    "each_line",
    "env",
    "factor",
    "file",
    "finally",
    "first",
    "for_each",
    "from_json",
    "gpus",
    "implicit_inputs",
    "include",
    "inputs",
    "lines",
    "matrix",
    "max",
    "max_fails",
    "memory",
    "name",
    "nodes",
    "on",
    "outputs",
    "path",
    "priority",
    "range",
    "resources",
    "retries",
    "retry_delay",
    "retry_on",
    "setup",
    "stderr",
    "stdin",
    "stdout",
    "task",
    "tasks",
    "templates",
    "time_request",
    "timeout",
    "use",
    "variants",
    "vars",
    "when",
];

/// Why containers are not drawn.
const NO_PODMAN: &str = "needs Podman, which the README's test command cannot assume; covered by tests/containers.rs, which CI runs with Podman";

/// Keys of the schema the grammar does not draw yet, and why.
const EXEMPT: &[(&str, &str)] = &[("container", NO_PODMAN), ("containers", NO_PODMAN), ("engine", NO_PODMAN)];

/// Options of `flow run` that change what runs, drawn by the model check.
const RUN_FLAGS_DRAWN: &[&str] = &[
    "--cpus",
    "--var",
    "--vars",
    "--dry-exec",
    "--json",
    "--force",
    "--only",
    "--listen",
    "--no-local-worker",
    "--profile",
    "--gpus",
    "--memory",
    "--resource",
    "--max-fails",
    "--keep-going",
    "--keep-stale-outputs",
];

/// Options of `flow run` that change what runs, not drawn yet, and why.
const RUN_FLAGS_EXEMPT: &[(&str, &str)] = &[("--max-instances", "a limit on expansion: an error, not a rerun")];

/// Options of `flow run` that do not change what runs.
const RUN_FLAGS_INERT: &[&str] = &["--color", "--bind-cpus", "--share-with-group", "--report", "--help", "--version"];

/// Every property name in `schema`, at any depth.
fn schema_keys(schema: &serde_json::Value, keys: &mut BTreeSet<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                if k == "properties"
                    && let Some(props) = v.as_object()
                {
                    keys.extend(props.keys().cloned());
                }
                schema_keys(v, keys);
            }
        }
        serde_json::Value::Array(list) => list.iter().for_each(|v| schema_keys(v, keys)),
        _ => {}
    }
}

/// Every key a workflow file uses, at any depth; the names a user picks
/// (variables, environment variables, matrix axes, template names,
/// custom resources) are
/// not keys of the language.
fn file_keys(value: &toml::Value, keys: &mut BTreeSet<String>) {
    match value {
        toml::Value::Table(table) => {
            for (k, v) in table {
                keys.insert(k.clone());
                match (k.as_str(), v) {
                    ("vars" | "env" | "matrix" | "resources", _) => {}
                    ("templates", toml::Value::Table(templates)) => {
                        templates.values().for_each(|t| file_keys(t, keys));
                    }
                    _ => file_keys(v, keys),
                }
            }
        }
        toml::Value::Array(list) => list.iter().for_each(|v| file_keys(v, keys)),
        _ => {}
    }
}

#[test]
fn the_generator_draws_every_key_of_the_schema_or_says_why_not() {
    let text = fs_err::read_to_string(crate::support::root().join("schema/workflow.schema.json")).expect("schema");
    let mut schema = BTreeSet::new();
    schema_keys(&serde_json::from_str(&text).expect("schema JSON"), &mut schema);

    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &[26; 32]));
    let strategy = shape(&Draw::everything());
    let mut written = BTreeSet::new();
    for _ in 0..400 {
        let files = Sources::new().files(&strategy.new_tree(&mut runner).expect("a shape").current());
        for name in ["workflow.toml", included::PATH].into_iter().filter(|n| files.contains_key(n)) {
            file_keys(&toml::from_str(&files[name]).expect("the generated workflow parses"), &mut written);
        }
    }
    let drawn: BTreeSet<String> = DRAWN.iter().map(|k| (*k).to_owned()).collect();
    assert_eq!(written, drawn, "DRAWN must list exactly the keys the generated workflows hold");

    let exempt: BTreeSet<String> = EXEMPT.iter().map(|(k, _)| (*k).to_owned()).collect();
    let missing: Vec<&String> = schema.iter().filter(|k| !drawn.contains(*k) && !exempt.contains(*k)).collect();
    assert!(missing.is_empty(), "keys of the schema the model check neither draws nor exempts: {missing:?}");
    let stale: Vec<&String> = exempt.iter().filter(|k| drawn.contains(*k) || !schema.contains(*k)).collect();
    assert!(stale.is_empty(), "exempt keys that are drawn or no longer in the schema: {stale:?}");
}

#[test]
fn every_option_of_flow_run_is_drawn_exempt_or_inert() {
    let out = assert_cmd::Command::new(flow_bin()).args(["run", "--help"]).output().expect("flow run --help");
    let help = String::from_utf8_lossy(&out.stdout);
    let options: BTreeSet<String> = help
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| l.split([' ', ',', '[', '=']).find(|w| w.starts_with("--")).map(str::to_owned))
        .filter(|w| w.len() > 2)
        .collect();
    let known: BTreeSet<String> = RUN_FLAGS_DRAWN
        .iter()
        .chain(RUN_FLAGS_INERT)
        .copied()
        .chain(RUN_FLAGS_EXEMPT.iter().map(|(f, _)| *f))
        .map(str::to_owned)
        .collect();
    assert_eq!(options, known, "each option of `flow run` is drawn, exempt with a reason, or changes nothing");
}
