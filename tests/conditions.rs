//! `when`: a condition over `vars` and `env` drops a task, and every task
//! that needs it, before the run; `flow plan`, `plan --why` and
//! `plan --json` say why, and `flow run` never starts them.

use crate::run::statuses;
use crate::support::Test;
use crate::support::process::read;

const PIPELINE: &str = r#"
name = "screen"
vars = { dock = false }

[[tasks]]
name = "prepare"
command = "echo ready > ready.txt"
outputs = ["ready.txt"]

[[tasks]]
name = "dock"
when = "{{ vars.dock }}"
range = "1-3"
after = ["prepare"]
command = "echo {{ index }} > docked-{{ index }}.txt"
outputs = ["docked-{{ index }}.txt"]

[[tasks]]
name = "score"
inputs = ["docked-*.txt"]
command = "cat docked-*.txt > scores.txt"
outputs = ["scores.txt"]

[[tasks]]
name = "report"
after = ["score"]
command = "echo report"

[[tasks]]
name = "archive"
after = ["prepare"]
command = "echo archived > archived.txt"
outputs = ["archived.txt"]
"#;

#[test]
fn plan_lists_the_dropped_tasks_and_why() {
    Test::new()
        .workflow(PIPELINE)
        .args(["plan"])
        .stdout(
            "screen: 2 tasks (3 dropped), 2 instances, 1 edge

  task     instances  expansion  resources
  prepare  1          -          cpus 1
  archive  1          -          cpus 1

dropped
  task    why
  dock    when `{{ vars.dock }}` was false (rendered `False`)
  score   needs `dock`, which is dropped
  report  needs `score`, which is dropped

edges
  dependency         kind  from
  prepare → archive  all   after

totals: 2 instances, 2 cpu-tasks (first variant of each task)
critical path: 2 tasks (prepare → archive)
",
        )
        .success();
}

#[test]
fn a_variable_set_on_the_command_line_keeps_them() {
    let out = Test::new().workflow(PIPELINE).args(["plan", "-v", "dock=yes"]).success();
    assert!(out.starts_with("screen: 5 tasks, 7 instances, 4 edges\n"), "{out}");
    assert!(!out.contains("dropped"), "{out}");
}

