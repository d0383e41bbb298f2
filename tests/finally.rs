//! `[finally]` through the CLI: it runs once at the end of every run —
//! after success, failure, Ctrl-C and at the end of a run that resumes
//! one killed with `kill -9` — with the run's outcome in its environment.

use std::time::Duration;

use crate::run::{assert_code, last_summary, run_ids};
use crate::support::Test;
use crate::support::process::{read, signal, spawn_flow, wait_child, wait_for};

/// A workflow whose task runs `command`, with a `[finally]` that writes its environment to `finally.env`.
fn workflow(command: &str) -> String {
    format!(
        r#"
[finally]
command = "env | grep '^FLOW_' | sort > finally.env; echo cleaned up"
env = {{ NOTE = "{{{{ vars.note }}}}" }}

[vars]
note = "hi"

[[tasks]]
name = "work"
range = "1-2"
command = "{command}"
"#
    )
}

/// `NAME=value` lines of `finally.env` as a map.
fn env(t: &Test) -> std::collections::BTreeMap<String, String> {
    read(t, "finally.env")
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect()
}

#[test]
fn finally_runs_after_a_success_with_the_outcome_and_summary() {
    let t = Test::new().workflow(&workflow("true"));
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    assert!(out.stderr.contains("finally: succeeded in "), "{}", out.stderr);
    let env = env(&t);
    let id = run_ids(t.path()).pop().expect("a run");
    assert_eq!(env["FLOW_OUTCOME"], "succeeded");
    assert_eq!(env["FLOW_RUN_ID"], id);
    assert_eq!((env["FLOW_SUCCEEDED"].as_str(), env["FLOW_FAILED"].as_str()), ("2", "0"));
    assert_eq!(env["FLOW_TOTAL"], "2");
    let summary: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(&env["FLOW_SUMMARY_JSON"]).expect("summary written before"))
            .expect("JSON");
    assert_eq!(summary["succeeded"], 2);
    assert_eq!(t.success_with(&["log", "cat", "finally"]), "cleaned up\n");
    assert_eq!(last_summary(t.path())["finally"]["succeeded"], true);
    let plan = t.success_with(&["plan"]);
    assert!(plan.contains("finally: env | grep"), "{plan}");
}

#[test]
fn finally_runs_after_a_failure_and_its_own_failure_fails_the_run() {
    let t = Test::new().workflow(&workflow("exit 1"));
    assert_code(&t.run_with(&["run"]), 1);
    assert_eq!(env(&t)["FLOW_OUTCOME"], "failed");
    assert_eq!(env(&t)["FLOW_FAILED"], "2");

    let t = Test::new()
        .workflow("[finally]\nargv = [\"sh\", \"-c\", \"exit 3\"]\n\n[[tasks]]\nname = \"a\"\ncommand = \"true\"\n");
    let out = t.run_with(&["run"]);
    assert_code(&out, 1);
    assert!(out.stderr.contains("finally failed: exit code 3"), "{}", out.stderr);
    let summary = last_summary(t.path());
    assert_eq!(
        (summary["finally"]["succeeded"].as_bool(), summary["finally"]["exit_code"].as_i64()),
        (Some(false), Some(3))
    );
}

#[test]
fn finally_runs_after_ctrl_c() {
    let t = Test::new().workflow(&workflow("touch started.{{ index }}; sleep 30"));
    let mut flow = spawn_flow(t.path(), &["run"], "run.stderr");
    if !wait_for(Duration::from_secs(10), || t.path().join("started.1").exists()) {
        let _ = flow.kill();
        panic!("the task never started: {}", read(&t, "run.stderr"));
    }
    signal(flow.id(), "-INT");
    let status = wait_child(&mut flow, Duration::from_secs(8)).expect("flow exits after Ctrl-C");
    assert_eq!(status.code(), Some(130), "{}", read(&t, "run.stderr"));
    assert_eq!(env(&t)["FLOW_OUTCOME"], "interrupted");
}

#[test]
fn a_second_ctrl_c_stops_finally() {
    let t = Test::new().workflow(
        "[finally]\ncommand = \"touch finally.started; sleep 30\"\n\n[[tasks]]\nname = \"a\"\ncommand = \"sleep 30\"\n",
    );
    let mut flow = spawn_flow(t.path(), &["run"], "run.stderr");
    std::thread::sleep(Duration::from_millis(500));
    signal(flow.id(), "-INT");
    if !wait_for(Duration::from_secs(10), || t.path().join("finally.started").exists()) {
        let _ = flow.kill();
        panic!("finally never started: {}", read(&t, "run.stderr"));
    }
    signal(flow.id(), "-INT");
    let status = wait_child(&mut flow, Duration::from_secs(8)).expect("flow exits after a second Ctrl-C");
    assert_eq!(status.code(), Some(130), "{}", read(&t, "run.stderr"));
    assert_eq!(last_summary(t.path())["finally"]["reason"], "interrupted");
}

#[test]
fn finally_runs_at_the_end_of_a_run_that_resumes_a_killed_one() {
    let t = Test::new().workflow(&workflow("if [ ! -e resumed ]; then touch started.{{ index }}; sleep 30; fi"));
    let mut flow = spawn_flow(t.path(), &["run"], "run.stderr");
    if !wait_for(Duration::from_secs(10), || t.path().join("started.2").exists()) {
        let _ = flow.kill();
        panic!("the tasks never started: {}", read(&t, "run.stderr"));
    }
    signal(flow.id(), "-KILL");
    wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");
    assert!(!t.path().join("finally.env").exists(), "a killed run cannot run finally itself");
    fs_err::write(t.path().join("resumed"), "").expect("marker");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(env(&t)["FLOW_OUTCOME"], "succeeded");
}

#[test]
fn finally_runs_its_setup_lines_first_and_a_failing_one_fails_it() {
    let text = "[vars]\ngreeting = \"hello\"\n\n[[tasks]]\nname = \"t\"\ncommand = \"true\"\n\n\
                [finally]\nsetup = [\"export GREETING={{ vars.greeting }}\", \"echo set up\"]\n\
                command = \"echo $GREETING from finally\"\n";
    let t = Test::new().workflow(text);
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(t.success_with(&["log", "cat", "finally"]), "set up\nhello from finally\n");
    fs_err::write(t.path().join("workflow.toml"), text.replace("\"echo set up\"", "\"false\"")).unwrap();
    let out = t.run_with(&["run"]);
    assert_code(&out, 1);
    assert!(out.stderr.contains("finally failed: setup failed: exit 1"), "{}", out.stderr);
}
