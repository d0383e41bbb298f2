//! Every example under `examples/workflows` compiles; its plan is
//! snapshotted; and its YAML twin produces the same graph.

use std::path::{Path, PathBuf};

use crate::support::copy::copy_example;
use crate::support::{Test, root};

fn examples() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs_err::read_dir(root().join("examples/workflows"))
        .expect("examples dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("workflow.toml").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 4, "expected at least four examples, found {dirs:?}");
    dirs
}

fn plan_json(dir: &Path, file: &str) -> serde_json::Value {
    let out = Test::new().current_dir(dir).args(["plan", "--json", file]).success();
    serde_json::from_str(&out).expect("plan --json prints JSON")
}

/// The IR without source spans, which differ between syntaxes.
fn without_spans(mut v: serde_json::Value) -> serde_json::Value {
    if let Some(groups) = v["groups"].as_array_mut() {
        for g in groups {
            g.as_object_mut().map(|g| g.remove("span"));
        }
    }
    if let Some(finally) = v["finally"].as_object_mut() {
        finally.remove("span");
    }
    v
}

#[test]
fn every_example_checks_and_its_plan_is_stable() {
    for dir in examples() {
        let name = dir.file_name().and_then(|n| n.to_str()).expect("utf-8 name").to_owned();
        let out = Test::new().current_dir(&dir).args(["check", "workflow.toml"]).success();
        assert!(out.starts_with("ok: "), "{name}: {out}");
        let plan = Test::new().current_dir(&dir).args(["plan", "--json", "workflow.toml"]).success();
        insta::assert_snapshot!(format!("plan_json_{name}"), plan);
        let summary = Test::new().current_dir(&dir).args(["plan", "workflow.toml"]).success();
        insta::assert_snapshot!(format!("plan_{name}"), summary);
    }
}

#[test]
fn plan_json_round_trips_through_the_ir_type() {
    for dir in examples() {
        let json = plan_json(&dir, "workflow.toml");
        let graph: flow_engine::ir::Graph = serde_json::from_value(json.clone()).expect("IR deserializes");
        assert_eq!(serde_json::to_value(&graph).expect("IR serializes"), json, "{}", dir.display());
    }
}

#[test]
fn yaml_twins_compile_to_the_same_graph() {
    let mut twins = 0;
    for dir in examples() {
        let toml_ir = without_spans(plan_json(&dir, "workflow.toml"));
        // Every example, converted to JSON (which is YAML), gives the same IR.
        let text = fs_err::read_to_string(dir.join("workflow.toml")).expect("read example");
        let value: serde_json::Value = toml::from_str(&text).expect("example is TOML");
        let copy = tempfile::tempdir().expect("temp dir");
        copy_example(&dir, copy.path());
        fs_err::write(copy.path().join("twin.yaml"), value.to_string()).expect("write twin");
        let converted_ir = without_spans(plan_json(copy.path(), "twin.yaml"));
        assert_eq!(toml_ir, converted_ir, "{}: TOML and its JSON/YAML conversion differ", dir.display());
        // Hand-written YAML twins too.
        if dir.join("workflow.yaml").exists() {
            twins += 1;
            assert_eq!(
                toml_ir,
                without_spans(plan_json(&dir, "workflow.yaml")),
                "{}: YAML twin differs",
                dir.display()
            );
        }
    }
    assert!(twins >= 1, "at least one example has a hand-written workflow.yaml");
}

/// Copies the directory `from` into `to`, everything in it (an example:
/// [`copy_example`]).
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    for entry in fs_err::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            fs_err::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else if kind.is_symlink() {
            fs_err::os::unix::fs::symlink(fs_err::read_link(entry.path()).expect("read link"), &target).expect("link");
        } else {
            fs_err::copy(entry.path(), &target).expect("copy");
        }
    }
}