#[test]
fn why_and_json_name_the_dropped_tasks() {
    let t = Test::new().workflow(PIPELINE);
    let why = t.success_with(&["plan", "--why"]);
    assert!(why.contains("dock: dropped: when `{{ vars.dock }}` was false (rendered `False`)\n"), "{why}");
    assert!(why.contains("report: dropped: needs `score`, which is dropped\n"), "{why}");
    let lines: Vec<serde_json::Value> = t
        .success_with(&["plan", "--why", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let dropped: Vec<(&str, &str)> =
        lines.iter().filter_map(|l| Some((l["task"].as_str()?, l["dropped"].as_str()?))).collect();
    assert_eq!(
        dropped,
        [
            ("dock", "when `{{ vars.dock }}` was false (rendered `False`)"),
            ("score", "needs `dock`, which is dropped"),
            ("report", "needs `score`, which is dropped"),
        ]
    );
    let ir: serde_json::Value = serde_json::from_str(&t.success_with(&["plan", "--json"])).expect("JSON");
    assert_eq!(
        ir["dropped"][0],
        serde_json::json!({ "name": "dock", "reason": { "kind": "condition", "when": "{{ vars.dock }}", "rendered": "False" } })
    );
    assert_eq!(
        ir["dropped"][1],
        serde_json::json!({ "name": "score", "reason": { "kind": "upstream", "task": "dock" } })
    );
}

#[test]
fn a_run_never_starts_a_dropped_task() {
    let t = Test::new().workflow(PIPELINE);
    let out = t.run_with(&["run"]);
    assert!(
        out.stderr.contains("instances of 2 tasks; dropped by `when`: `dock`, `score`, `report`\n"),
        "{}",
        out.stderr
    );
    let first = t.success_with(&["run", "--json"]).lines().next().map(str::to_owned).unwrap_or_default();
    let started: serde_json::Value = serde_json::from_str(&first).expect("JSON line");
    assert_eq!(started["dropped"], serde_json::json!(["dock", "score", "report"]));
    let states = statuses(&t, None);
    let labels: Vec<&str> = states.keys().map(String::as_str).collect();
    assert_eq!(labels, ["archive", "prepare"]);
    assert!(t.path().join("archived.txt").exists());
    assert!(!t.path().join("docked-1.txt").exists());
    assert!(!t.path().join("scores.txt").exists());
    let out = t.run_with(&["explain", "score"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("`score` is not in this run: it was dropped, needs `dock`, which is dropped"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_condition_reads_the_environment() {
    let text = r#"
[[tasks]]
name = "notify"
when = "{{ env.NOTIFY_ME | default('') }}"
command = "echo notified > notified.txt"
outputs = ["notified.txt"]

[[tasks]]
name = "work"
command = "true"
"#;
    let t = Test::new().workflow(text);
    t.success_with(&["run"]);
    assert!(!t.path().join("notified.txt").exists());
    let t = Test::new().workflow(text).env("NOTIFY_ME", "1");
    t.success_with(&["run"]);
    assert!(t.path().join("notified.txt").exists());
}

/// A dropped task's keys are not checked: what it reads need not exist,
/// and a file it and another task both write has one writer in the run.
#[test]
fn a_dropped_task_is_not_checked() {
    let text = r#"
[[tasks]]
name = "gpu"
when = "{{ vars.gpu | default(false) }}"
each_line = "gpu-hosts.txt"
command = "echo {{ item }} > result.txt"
outputs = ["result.txt"]

[[tasks]]
name = "cpu"
command = "echo cpu > result.txt"
outputs = ["result.txt"]
"#;
    let out = Test::new().workflow(text).args(["check"]).success();
    assert!(out.contains("1 task (1 dropped), 1 instance, 0 edges"), "{out}");
}

/// The pocket-docking example notifies only when given a command.
#[test]
fn the_pocket_docking_example_notifies_when_asked() {
    let t = Test::new();
    crate::support::copy::copy_example(&crate::support::root().join("examples/workflows/pocket-docking"), t.path());
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("dropped by `when`: `notify`"), "{}", out.stderr);
    let out = t.run_with(&["run", "-v", "notify=tee notified.txt"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let summary = fs_err::read_to_string(t.path().join("summary.txt")).expect("summary");
    let notified = fs_err::read_to_string(t.path().join("notified.txt")).expect("notify ran");
    assert_eq!(notified, summary);
    assert_eq!(statuses(&t, None).get("notify").map(String::as_str), Some("succeeded"));
}

/// What a dropped task's earlier success left is moved aside, as a
/// vanished instance's outputs are, so a glob reads what a clean run
/// would; turned on again, the task runs again.
#[test]
fn a_dropped_task_leaves_no_outputs_for_a_glob_to_read() {
    let text = r#"
vars = { b = true }
[[tasks]]
name = "a"
command = "mkdir -p out && echo a > out/a.txt"
outputs = ["out/a.txt"]
[[tasks]]
name = "b"
when = "{{ vars.b }}"
command = "mkdir -p out && echo b > out/b.txt"
outputs = ["out/b.txt"]
[[tasks]]
name = "all"
after = ["a"]
inputs = ["out/*.txt"]
command = "cat out/*.txt > all.txt"
outputs = ["all.txt"]
"#;
    let t = Test::new().workflow(text);
    t.success_with(&["run"]);
    assert_eq!(read(&t, "all.txt"), "a\nb\n");
    let why = t.success_with(&["plan", "--why", "-v", "b=no"]);
    assert!(why.contains("b: dropped: when `{{ vars.b }}` was false (rendered `no`)\n  1 output no instance writes any more would be moved aside: out/b.txt\n"), "{why}");
    let out = t.run_with(&["run", "-v", "b=no"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("~ b: moved 1 output no instance writes any more (left by b) to "), "{}", out.stderr);
    assert_eq!(read(&t, "all.txt"), "a\n");
    assert!(!t.path().join("out/b.txt").exists());
    let out = t.run_with(&["run"]);
    assert!(out.stderr.contains("2 succeeded, 1 unchanged (skipped)"), "{}", out.stderr);
    assert_eq!(read(&t, "all.txt"), "a\nb\n");
}
