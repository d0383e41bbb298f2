//! Outputs of instances that did not succeed in this run are moved aside
//! (issue 26): an instance skipped by its `when`, cancelled, or a failure
//! handler that does not run leaves nothing an earlier run wrote for it
//! where a glob can read it; and an instance about to run has its declared
//! outputs moved aside first, so a command that appends gives a clean
//! run's result.

use crate::run::statuses;
use crate::support::Test;
use crate::support::process::read;

/// The issue's repro: a per-instance `when` and a glob over what it writes.
const CUT: &str = r#"
vars = { cut = 0 }

[[tasks]]
name = "a"
range = "1-3"
when = "{{ item > vars.cut }}"
command = "mkdir -p a && echo {{ index }} > a/{{ index }}.txt"
outputs = ["a/{{ index }}.txt"]

[[tasks]]
name = "c"
inputs = ["a/*.txt"]
command = "cat a/*.txt > all.txt"
outputs = ["all.txt"]
"#;

/// The last run's id.
fn last_run(t: &Test) -> String {
    let runs = crate::support::process::entries(&t.path().join(".flow/runs"));
    runs.into_iter().next_back().expect("a run")
}

#[test]
fn stale_output_of_an_instance_skipped_now_is_not_read_by_a_glob_issue_26() {
    let t = Test::new().workflow(CUT);
    t.success_with(&["run"]);
    assert_eq!(read(&t, "all.txt"), "1\n2\n3\n");

    let plan = t.success_with(&["plan", "--why", "--instances", "-v", "cut=1"]);
    assert_eq!(
        plan,
        "a: 0 of 3 would run, 2 unchanged, 1 skipped by a condition
  a[1]: skipped: when `{{ item > vars.cut }}` was false (rendered `False`)
  1 output left for skipped instances would be moved aside: a/1.txt
c: 1 of 1 would run, 0 unchanged
  c: the files input `a/*.txt` matches changed
"
    );
    let dry = t.run_with(&["run", "--dry-exec", "-v", "cut=1"]);
    assert!(
        dry.stderr.contains(": 1 succeeded, 2 unchanged (skipped), 1 skipped by a condition in "),
        "{}",
        dry.stderr
    );
    assert!(t.path().join("a/1.txt").exists(), "--dry-exec moves nothing");

    let out = t.run_with(&["run", "-v", "cut=1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = last_run(&t);
    let line = format!(
        "~ a: moved 1 output an earlier run left for instances skipped now (a[1]) to .flow/runs/{run}/stale/: a/1.txt\n"
    );
    assert!(out.stderr.contains(&line), "{}", out.stderr);
    assert!(
        out.stderr.contains(": 1 succeeded, 2 unchanged (skipped), 1 skipped by a condition in "),
        "{}",
        out.stderr
    );
    assert_eq!(statuses(&t, None)["c"], "succeeded");
    assert_eq!(read(&t, "all.txt"), "2\n3\n", "what a clean run with cut=1 leaves");
    assert!(!t.path().join("a/1.txt").exists());
    assert_eq!(read(&t, &format!(".flow/runs/{run}/stale/a/1.txt")), "1\n", "nothing is lost");

    // Back to the first configuration: a[1] and c run again.
    let out = t.run_with(&["run"]);
    assert!(out.stderr.contains(": 2 succeeded, 2 unchanged (skipped) in "), "{}", out.stderr);
    assert_eq!(read(&t, "all.txt"), "1\n2\n3\n");
}

/// The guide's `collect` example, with the failing ligand a variable.
const POSES: &str = r#"
vars = { bad = 0 }

[[tasks]]
name = "prepare"
range = "1-3"
command = "if [ {{ index }} = {{ vars.bad }} ]; then exit 3; fi; echo ligand {{ index }} > ligand.{{ index }}"
outputs = ["ligand.{{ index }}"]

[[tasks]]
name = "dock"
range = "1-3"
inputs = ["ligand.{{ index }}"]
command = "echo pose {{ index }} > pose.{{ index }}"
outputs = ["pose.{{ index }}"]

[[tasks]]
name = "triage"
after = [{ task = "dock", on = "failure" }]
command = "echo failed: $FLOW_FAILED_TASKS > triage.txt"
outputs = ["triage.txt"]

[[tasks]]
name = "collect"
after = [{ task = "dock", on = "always" }]
inputs = ["pose.*"]
command = "cat pose.* > poses.txt"
outputs = ["poses.txt"]
"#;

#[test]
fn stale_output_of_a_cancelled_instance_is_not_collected_and_a_handler_s_note_goes_with_the_fix_issue_26() {
    let t = Test::new().workflow(POSES);
    t.success_with(&["run"]);
    assert_eq!(read(&t, "poses.txt"), "pose 1\npose 2\npose 3\n");

    let out = t.run_with(&["run", "-v", "bad=2"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let run = last_run(&t);
    let line = format!(
        "~ dock: moved 1 output an earlier run left for instances cancelled (dock[2]) to .flow/runs/{run}/stale/: pose.2\n"
    );
    assert!(out.stderr.contains(&line), "{}", out.stderr);
    assert_eq!(read(&t, "poses.txt"), "pose 1\npose 3\n", "a clean run with bad=2 has no pose 2");
    assert_eq!(read(&t, "triage.txt"), "failed: dock[2]\n");

    // Fixed: the handler does not run, and its note goes.
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = last_run(&t);
    let line = format!(
        "~ triage: moved 1 output an earlier run left for instances skipped now (triage) to .flow/runs/{run}/stale/: triage.txt\n"
    );
    assert!(out.stderr.contains(&line), "{}", out.stderr);
    assert!(!t.path().join("triage.txt").exists());
    assert_eq!(read(&t, "poses.txt"), "pose 1\npose 2\npose 3\n");
}

#[test]
fn stale_output_of_an_instance_that_failed_is_not_collected_issue_26() {
    // The guide's example as it is: dock[2] fails when `bad` names it.
    let workflow = POSES.replace(
        "command = \"echo pose {{ index }} > pose.{{ index }}\"",
        "command = \"if [ {{ index }} = {{ vars.fail }} ]; then exit 3; fi; echo pose {{ index }} > pose.{{ index }}\"",
    );
    let t = Test::new().workflow(&workflow.replace("vars = { bad = 0 }", "vars = { bad = 0, fail = 0 }"));
    t.success_with(&["run"]);
    let out = t.run_with(&["run", "-v", "fail=2"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(read(&t, "poses.txt"), "pose 1\npose 3\n", "a clean run with fail=2 has no pose 2");
    assert_eq!(read(&t, &format!(".flow/runs/{}/stale/pose.2", last_run(&t))), "pose 2\n");
}

#[test]
fn stale_outputs_are_moved_aside_before_an_instance_runs_again_so_appending_gives_one_line_issue_26() {
    let t =
        Test::new().workflow("[[tasks]]\nname = \"log\"\ncommand = \"echo x >> out.txt\"\noutputs = [\"out.txt\"]\n");
    t.success_with(&["run"]);
    assert_eq!(read(&t, "out.txt"), "x\n");
    fs_err::write(
        t.path().join("workflow.toml"),
        read(&t, "workflow.toml").replace("out.txt\"\n", "out.txt # edited\"\n"),
    )
    .unwrap();
    let out = t.run_with(&["run"]);
    assert!(out.stderr.contains(": 1 succeeded in "), "{}", out.stderr);
    assert_eq!(read(&t, "out.txt"), "x\n", "what a clean run leaves");
    assert_eq!(read(&t, &format!(".flow/runs/{}/stale/out.txt", last_run(&t))), "x\n", "nothing is lost");
}

#[test]
fn stale_outputs_of_a_failed_attempt_are_moved_aside_before_its_retry_and_kept_issue_26() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"flaky\"\nretries = 2\n\
         command = \"echo {{ attempt }} >> out.txt; [ {{ attempt }} = 2 ]\"\noutputs = [\"out.txt\"]\n",
    );
    t.success_with(&["run"]);
    let stale = format!(".flow/runs/{}/stale", last_run(&t));
    assert_eq!(read(&t, "out.txt"), "2\n", "each attempt starts from nothing");
    assert_eq!(read(&t, &format!("{stale}/out.txt")), "0\n");
    assert_eq!(read(&t, &format!("{stale}/out.txt~1~")), "1\n", "a second copy does not overwrite the first");
}

#[test]
fn stale_outputs_of_a_stage_never_known_because_its_list_was_skipped_are_not_read_issue_26() {
    let t = Test::new().workflow(
        r#"
vars = { cut = 0 }

[[tasks]]
name = "list"
range = "1-1"
when = "{{ item > vars.cut }}"
command = "printf 'a\nb\n' > names.txt"
outputs = ["names.txt"]

[[tasks]]
name = "each"
each_line = "names.txt"
command = "mkdir -p out && echo {{ item }} > out/{{ item }}.txt"
outputs = ["out/{{ item }}.txt"]

[[tasks]]
name = "other"
command = "mkdir -p out && echo other > out/other.txt"
outputs = ["out/other.txt"]

[[tasks]]
name = "final"
inputs = ["out/*.txt"]
command = "cat out/*.txt > final.txt"
outputs = ["final.txt"]
"#,
    );
    t.success_with(&["run"]);
    assert_eq!(read(&t, "final.txt"), "a\nb\nother\n");
    let out = t.run_with(&["run", "-v", "cut=1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = format!(
        "~ each: moved 2 outputs an earlier run left for instances skipped now (each[0], each[1]) to .flow/runs/{}/stale/: out/a.txt, out/b.txt\n",
        last_run(&t)
    );
    assert!(out.stderr.contains(&line), "{}", out.stderr);
    assert_eq!(statuses(&t, None)["final"], "succeeded", "`other` ran: `final` is not skipped");
    assert_eq!(read(&t, "final.txt"), "other\n", "what a clean run with cut=1 leaves");
}

#[test]
fn stale_output_changed_by_hand_is_moved_aside_all_the_same_and_the_run_says_so_issue_26() {
    let t = Test::new().workflow(CUT);
    t.success_with(&["run"]);
    let t = t.file("a/1.txt", "by hand\n");
    let out = t.run_with(&["run", "-v", "cut=1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = last_run(&t);
    let line = format!(
        "~ a: moved 1 output an earlier run left for instances skipped now (a[1]) to .flow/runs/{run}/stale/: a/1.txt (1 changed since flow wrote it)\n"
    );
    assert!(out.stderr.contains(&line), "{}", out.stderr);
    assert!(!t.path().join("a/1.txt").exists(), "a clean run with cut=1 has no a/1.txt");
    assert_eq!(read(&t, "all.txt"), "2\n3\n");
    assert_eq!(read(&t, &format!(".flow/runs/{run}/stale/a/1.txt")), "by hand\n", "nothing is lost");
}

#[test]
fn outputs_a_failed_command_left_are_moved_aside_when_it_fails_issue_26() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"w\"\ncommand = \"echo part > out.txt; exit 3\"\noutputs = [\"out.txt\"]\n\n\
         [[tasks]]\nname = \"look\"\nafter = [{ task = \"w\", on = \"always\" }]\ncommand = \"cat out.* > seen.txt\"\n",
    );
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let run = last_run(&t);
    let line = format!("~ w: moved 1 output of instances that failed (w) to .flow/runs/{run}/stale/: out.txt\n");
    assert!(out.stderr.contains(&line), "{}", out.stderr);
    assert!(!t.path().join("out.txt").exists(), "a failed command's output is not this run's result");
    assert_eq!(read(&t, &format!(".flow/runs/{run}/stale/out.txt")), "part\n", "nothing is lost");
    assert_eq!(statuses(&t, None)["look"], "failed", "the reader found no output of `w`");
}

/// Issue 26 (found by the model check, seed 20261205): a `kill -9` while
/// an instance ran left what its command had written, and a later run in
/// which its task was dropped by a false `when` left it where a glob could
/// read it: only what a success recorded was moved aside.
#[test]
fn outputs_of_an_attempt_a_killed_run_never_finished_are_moved_aside_issue_26() {
    use crate::support::process::{signal, spawn_flow, wait_child, wait_for};
    use std::time::Duration;
    let t = Test::new().workflow(
        "vars = { on = true }\n\n[[tasks]]\nname = \"w\"\nwhen = \"{{ vars.on }}\"\n\
         command = \"echo part > out.txt; sleep 30\"\noutputs = [\"out.txt\"]\n",
    );
    let mut run = spawn_flow(t.path(), &["run"], "run.err");
    assert!(wait_for(Duration::from_secs(20), || t.path().join("out.txt").exists()), "the task started");
    signal(run.id(), "-KILL");
    wait_child(&mut run, Duration::from_secs(20)).expect("the run ends");
    let out = t.run_with(&["run", "-v", "on=false"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let id = last_run(&t);
    let line = format!(
        "~ w: moved 1 output of attempts a stopped run did not finish (w) to .flow/runs/{id}/stale/: out.txt\n"
    );
    assert!(out.stderr.contains(&line), "{}", out.stderr);
    assert!(!t.path().join("out.txt").exists(), "a clean run with on=false has no out.txt");
    assert_eq!(read(&t, &format!(".flow/runs/{id}/stale/out.txt")), "part\n", "nothing is lost");
}
