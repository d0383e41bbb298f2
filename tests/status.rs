//! `flow status` and `flow runs` on runs whose files were damaged after
//! the run (issue 18), and the counts every view of a run gives (issue 27).

use std::path::{Path, PathBuf};

use crate::run::run_ids;
use crate::support::Test;

/// 200 instances that succeed.
const TWO_HUNDRED: &str = "[[tasks]]\nname = \"a\"\nrange = \"1-200\"\ncommand = \"true\"\n";

/// Flips a byte in the payload of the `n`th record of the journal at
/// `path` (framed: 8 magic bytes, then length, checksum and payload).
fn damage_record(path: &Path, n: usize) {
    let mut bytes = fs_err::read(path).unwrap();
    let mut at = 8;
    for _ in 0..n {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        at += 8 + len;
    }
    bytes[at + 8] ^= 0xff;
    fs_err::write(path, bytes).unwrap();
}

/// A finished run of [`TWO_HUNDRED`] with one damaged journal record; its directory.
fn damaged_run(t: &Test) -> PathBuf {
    t.success_with(&["run", "--cpus", "2"]);
    let id = run_ids(t.path()).pop().unwrap();
    let dir = t.path().join(".flow/runs").join(id);
    damage_record(&dir.join("journal"), 150);
    dir
}

const DAMAGE_LINE: &str = "  journal damaged: 1 stretch could not be read; the instances it recorded may run again";

/// Issue 18: a finished run whose journal has a damaged record in the
/// middle is not shown as a clean "200/200 succeeded": its state says the
/// journal is damaged, a line says how many stretches, and the JSON has
/// `journal_damage`.
#[test]
fn a_finished_run_with_a_damaged_journal_says_so() {
    let t = Test::new().workflow(TWO_HUNDRED);
    let dir = damaged_run(&t);
    let id = dir.file_name().unwrap().to_str().unwrap();

    let status = t.success_with(&["status"]);
    let lines: Vec<&str> = status.lines().collect();
    assert_eq!(lines[0], format!("run {id}: succeeded, journal damaged"), "{status}");
    assert_eq!(lines[3], DAMAGE_LINE, "{status}");

    let json: serde_json::Value = serde_json::from_str(&t.success_with(&["status", "--json"])).unwrap();
    assert_eq!((&json["state"], &json["journal_damage"]), (&"succeeded".into(), &1.into()), "{json}");

    let runs = t.success_with(&["runs"]);
    let row = runs.lines().nth(1).unwrap();
    assert_eq!(row.split("  ").nth(1), Some("succeeded, journal damaged"), "{runs}");
    let runs: serde_json::Value = serde_json::from_str(&t.success_with(&["runs", "--json"])).unwrap();
    assert_eq!(runs["runs"][0]["journal_damage"], 1, "{runs}");
}

/// Issue 18: the same for a run that never finished, whose counts come
/// from the damaged journal.
#[test]
fn a_crashed_run_with_a_damaged_journal_says_so() {
    let t = Test::new().workflow(TWO_HUNDRED);
    let dir = damaged_run(&t);
    let id = dir.file_name().unwrap().to_str().unwrap();
    fs_err::remove_file(dir.join("summary.json")).unwrap();

    let status = t.success_with(&["status"]);
    let lines: Vec<&str> = status.lines().collect();
    assert_eq!(lines[0], format!("run {id}: crashed, journal damaged"), "{status}");
    assert_eq!(lines[2], DAMAGE_LINE, "{status}");
    let json: serde_json::Value = serde_json::from_str(&t.success_with(&["status", "--json"])).unwrap();
    assert_eq!((&json["state"], &json["journal_damage"]), (&"crashed".into(), &1.into()), "{json}");
}

/// A run whose journal is intact has no damage line, and `journal_damage` 0.
#[test]
fn an_intact_journal_is_not_reported() {
    let t = Test::new().workflow(TWO_HUNDRED);
    t.success_with(&["run", "--cpus", "2"]);
    let status = t.success_with(&["status"]);
    assert!(status.lines().next().unwrap().ends_with(": succeeded"), "{status}");
    assert!(!status.contains("damaged"), "{status}");
    let json: serde_json::Value = serde_json::from_str(&t.success_with(&["status", "--json"])).unwrap();
    assert_eq!(json["journal_damage"], 0, "{json}");
}

/// Issue 27: every command that reads a run names it with `--run ID`;
/// `status`, `workers` and `report` still take it positionally, and the two
/// forms say the same.
#[test]
fn every_command_names_a_run_with_dash_dash_run() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ncommand = \"true\"\n");
    t.success_with(&["run"]);
    t.success_with(&["run"]);
    let first = run_ids(t.path()).remove(0);
    for command in ["status", "workers", "explain a", "log list", "alloc list", "report"] {
        let mut words: Vec<&str> = command.split(' ').collect();
        words.extend(["--run", "nosuchrun"]);
        let out = t.run_with(&words);
        let state = t.path().join(".flow");
        let expected = format!("error: no run `nosuchrun` (or more than one) in `{}`\n", state.display());
        assert_eq!((out.code, out.stderr.as_str()), (2, expected.as_str()), "flow {command}");
    }
    let status = t.success_with(&["status", "--run", &first]);
    assert!(status.starts_with(&format!("run {first}: succeeded\n  1/1 done: 1 succeeded,")), "{status}");
    let explain = t.success_with(&["explain", "a", "--run", &first]);
    assert!(explain.starts_with("a: succeeded in "), "{explain}");
    for command in ["status", "workers"] {
        let positional = t.success_with(&[command, &first]);
        assert_eq!(positional, t.success_with(&[command, "--run", &first]), "flow {command} RUN");
    }
}