#[test]
fn every_example_profile_prints_its_job_script_and_can_run_every_task() {
    let mut seen = 0;
    for dir in examples() {
        let Ok(text) = fs_err::read_to_string(dir.join("flow.profiles.toml")) else { continue };
        let names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("[profile."))
            .filter_map(|rest| rest.split(['.', ']']).next())
            .collect();
        for name in names {
            let out = Test::new().current_dir(&dir).args(["alloc", "--dry-run", "--profile", name]).success();
            let example = dir.file_name().and_then(|n| n.to_str()).expect("utf-8 name");
            let script = out
                .replace(&dir.display().to_string(), "[EXAMPLE]")
                .replace(&crate::support::process::flow_bin().display().to_string(), "[FLOW]");
            insta::assert_snapshot!(format!("{example}_{name}_job_script"), script);
            // One line, `ok: …`, and no note.
            let out = Test::new().current_dir(&dir).args(["check", "--profile", name]).success();
            assert!(out.starts_with("ok: ") && out.lines().count() == 1, "{name}: {out}");
            seen += 1;
        }
    }
    assert!(seen >= 2, "the examples have Slurm and PBS profiles");
}

/// The pocket-docking example shows the pipeline keys in one file: an
/// included report under its namespace, a docking turned away once (exit
/// 75) and retried after its delay, a notification dropped by its `when`,
/// and `[finally]` recording every run's outcome.
#[test]
fn the_pocket_docking_example_includes_retries_and_finishes() {
    let t = Test::new();
    copy_example(&root().join("examples/workflows/pocket-docking"), t.path());
    fs_err::write(t.path().join("busy"), "").expect("busy marker");
    let busy = t.path().join("busy").display().to_string();
    let t = t.env("DOCK_BUSY", &busy);
    let out = t.run_with(&["run", "-v", "report.top=2"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let summary = fs_err::read_to_string(t.path().join("summary.txt")).expect("summary");
    let best = fs_err::read_to_string(t.path().join("lib/best.txt")).expect("the included report ran");
    assert_eq!(best, summary.lines().take(2).map(|l| format!("{l}\n")).collect::<String>());
    let docked: Vec<String> = crate::run::statuses(&t, None).into_keys().filter(|l| l.starts_with("dock[")).collect();
    assert_eq!(docked.len(), 10, "{docked:?}");
    let list = t.success_with(&["log", "list", "--format", "tsv", "--columns", "task,attempt,exit"]);
    let failed: Vec<&str> = list.lines().filter(|l| l.ends_with("\t75")).collect();
    assert_eq!(failed.len(), 1, "one docking was turned away once:\n{list}");
    let runs_log = fs_err::read_to_string(t.path().join("runs.log")).expect("finally ran");
    assert!(runs_log.ends_with(": succeeded, 18 succeeded, 0 failed\n"), "{runs_log}");
    assert!(out.stderr.contains("dropped by `when`: `notify`"), "{}", out.stderr);
    assert_eq!(crate::run::statuses(&t, None).get("triage").map(String::as_str), Some("skipped"), "nothing failed");
}

/// A docking that fails for good cancels the summary and the report, and
/// `triage`, which waits for a failure of `dock`, lists what failed.
#[test]
fn the_pocket_docking_example_triages_failed_dockings() {
    let t = Test::new();
    copy_example(&root().join("examples/workflows/pocket-docking"), t.path());
    let t = t.env("DOCK_BROKEN", "3ert");
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains(": 14 succeeded, 3 failed, 2 cancelled in "), "{}", out.stderr);
    let failed: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(t.path().join("failed-dockings.json")).expect("triage ran"))
            .expect("a JSON list");
    let names: Vec<&str> = failed.as_array().expect("a list").iter().filter_map(|f| f["task"].as_str()).collect();
    assert_eq!(names, ["dock[1.0]", "dock[1.1]", "dock[1.2]"]);
    assert_eq!(t.success_with(&["log", "cat", "triage"]), "no pose: dock[1.0] dock[1.1] dock[1.2]\n");
}
