//! Failure policies through the CLI: retries that wait (`retry_delay`,
//! with back-off), `retry_on`, the run's and a task's `max_fails`,
//! `continue_on_failure`, and their diagnostics.

use std::time::Duration;

use serde_json::Value;

use crate::run::{assert_code, last_summary, run_ids};
use crate::support::Test;
use crate::support::process::{read, signal, spawn_flow, wait_child, wait_for};

/// `flow log [--run ID] list --json`, one object per attempt.
fn attempts(t: &Test, run: Option<&str>) -> Vec<Value> {
    let mut args = vec!["log"];
    if let Some(id) = run {
        args.extend(["--run", id]);
    }
    args.extend(["list", "--json"]);
    t.success_with(&args).lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect()
}

/// The attempts of `label`, in order.
fn of<'a>(all: &'a [Value], label: &str) -> Vec<&'a Value> {
    all.iter().filter(|a| a["label"] == label).collect()
}

fn us(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no `{key}` in {v}"))
}

/// A command that fails the first `n` times it runs (counting in `file`).
fn fails_first(n: u32, file: &str, how: &str) -> String {
    format!("c=$(cat {file} 2>/dev/null || echo 0); echo $((c+1)) > {file}; if [ $c -lt {n} ]; then {how}; fi")
}

#[test]
fn retries_wait_longer_each_time_and_the_journal_says_until_when() {
    let t = Test::new().workflow(&format!(
        r#"
[[tasks]]
name = "flaky"
command = "{}"
retries = 3
retry_delay = {{ first = "200ms", factor = 2, max = "10m" }}
"#,
        fails_first(2, "count", "exit 1")
    ));
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    assert!(out.stderr.contains("! flaky failed (exit code 1), retrying at "), "{}", out.stderr);
    let all = attempts(&t, None);
    let a = of(&all, "flaky");
    assert_eq!(a.len(), 3, "{all:?}");
    for (failed, next, wait) in [(a[0], a[1], 200_000), (a[1], a[2], 400_000)] {
        let retry_at = us(failed, "retry_at_us");
        assert!(retry_at >= us(failed, "ended_us") + wait, "waits {wait} µs: {failed}");
        assert!(us(next, "started_us") >= retry_at, "starts no earlier than its time: {next}");
    }
    assert!(a[2].get("retry_at_us").is_none(), "a success waits for nothing");
    let tsv = t.success_with(&["log", "list", "--format", "tsv", "--columns", "task,attempt,state,retry_at"]);
    assert!(tsv.lines().nth(1).is_some_and(|l| l.starts_with("flaky\t0\tfailed\t20")), "{tsv}");
}

