//! Issue 11: every attempt's times, CPU, peak RSS and placement, as
//! `flow log list` shows them — locally, on a remote worker, and after the
//! coordinator was killed with `kill -9`. Bounds are lower bounds on what
//! the tasks certainly used, never timings.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::Test;
use crate::support::process::{finish, flow_bin, read, signal, spawn_flow, wait_child, wait_for};
use crate::workers::start_run;

/// Holds one 50 MB line: `sort` must keep all of it in memory.
const HOG: &str = "head -c 50000000 /dev/zero | sort > /dev/null";
/// A million turns of a shell loop: well over 0.1 s of user CPU time.
const BURN: &str = "i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); done";

/// `flow log list --json ARGS`, one value per attempt.
fn attempts(t: &Test, args: &[&str]) -> Vec<Value> {
    let out = t.success_with(&[&["log", "list", "--json"], args].concat());
    out.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

fn find<'a>(attempts: &'a [Value], label: &str) -> &'a Value {
    attempts.iter().find(|a| a["label"] == label).unwrap_or_else(|| panic!("no {label} in {attempts:?}"))
}

fn hostname() -> String {
    fs_err::read_to_string("/proc/sys/kernel/hostname").expect("host name").trim().to_owned()
}

#[test]
fn memory_and_cpu_of_each_attempt_are_recorded() {
    let t = Test::new().workflow(&format!(
        "[[tasks]]\nname = \"hog\"\ncommand = \"{HOG}\"\n\
         [[tasks]]\nname = \"burn\"\ncommand = \"{BURN}\"\n\
         [[tasks]]\nname = \"killed\"\ncommand = \"kill -9 $$\"\n"
    ));
    let run = t.run_with(&["run", "--cpus", "2"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let all = attempts(&t, &[]);
    assert_eq!(all.len(), 3, "{all:?}");

    let hog = find(&all, "hog");
    assert_eq!(hog["state"], "succeeded");
    assert!(hog["rss_bytes"].as_u64().expect("rss") >= 50_000_000, "{hog}");
    let burn = find(&all, "burn");
    let (user, system) = (burn["user_us"].as_u64().expect("user"), burn["system_us"].as_u64().expect("sys"));
    assert!(user >= 100_000, "{burn}");
    assert_eq!(burn["cpu_us"].as_u64(), Some(user + system));
    for a in &all {
        let (start, end) = (a["started_us"].as_u64().expect("start"), a["ended_us"].as_u64().expect("end"));
        assert!(start <= end, "{a}");
        let worker = serde_json::json!({ "id": 0, "host": hostname(), "allocation": null });
        assert_eq!((&a["worker"], &a["variant"]), (&worker, &Value::from(0)), "{a}");
        assert_eq!(a["cpu_ids"].as_array().map(Vec::len), Some(1), "one CPU id each: {a}");
    }
    let killed = find(&all, "killed");
    assert_eq!(
        (&killed["state"], &killed["signal"], &killed["exit_code"]),
        (&"failed".into(), &9.into(), &Value::Null)
    );

    // A trace file: a header row and one row per attempt, raw units.
    let csv = t.success_with(&["log", "list", "--format", "csv", "--columns", "task,state,exit,rss,host"]);
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0], ["task", "state", "exit", "rss", "host"]);
    assert_eq!(rows.len(), 4, "{csv}");
    let hog_row = rows.iter().find(|r| r[0] == "hog").expect("hog row");
    assert_eq!(hog_row[3], hog["rss_bytes"].to_string());
    assert_eq!(rows.iter().find(|r| r[0] == "killed").expect("killed row")[2], "signal 9");
    let tsv = t.success_with(&["log", "list", "--format", "tsv", "hog"]);
    let header: Vec<&str> = tsv.lines().next().expect("header").split('\t').collect();
    assert_eq!(header.len(), 38, "every column: {header:?}");
    assert_eq!(tsv.lines().count(), 2, "{tsv}");
    let table = t.success_with(&["log", "list", "--columns", "task,rss", "hog"]);
    assert!(table.starts_with("TASK  RSS\nhog   ") && table.trim_end().ends_with("MiB"), "{table}");
}

