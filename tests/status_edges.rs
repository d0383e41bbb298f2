//! `after = [{ task = "dock", on = "failure" }]` and `on = "always"`: a task
//! that runs on another's failure is told what failed, and is skipped when
//! nothing did; one that runs whatever happened is not cancelled by a
//! failure; neither is taken from an earlier run made after a failure.

use std::time::Duration;

use crate::run::statuses;
use crate::support::Test;
use crate::support::process::{finish, read, signal, spawn_flow, wait_child, wait_for};
use crate::workers::{start_run, start_worker};

/// `dock[2]` fails while the file `broken.2` is there.
const DOCKING: &str = r#"
[[tasks]]
name = "dock"
range = "1-3"
command = "if [ -e broken.{{ index }} ]; then echo no pose >&2; exit 3; fi; echo pose {{ index }} > pose.{{ index }}"
outputs = ["pose.{{ index }}"]

[[tasks]]
name = "rescue"
after = [{ task = "dock", on = "failure" }]
command = "echo $FLOW_FAILED_TASKS > rescued.txt; cp $FLOW_FAILED_JSON failed.json"

[[tasks]]
name = "collect"
after = [{ task = "dock", on = "always" }]
inputs = ["pose.*"]
command = "cat pose.* > collected.txt"

[[tasks]]
name = "notify"
after = [{ task = "dock", on = "always" }]
command = "echo docking ended >> notified.txt"

[[tasks]]
name = "merge"
after = ["dock"]
command = "cat pose.* > merged.txt"
"#;

fn states(t: &Test) -> Vec<(String, String)> {
    statuses(t, None).into_iter().collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|&(l, s)| (l.to_owned(), s.to_owned())).collect()
}

#[test]
fn a_failure_handler_is_told_what_failed_and_an_always_task_runs_whatever_happened() {
    let t = Test::new().workflow(DOCKING).file("broken.2", "");
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 1, "dock[2] failed: {}", out.stderr);
    let expected = [
        ("collect", "succeeded"),
        ("dock[1]", "succeeded"),
        ("dock[2]", "failed"),
        ("dock[3]", "succeeded"),
        ("merge", "cancelled"),
        ("notify", "succeeded"),
        ("rescue", "succeeded"),
    ];
    assert_eq!(states(&t), pairs(&expected));
    assert_eq!(read(&t, "rescued.txt"), "dock[2]\n");
    let failed: serde_json::Value = serde_json::from_str(&read(&t, "failed.json")).unwrap();
    assert_eq!(
        failed,
        serde_json::json!([{ "task": "dock[2]", "state": "failed", "exit_code": 3, "signal": null, "reason": "exit code 3" }])
    );
    assert_eq!(read(&t, "collected.txt"), "pose 1\npose 3\n", "a file edge to dock waits for it however it ends");
}

#[test]
fn without_a_failure_the_handler_is_skipped_and_a_result_made_after_one_is_not_reused() {
    let t = Test::new().workflow(DOCKING).file("broken.2", "");
    assert_eq!(t.run_with(&["run"]).code, 1);

    // The same failure again: what reacts to it runs again.
    let again = t.run_with(&["run"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(
        again.stderr.contains(": 3 succeeded, 2 unchanged (skipped), 1 failed, 1 cancelled in "),
        "{}",
        again.stderr
    );

    // Fixed: nothing fails, so the handler is skipped; `notify` ran after
    // a failure, so its result is not reused now that dock[2] succeeded.
    fs_err::remove_file(t.path().join("broken.2")).unwrap();
    let fixed = t.run_with(&["run"]);
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    assert!(
        fixed.stderr.contains(": 4 succeeded, 2 unchanged (skipped), 1 skipped by a condition in "),
        "{}",
        fixed.stderr
    );
    let expected = [
        ("collect", "succeeded"),
        ("dock[1]", "cached"),
        ("dock[2]", "succeeded"),
        ("dock[3]", "cached"),
        ("merge", "succeeded"),
        ("notify", "succeeded"),
        ("rescue", "skipped"),
    ];
    assert_eq!(states(&t), pairs(&expected));
    assert_eq!(read(&t, "collected.txt"), "pose 1\npose 2\npose 3\n");
    assert_eq!(read(&t, "notified.txt"), "docking ended\n".repeat(3));
    let explain = t.success_with(&["explain", "rescue"]);
    assert!(explain.contains("it runs on a failure of `dock`, and nothing it waits for failed"), "{explain}");

    let plan = t.success_with(&["plan"]);
    assert!(plan.contains("  dock → rescue   all, on failure  after\n"), "{plan}");
    assert!(plan.contains("  dock → notify   all, always      after\n"), "{plan}");
    assert!(plan.contains("  dock → collect  all, always      files\n"), "a file edge waits the same way: {plan}");
    let plan = t.success_with(&["plan", "--why"]);
    assert!(plan.contains("rescue: 0 of 1 would run, 0 unchanged, 1 skipped by a condition\n  1 skipped: it runs only on a failure of `dock`: rescue\n"), "{plan}");

    let rerun = t.run_with(&["run"]);
    assert!(
        rerun.stderr.contains(": 0 succeeded, 6 unchanged (skipped), 1 skipped by a condition in "),
        "{}",
        rerun.stderr
    );
}

#[test]
fn an_element_wise_handler_runs_for_the_failed_instances_only() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "dock"
range = "1-3"
command = "test {{ index }} != 2"

[[tasks]]
name = "retry_slow"
range = "1-3"
after = [{ task = "dock[{{ index }}]", on = "failure" }]
command = "echo $FLOW_FAILED_TASKS > slow.{{ index }}"
"#,
    );
    assert_eq!(t.run_with(&["run"]).code, 1);
    let expected = [
        ("dock[1]", "succeeded"),
        ("dock[2]", "failed"),
        ("dock[3]", "succeeded"),
        ("retry_slow[1]", "skipped"),
        ("retry_slow[2]", "succeeded"),
        ("retry_slow[3]", "skipped"),
    ];
    assert_eq!(states(&t), pairs(&expected));
    assert_eq!(read(&t, "slow.2"), "dock[2]\n");
}