/// Issue 27: every view counts the same instances. A task whose instances
/// were never known (its list is written by a task that failed) has none:
/// `flow status` said `3/2 done`, `summary.json` counted 3 of a total of 2,
/// `flow runs` called instances TASKS and left skipped ones out. Here with a
/// failure, a stage never known, a stage known at run time with an instance
/// its `when` skips, and a task a false `when` drops.
#[test]
fn every_view_counts_the_same_instances() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "list"
command = "printf 'a\nb\n' > items.txt; exit 1"
outputs = ["items.txt"]

[[tasks]]
name = "each"
each_line = "items.txt"
command = "echo {{ item }}"

[[tasks]]
name = "gen"
command = "printf 'x\ny\n' > names.txt"
outputs = ["names.txt"]

[[tasks]]
name = "per"
each_line = "names.txt"
when = "{{ item != 'y' }}"
command = "echo {{ item }}"

[[tasks]]
name = "never"
when = "false"
command = "true"
"#,
    );
    let run = t.run_with(&["run", "--cpus", "1"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains(": 2 succeeded, 1 failed, 1 skipped by a condition in "), "{}", run.stderr);
    let status = t.success_with(&["status"]);
    assert_eq!(
        status.lines().nth(1),
        Some(
            "  4/4 done: 2 succeeded, 0 unchanged, 1 failed, 0 cancelled, 1 skipped by a condition; 0 running, 0 queued"
        ),
        "{status}"
    );
    let summary = crate::run::last_summary(t.path());
    let counted: u64 = ["succeeded", "cached", "failed", "cancelled", "skipped"]
        .iter()
        .map(|k| summary[k].as_u64().unwrap_or(0))
        .sum();
    assert_eq!((summary["total"].as_u64(), counted), (Some(4), 4), "{summary}");
    let runs = crate::support::normalize::normalize(&t.success_with(&["runs"]));
    assert_eq!(
        runs,
        "RUN  STATE  INSTANCES  SUCCEEDED  UNCHANGED  FAILED  CANCELLED  SKIPPED  TIME\n\
         [RUN]  failed  4  2  0  1  0  1  [TIME]\n"
    );
    assert_eq!(t.success_with(&["log", "list", "--columns", "task,state"]).lines().count(), 1 + 4);
    let log_summary = t.success_with(&["log", "summary"]);
    assert_eq!(log_summary.lines().nth(1), Some("tasks: 4 instances with records: 2 succeeded, 1 failed, 1 skipped"));
}

/// Issue 27: one count everywhere. A run with a dynamic stage cancelled as
/// one (its writer failed), a task a false `when` dropped, and an instance
/// skipped by its own `when`: `summary.json`, `flow status`, `flow runs`,
/// `flow log summary` and `flow report` give the same counts.
#[test]
fn every_view_counts_a_cancelled_dynamic_stage_alike() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "score"
range = "1-3"
command = "echo {{ index }} > score.{{ index }}"
outputs = ["score.{{ index }}"]

[[tasks]]
name = "select"
command = "cat score.* > hits.txt; exit 3"
inputs = ["score.*"]
outputs = ["hits.txt"]

[[tasks]]
name = "refine"
each_line = "hits.txt"
command = "true"

[[tasks]]
name = "dropped"
when = "{{ false }}"
command = "true"

[[tasks]]
name = "some"
range = "1-3"
when = "{{ index > 1 }}"
command = "true"
"#,
    );
    assert_eq!(t.run_with(&["run"]).code, 1);
    let expected = serde_json::json!({
        "total": 7, "succeeded": 5, "cached": 0, "failed": 1, "cancelled": 0, "running": 0, "queued": 0, "skipped": 1
    });
    let counts = |args: &[&str]| -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_str(&t.success_with(args)).expect("JSON");
        v["counts"].clone()
    };
    assert_eq!(counts(&["status", "--json"]), expected);
    assert_eq!(counts(&["log", "summary", "--json"]), expected);
    assert_eq!(counts(&["report", "--json"]), expected);
    let runs: serde_json::Value = serde_json::from_str(&t.success_with(&["runs", "--json"])).expect("JSON");
    assert_eq!(runs["runs"][0]["counts"], expected);
    let summary = crate::run::last_summary(t.path());
    let of_summary = ["total", "succeeded", "failed", "cancelled", "skipped"].map(|k| summary[k].clone());
    assert_eq!(of_summary, [7, 5, 1, 0, 1].map(serde_json::Value::from), "{summary}");
}