#[test]
fn retry_on_retries_only_the_failures_it_lists() {
    let t = Test::new().workflow(&format!(
        r#"
[[tasks]]
name = "tempfail"
command = "{}"
retries = 2
retry_on = [75]

[[tasks]]
name = "broken"
command = "exit 3"
retries = 2
retry_on = [75, "timeout"]

[[tasks]]
name = "killed"
command = "{}"
retries = 1
retry_on = ["SIGKILL"]
"#,
        fails_first(1, "tempfail.count", "exit 75"),
        fails_first(1, "killed.count", "kill -KILL $$")
    ));
    let out = t.run_with(&["run"]);
    assert_code(&out, 1);
    let all = attempts(&t, None);
    assert_eq!(of(&all, "tempfail").len(), 2, "exit 75 is retried: {all:?}");
    assert_eq!(of(&all, "killed").len(), 2, "SIGKILL is retried: {all:?}");
    assert_eq!(of(&all, "killed")[0]["signal"], 9);
    let broken = of(&all, "broken");
    assert_eq!(broken.len(), 1, "exit 3 is not retried: {all:?}");
    let reason = broken[0]["reason"].as_str().expect("reason");
    assert_eq!(reason, "exit code 3; not retried: retry_on does not list it");
    assert!(
        out.stderr.contains("✗ broken failed: exit code 3; not retried: retry_on does not list it"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_waiting_retry_holds_no_cpu() {
    let t = Test::new().workflow(&format!(
        r#"
[[tasks]]
name = "flaky"
command = "{}"
priority = 1
retries = 1
retry_delay = "1s"

[[tasks]]
name = "other"
command = "true"
"#,
        fails_first(1, "count", "exit 1")
    ));
    t.success_with(&["run", "--cpus", "1"]);
    let all = attempts(&t, None);
    let (flaky, other) = (of(&all, "flaky"), of(&all, "other"));
    assert_eq!(flaky.len(), 2);
    assert!(us(flaky[0], "ended_us") <= us(other[0], "started_us"), "flaky ran first, alone");
    assert!(us(other[0], "ended_us") < us(flaky[1], "started_us"), "other ran during the wait: {all:?}");
}

#[test]
fn a_resumed_run_keeps_the_retry_schedule_and_explain_shows_it() {
    let t = Test::new().workflow(&format!(
        r#"
[[tasks]]
name = "flaky"
command = "{}"
retries = 2
retry_delay = "4s"
"#,
        fails_first(1, "count", "exit 1")
    ));
    let mut flow = spawn_flow(t.path(), &["run"], "run.stderr");
    let waiting = wait_for(Duration::from_secs(10), || {
        let out = t.run_with(&["explain", "flaky"]);
        out.code == 0 && out.stdout.contains("retries at")
    });
    if !waiting {
        let _ = flow.kill();
        panic!("never waited to retry: {}", read(&t, "run.stderr"));
    }
    let explained = t.success_with(&["explain", "flaky"]);
    assert!(explained.contains("attempt 2 of 3"), "{explained}");
    let status = t.success_with(&["status"]);
    assert!(status.contains("1 waiting to retry"), "{status}");
    let json: Value = serde_json::from_str(&t.success_with(&["explain", "--json", "flaky"])).expect("JSON");
    assert_eq!(json["reason"]["kind"], "retrying", "{json}");
    signal(flow.id(), "-KILL");
    wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");

    let first = run_ids(t.path()).pop().expect("a run");
    let retry_at = us(of(&attempts(&t, Some(&first)), "flaky")[0], "retry_at_us");
    t.success_with(&["run"]);
    let second = attempts(&t, None);
    let resumed = of(&second, "flaky");
    assert_eq!(resumed.len(), 1, "{second:?}");
    assert!(us(resumed[0], "started_us") >= retry_at, "the resumed run waited for the schedule: {second:?}");
}

#[test]
fn max_fails_stops_the_run_as_a_count_a_share_or_as_the_command_line_says() {
    let workflow =
        |max: &str| format!("max_fails = {max}\n\n[[tasks]]\nname = \"all\"\nrange = \"1-10\"\ncommand = \"exit 1\"\n");
    for (max, args, failed) in [
        ("2", &["run", "--cpus", "1"][..], 2),
        ("\"30%\"", &["run", "--cpus", "1"], 3),
        ("2", &["run", "--cpus", "1", "--max-fails", "1"], 1),
        ("1", &["run", "--cpus", "1", "--keep-going"], 10),
    ] {
        let t = Test::new().workflow(&workflow(max));
        assert_code(&t.run_with(args), 1);
        let summary = last_summary(t.path());
        assert_eq!(summary["failed"], failed, "max_fails = {max}, {args:?}: {summary}");
        assert_eq!(summary["cancelled"], 10 - failed, "{summary}");
    }
    let t = Test::new()
        .workflow("continue_on_failure = false\n\n[[tasks]]\nname = \"all\"\nrange = \"1-4\"\ncommand = \"exit 1\"\n");
    assert_code(&t.run_with(&["run", "--cpus", "1"]), 1);
    assert_eq!(last_summary(t.path())["failed"], 1);
}

#[test]
fn a_task_stops_its_own_instances_at_its_max_fails() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "many"
range = "1-10"
command = "exit 1"
max_fails = 2

[[tasks]]
name = "alone"
command = "true"
"#,
    );
    assert_code(&t.run_with(&["run", "--cpus", "1"]), 1);
    let summary = last_summary(t.path());
    assert_eq!((summary["failed"].as_u64(), summary["cancelled"].as_u64()), (Some(2), Some(8)), "{summary}");
    assert_eq!(summary["succeeded"], 1, "the other task ran: {summary}");
    let all = attempts(&t, None);
    let cancelled = all.iter().find(|a| a["state"] == "cancelled").expect("a cancelled instance");
    assert_eq!(cancelled["reason"], "its task reached its max_fails");
}

#[test]
fn an_ignored_failure_lets_its_dependents_run_and_the_run_succeed() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "optional"
command = "exit 4"
continue_on_failure = true

[[tasks]]
name = "after"
command = "echo ran > after.txt"
after = ["optional"]
"#,
    );
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    assert!(out.stderr.contains("1 succeeded, 1 failed (ignored)"), "{}", out.stderr);
    assert_eq!(read(&t, "after.txt"), "ran\n");
    let list = t.success_with(&["log", "list"]);
    assert!(list.lines().any(|l| l.starts_with("optional") && l.contains("failed, ignored")), "{list}");
    let all = attempts(&t, None);
    assert_eq!(of(&all, "optional")[0]["ignored"], true);
    let status = t.success_with(&["status"]);
    assert!(status.contains("1 failed (1 ignored)"), "{status}");
    assert_eq!(last_summary(t.path())["ignored"], 1);
}

#[test]
fn bad_failure_keys_are_reported_together_with_suggestions() {
    let t = Test::new()
        .workflow(
            r#"
max_fails = 0

[[tasks]]
name = "a"
command = "true"
retry_delay = { fist = "1s" }
retry_on = ["SIGKIL", 300]
"#,
        )
        .args(["check"]);
    let err = t.invalid();
    for expected in [
        "unknown key `fist` in retry_delay",
        "did you mean `first`?",
        "missing key `first` in retry_delay",
        "`SIGKIL` is no exit code, signal or \"timeout\"",
        "did you mean `SIGKILL`?",
        "exit code 300 is not 0 to 255",
        "bad `max_fails`",
        "workflow.toml:7:",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in:\n{err}");
    }
}