#[test]
fn an_attempt_on_a_remote_worker_names_its_host_worker_and_job() {
    let t = Test::new().workflow(&format!("[[tasks]]\nname = \"hog\"\nrange = \"1-2\"\ncommand = \"{HOG}\"\n"));
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = Command::new(flow_bin())
        .args(["worker", "--access", access.to_str().expect("utf-8"), "--cpus", "1"])
        .current_dir(t.path())
        .env("SLURM_JOB_ID", "4242")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start flow worker");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(60)), 0, "{}", read(&t, "run.stderr"));
    wait_child(&mut worker, Duration::from_secs(10)).expect("the worker leaves");
    let all = attempts(&t, &[]);
    assert_eq!(all.len(), 2, "{all:?}");
    for a in &all {
        assert_eq!(a["worker"], serde_json::json!({ "id": 0, "host": hostname(), "allocation": "4242" }));
        assert_eq!(a["cpu_ids"], serde_json::json!([0]));
        assert!(a["rss_bytes"].as_u64().expect("rss") >= 50_000_000, "{a}");
    }
}

#[test]
fn metrics_of_finished_attempts_survive_kill_9() {
    let t = Test::new().workflow(&format!(
        "[[tasks]]\nname = \"quick\"\nrange = \"1-3\"\ncommand = \"{HOG}\"\n\
         [[tasks]]\nname = \"slow\"\ncommand = \"sleep 60\"\nafter = [\"quick\"]\n"
    ));
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2"], "run.stderr");
    // `slow` starts once every `quick` ended, so their records are written.
    let slow_started = wait_for(Duration::from_secs(60), || {
        let out = t.run_with(&["log", "list", "--json", "slow"]);
        let records = out.stdout.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok());
        records.into_iter().any(|r| r["state"] == "running")
    });
    signal(flow.id(), "-KILL");
    wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");
    assert!(slow_started, "slow never started: {}", read(&t, "run.stderr"));
    let all = attempts(&t, &[]);
    for i in 1..=3 {
        let quick = find(&all, &format!("quick[{i}]"));
        assert_eq!(quick["state"], "succeeded");
        assert!(quick["rss_bytes"].as_u64().expect("rss") >= 50_000_000, "{quick}");
    }
    let slow = find(&all, "slow");
    assert_eq!(
        (&slow["state"], &slow["rss_bytes"], &slow["ended_us"]),
        (&"running".into(), &Value::Null, &Value::Null)
    );
    assert!(slow["started_us"].is_u64(), "its start was recorded: {slow}");
}

/// Issue 28: processes the local worker starts itself (`argv`, no shell)
/// are reaped with what they used, however short, and so is one killed by
/// its timeout; one that cannot start says why.
#[test]
fn many_short_processes_and_a_timed_out_one_each_report_cpu_and_memory() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"short\"\nrange = \"1-100\"\nargv = [\"true\"]\n\
         [[tasks]]\nname = \"slow\"\ntimeout = \"1s\"\nargv = [\"sleep\", \"5\"]\n\
         [[tasks]]\nname = \"missing\"\nargv = [\"flow-no-such-program\"]\n",
    );
    let run = t.run_with(&["run", "--cpus", "2"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("✗ missing failed: could not start: No such file or directory (os error 2)"),
        "{}",
        run.stderr
    );
    let all = attempts(&t, &[]);
    let short: Vec<&Value> = all.iter().filter(|a| a["task"] == "short").collect();
    assert_eq!(short.len(), 100, "{all:?}");
    for a in short.iter().copied().chain([find(&all, "slow")]) {
        let (user, system) = (a["user_us"].as_u64().expect("user"), a["system_us"].as_u64().expect("sys"));
        assert_eq!(a["cpu_us"].as_u64(), Some(user + system), "{a}");
        // Any process has a resident page or two.
        assert!(a["rss_bytes"].as_u64().expect("rss") > 0, "{a}");
    }
    assert!(short.iter().all(|a| a["state"] == "succeeded"));
    let slow = find(&all, "slow");
    assert_eq!((&slow["state"], &slow["reason"]), (&"failed".into(), &"timed out after 1s".into()), "{slow}");
    let (start, end) = (slow["started_us"].as_u64().expect("start"), slow["ended_us"].as_u64().expect("end"));
    assert!(end - start >= 1_000_000, "{slow}");
}