#[test]
fn a_misspelt_outcome_or_task_is_a_diagnostic_with_a_suggestion() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "dock"
command = "true"

[[tasks]]
name = "rescue"
after = [{ task = "dock", on = "failur" }]
command = "true"
"#,
        )
        .args(["check"]);
    let err = t.invalid();
    assert!(err.contains("unknown variant `failur`"), "{err}");
    assert!(err.contains("did you mean `failure`?"), "{err}");
    assert!(err.contains("workflow.toml:8:32"), "{err}");

    let t = Test::new().workflow(
        "[[tasks]]\nname = \"dock\"\ncommand = \"true\"\n\n[[tasks]]\nname = \"rescue\"\nafter = [{ task = \"dok\", on = \"always\" }]\ncommand = \"true\"\n",
    )
    .args(["check"]);
    let err = t.invalid();
    assert!(err.contains("`after` names unknown task `dok`") && err.contains("did you mean `dock`?"), "{err}");
}

/// A run killed while its failure handler runs is resumed by the next
/// `flow run`: the failed instance runs again, and so does the handler.
#[test]
fn a_handler_killed_with_its_run_runs_again_when_the_run_resumes() {
    let text = DOCKING.replace(
        "command = \"echo $FLOW_FAILED_TASKS > rescued.txt; cp $FLOW_FAILED_JSON failed.json\"",
        "command = \"if [ ! -e resumed ]; then touch rescuing; sleep 30; fi; echo $FLOW_FAILED_TASKS > rescued.txt\"",
    );
    let t = Test::new().workflow(&text).file("broken.2", "");
    let mut flow = spawn_flow(t.path(), &["run"], "run.stderr");
    if !wait_for(Duration::from_secs(10), || t.path().join("rescuing").exists()) {
        let _ = flow.kill();
        panic!("the handler never started: {}", read(&t, "run.stderr"));
    }
    signal(flow.id(), "-KILL");
    wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");
    fs_err::write(t.path().join("resumed"), "").unwrap();
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(read(&t, "rescued.txt"), "dock[2]\n");
    assert_eq!(statuses(&t, None).get("rescue").map(String::as_str), Some("succeeded"));
    assert_eq!(statuses(&t, None).get("dock[1]").map(String::as_str), Some("cached"));
}

/// On a remote worker, the handler reads the list of failures the
/// coordinator wrote into the run directory.
#[test]
fn a_failure_handler_on_a_remote_worker_is_told_what_failed() {
    let t = Test::new().workflow(DOCKING).file("broken.2", "");
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = start_worker(&t, &access, &["--cpus", "2"], "worker.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 1, "{}", read(&t, "run.stderr"));
    assert_eq!(read(&t, "rescued.txt"), "dock[2]\n");
    let failed: serde_json::Value = serde_json::from_str(&read(&t, "failed.json")).unwrap();
    assert_eq!(failed[0]["exit_code"], 3);
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some(), "the worker leaves");
}
