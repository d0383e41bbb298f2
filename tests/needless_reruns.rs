//! What does not cause a rerun (issue 26): the same work rendered another
//! way — as the attempt that succeeded, from the same workflow in the
//! other syntax — finds its earlier success; what must run again says
//! why in true words.

use std::time::Duration;

use crate::run::{assert_code, last_summary};
use crate::support::Test;
use crate::support::process::{read, signal, spawn_flow, wait_child, wait_for};

/// `(succeeded, cached)` of the newest run of `flow run ARGS`.
fn run(t: &Test, args: &[&str]) -> (u64, u64) {
    let mut all = vec!["run", "--cpus", "2"];
    all.extend_from_slice(args);
    assert_code(&t.run_with(&all), 0);
    let s = last_summary(t.path());
    (s["succeeded"].as_u64().unwrap_or(u64::MAX), s["cached"].as_u64().unwrap_or(u64::MAX))
}

/// The reference's request that grows with each retry, with the amount
/// in the task's environment: the first attempt fails, the second succeeds.
const GROWING: &str = r#"
[[tasks]]
name = "fit"
memory = "{{ 10 * (attempt + 1) }} MiB"
env = { MEM_MB = "{{ resources.memory }}" }
retries = 2
command = "test $MEM_MB -ge 20 && echo $MEM_MB > fit.txt"
outputs = ["fit.txt"]

[[tasks]]
name = "use"
command = "cat fit.txt > use.txt"
inputs = ["fit.txt"]
outputs = ["use.txt"]
"#;

/// Issue 26: an instance is compared as the attempt that succeeded.
#[test]
fn issue_26_a_request_that_grows_with_the_attempt_is_compared_as_the_attempt_that_succeeded() {
    let t = Test::new().workflow(GROWING);
    assert_eq!(run(&t, &[]), (2, 0));
    assert_eq!(read(&t, "fit.txt"), "20\n");
    let plan = t.success_with(&["plan", "--why", "--instances"]);
    assert_eq!(plan, "fit: 0 of 1 would run, 1 unchanged\nuse: 0 of 1 would run, 1 unchanged\n");
    assert_eq!(run(&t, &[]), (0, 2), "nothing changed, yet the retried task ran again");
    assert_eq!(run(&t, &[]), (0, 2), "a skip keeps the attempt of the work it stands for");
}

/// Issue 26: `workflow.toml` converted to `workflow.yaml` is the same workflow.
#[test]
fn issue_26_the_same_workflow_in_yaml_reruns_nothing() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"up\"\ncommand = \"tr a-z A-Z < in.txt > up.txt\"\ninputs = [\"in.txt\"]\noutputs = [\"up.txt\"]\n")
        .file("in.txt", "abc\n");
    assert_eq!(run(&t, &[]), (1, 0));
    fs_err::remove_file(t.path().join("workflow.toml")).expect("remove the TOML file");
    let t = t.file(
        "workflow.yaml",
        "tasks:\n  - name: up\n    command: tr a-z A-Z < in.txt > up.txt\n    inputs: [in.txt]\n    outputs: [up.txt]\n",
    );
    assert_eq!(t.success_with(&["plan", "--why", "--instances"]), "up: 0 of 1 would run, 1 unchanged\n");
    assert_eq!(run(&t, &[]), (0, 1), "the same workflow in YAML ran again");
}

const SCRIPTED: &str = "[[tasks]]\nname = \"s\"\ncommand = \"sh s.sh > s.txt\"\noutputs = [\"s.txt\"]\n";

/// Issue 26: turning `implicit_inputs` off changes what the key holds
/// (the scripts the command names): the instance runs again, and says why.
/// Turned back on, the earlier success with the same script is found.
#[test]
fn issue_26_toggling_implicit_inputs_gives_a_true_reason() {
    let t = Test::new().workflow(SCRIPTED).file("s.sh", "echo one\n");
    assert_eq!(run(&t, &[]), (1, 0));
    let t = t.workflow(&SCRIPTED.replace("name = \"s\"\n", "name = \"s\"\nimplicit_inputs = false\n"));
    assert_eq!(
        t.success_with(&["plan", "--why", "--instances"]),
        "s: 1 of 1 would run, 0 unchanged\n  s: implicit_inputs changed\n"
    );
    assert_eq!(run(&t, &[]), (1, 0));
    let t = t.workflow(SCRIPTED);
    assert_eq!(
        t.success_with(&["plan", "--why", "--instances"]),
        "s: 0 of 1 would run, 1 unchanged\n  scripts counted as inputs: s.sh\n"
    );
    assert_eq!(run(&t, &[]), (0, 1));
}

/// Issue 26: an attempt killed while it ran taints its instance, whatever
/// its key: set back to the key of its last success, a handler killed
/// with `kill -9` runs again (it may have written what it does not declare).
#[test]
fn issue_26_a_handler_killed_while_it_runs_runs_again_whatever_its_key() {
    let t = Test::new().workflow(
        r#"
[vars]
pause = 0

[[tasks]]
name = "b"
command = "echo b > b.txt"
outputs = ["b.txt"]

[[tasks]]
name = "h"
after = [{ task = "b", on = "always" }]
command = "echo {{ vars.pause }} >> notes.txt; sleep {{ vars.pause }}"
"#,
    );
    assert_eq!(run(&t, &[]), (2, 0));
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2", "-v", "pause=30"], "run.stderr");
    let started = wait_for(Duration::from_secs(20), || read(&t, "notes.txt") == "0\n30\n");
    signal(flow.id(), "-KILL");
    wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");
    assert!(started, "the handler never started: {}", read(&t, "run.stderr"));
    assert_eq!(
        t.success_with(&["plan", "--why", "--instances"]),
        "b: 0 of 1 would run, 1 unchanged\nh: 1 of 1 would run, 0 unchanged\n  h: an attempt started after its last success and did not finish\n"
    );
    assert_eq!(run(&t, &[]), (1, 1));
    assert_eq!(read(&t, "notes.txt"), "0\n30\n0\n");
}
