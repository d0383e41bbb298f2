//! A `when` over the content of a file a task of the run writes waits for
//! that task and is decided when the run reaches the gated task: it runs
//! or is skipped (with what it read in its reason), a rerun decides again,
//! `flow plan --why` says it is decided once the file is written, a failed
//! writer cancels it, and `read` anywhere else is a diagnostic.

use crate::run::statuses;
use crate::support::Test;

const QC: &str = r#"
vars = { verdict = "yes" }

[[tasks]]
name = "qc"
command = "mkdir -p qc && echo {{ vars.verdict }} > qc/pass.txt"
outputs = ["qc/pass.txt"]

[[tasks]]
name = "publish"
when = "{{ read('qc/pass.txt') == 'yes' }}"
command = "echo published > published.txt"
outputs = ["published.txt"]

[[tasks]]
name = "archive"
inputs = ["published.txt"]
command = "cp published.txt archived.txt"
outputs = ["archived.txt"]
"#;

fn state(t: &Test, label: &str) -> Option<String> {
    statuses(t, None).get(label).cloned()
}

#[test]
fn the_gated_task_runs_when_the_file_says_so_and_a_rerun_decides_again() {
    let t = Test::new().workflow(QC);
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(state(&t, "publish").as_deref(), Some("succeeded"));
    assert!(t.path().join("archived.txt").exists());

    let out = t.run_with(&["run", "-v", "verdict=no"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("skipped by a condition"), "{}", out.stderr);
    assert_eq!(state(&t, "qc").as_deref(), Some("succeeded"));
    assert_eq!(state(&t, "publish").as_deref(), Some("skipped"));
    assert_eq!(state(&t, "archive").as_deref(), Some("skipped"));
    let why = t.success_with(&["explain", "publish"]);
    assert!(why.contains(": when `{{ read('qc/pass.txt') == 'yes' }}` was false (rendered `False`)"), "{why}");

    // What it wrote was moved aside when it was skipped (issue 26).
    assert!(!t.path().join("published.txt").exists());
    // Decided again: it runs again.
    let out = t.run_with(&["run", "-v", "verdict=yes"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(state(&t, "publish").as_deref(), Some("succeeded"));
    assert!(t.path().join("archived.txt").exists());
}

#[test]
fn the_gated_task_waits_for_the_writer() {
    let t = Test::new().workflow(QC);
    let graph = t.success_with(&["graph", "--format", "json"]);
    let graph: serde_json::Value = serde_json::from_str(&graph).expect("JSON");
    let edges = graph["edges"].as_array().expect("edges");
    assert!(edges.iter().any(|e| e["from"] == "qc" && e["to"] == "publish" && e["kind"] == "all"), "{graph:#}");
}

#[test]
fn the_plan_says_the_condition_is_decided_once_the_file_is_written() {
    let t = Test::new().workflow(QC);
    let plan = t.success_with(&["plan", "--why"]);
    assert!(plan.contains("1 decided when `qc/pass.txt` is written: publish\n"), "{plan}");
    t.success_with(&["run", "-v", "verdict=no"]);
    let plan = t.success_with(&["plan", "--why", "-v", "verdict=no"]);
    assert!(plan.contains("publish: 0 of 1 would run, 0 unchanged, 1 skipped by a condition\n"), "{plan}");
}

#[test]
fn a_failed_writer_cancels_the_gated_task() {
    let text = QC.replace("mkdir -p qc && echo", "exit 3; echo");
    let t = Test::new().workflow(&text);
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(state(&t, "qc").as_deref(), Some("failed"));
    assert_eq!(state(&t, "publish").as_deref(), Some("cancelled"));
}

#[test]
fn a_file_read_per_instance_decides_each_instance() {
    let text = r#"
[[tasks]]
name = "qc"
range = "1-3"
command = "mkdir -p qc && echo {{ 'yes' if index != 2 else 'no' }} > qc/{{ index }}.txt"
outputs = ["qc/{{ index }}.txt"]

[[tasks]]
name = "publish"
range = "1-3"
when = "{{ read('qc/' ~ index ~ '.txt') == 'yes' }}"
command = "echo {{ index }}"
"#;
    let t = Test::new().workflow(text);
    let plan = t.success_with(&["plan", "--why"]);
    assert!(
        plan.contains(
            "  3 decided when `qc` has written the file its `when` reads: publish[1], publish[2], publish[3]\n"
        ),
        "{plan}"
    );
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(state(&t, "publish[1]").as_deref(), Some("succeeded"));
    assert_eq!(state(&t, "publish[2]").as_deref(), Some("skipped"));
    assert_eq!(state(&t, "publish[3]").as_deref(), Some("succeeded"));
}

#[test]
fn a_file_nothing_writes_is_read_when_the_run_reaches_the_task_and_one_gone_fails_it() {
    let gate = r#"
[[tasks]]
name = "gate"
when = "{{ read('flag.txt') == 'on' }}"
command = "echo open"
"#;
    let t = Test::new().workflow(gate).file("flag.txt", "on\n");
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(state(&t, "gate").as_deref(), Some("succeeded"));

    // There when the workflow is checked, gone when the run reaches `gate`.
    let text = format!("[[tasks]]\nname = \"clean\"\ncommand = \"rm flag.txt\"\n{gate}after = [\"clean\"]\n");
    let t = Test::new().workflow(&text).file("flag.txt", "on\n");
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(state(&t, "clean").as_deref(), Some("succeeded"));
    assert_eq!(state(&t, "gate").as_deref(), Some("failed"));
    let why = t.success_with(&["explain", "gate"]);
    assert!(why.contains("cannot read `flag.txt`: no such file"), "{why}");
}

#[test]
fn a_missing_file_and_read_outside_when_are_diagnostics() {
    let text = r#"
[[tasks]]
name = "gate"
when = "{{ read('flag.txt') == 'on' }}"
command = "echo {{ read('other.txt') }}"
"#;
    let t = Test::new().workflow(text);
    let out = t.run_with(&["check"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("`when` reads `flag.txt`, which does not exist, and no task produces it"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("`read` is only for `when`"), "{}", out.stderr);
}

#[test]
fn a_dry_exec_runs_what_a_file_not_written_yet_decides() {
    let t = Test::new().workflow(QC);
    let out = t.run_with(&["run", "--dry-exec"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(state(&t, "publish").as_deref(), Some("succeeded"));
    assert!(!t.path().join("qc/pass.txt").exists(), "nothing was executed");
}
