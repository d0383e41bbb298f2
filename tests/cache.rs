//! The cache decided before dispatch: instances an earlier run finished are
//! compared on the coordinator, so a rerun with nothing to do needs no
//! worker and submits no allocation.

use std::time::Duration;

use crate::pbs::{PROFILES, pbs, recorded};
use crate::run::{assert_code, last_summary, statuses};
use crate::support::Test;

const TWO_STAGES: &str = r#"
[[tasks]]
name = "gen"
range = "1-3"
command = "echo {{ index }} > g{{ index }}.txt"
outputs = ["g{{ index }}.txt"]

[[tasks]]
name = "sum"
command = "cat g*.txt > all.txt"
inputs = ["g*.txt"]
outputs = ["all.txt"]
"#;

#[test]
fn a_queue_rerun_with_nothing_to_do_submits_nothing() {
    let t = pbs(TWO_STAGES, PROFILES);
    assert_code(&t.run_with(&["run", "--profile", "pbs"]), 0);
    let submitted = recorded(&t, "qsub.log").lines().count();
    assert!(submitted >= 1, "the first run needs an allocation");
    let again = t.run_with(&["run", "--profile", "pbs"]);
    assert_code(&again, 0);
    insta::assert_snapshot!(t.normalize(&again.stderr), @r"
        run [RUN]: 4 instances of 2 tasks
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 4 unchanged (skipped) in [TIME]
    ");
    assert_eq!(recorded(&t, "qsub.log").lines().count(), submitted, "the rerun submitted an allocation");
    // One changed instance: the queue is asked again, for it alone.
    let t = t.file("workflow.toml", &TWO_STAGES.replace("echo {{ index }}", "echo v2 {{ index }}"));
    let changed = t.run_with(&["run", "--profile", "pbs"]);
    assert_code(&changed, 0);
    assert!(recorded(&t, "qsub.log").lines().count() > submitted, "{}", changed.stderr);
}

#[test]
fn a_rerun_with_nothing_to_do_needs_no_worker() {
    let t = Test::new().workflow(TWO_STAGES);
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.timeout(Duration::from_secs(20));
    let out = t.run_with(&["run", "--listen", "127.0.0.1:0", "--no-local-worker"]);
    assert_code(&out, 0);
    let summary = last_summary(t.path());
    assert_eq!((summary["cached"].as_u64(), summary["succeeded"].as_u64()), (Some(4), Some(0)), "{summary}");
}

#[test]
fn inputs_are_hashed_before_dispatch_and_a_changed_input_reruns_its_readers() {
    let t = Test::new().workflow(TWO_STAGES);
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.file("g2.txt", "edited\n");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    // gen[2]'s output is there but its own command is unchanged: skipped;
    // sum reads the edited file: runs again.
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 4 instances of 2 tasks
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 1 succeeded, 3 unchanged (skipped) in [TIME]
    ");
}

#[test]
fn a_moved_workflow_directory_keeps_its_cache() {
    let t = Test::new().workflow(TWO_STAGES).file("notes/readme.txt", "data\n");
    assert_code(&t.run_with(&["run"]), 0);
    let moved = Test::new();
    let elsewhere = moved.path().join("elsewhere");
    fs_err::create_dir_all(&elsewhere).expect("mkdir");
    crate::examples::copy_dir(t.path(), &elsewhere);
    let moved = moved.current_dir(&elsewhere);
    let out = moved.run_with(&["run"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(moved.normalize(&out.stderr), @r"
        run [RUN]: 4 instances of 2 tasks
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 4 unchanged (skipped) in [TIME]
    ");
}

const SCRIPTED: &str = r#"
[[tasks]]
name = "score"
range = "1-3"
command = "mkdir -p out && sh scripts/score.sh {{ index }} > out/{{ index }}.txt"
outputs = ["out/{{ index }}.txt"]

[[tasks]]
name = "plain"
command = "sh scripts/score.sh 0 > plain.txt"
outputs = ["plain.txt"]
implicit_inputs = false
"#;

#[test]
fn editing_a_script_reruns_the_tasks_that_run_it() {
    let t = Test::new().workflow(SCRIPTED).file("scripts/score.sh", "echo score $1\n");
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.file("scripts/score.sh", "echo better score $1\n");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    // `plain` opted out: its script is not tracked.
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 4 instances of 2 tasks
        results: out/1.txt, out/2.txt, out/3.txt and 1 more
        log:  flow log list
        report:  flow report
        run [RUN]: 3 succeeded, 1 unchanged (skipped) in [TIME]
    ");
    assert_eq!(crate::support::process::read(&t, "out/2.txt"), "better score 2\n");
    assert_eq!(crate::support::process::read(&t, "plain.txt"), "score 0\n");
}

/// Issue 18: a task's scripts are found from its `cwd`, not from the
/// workflow directory: editing `sub/s.sh` reruns the task, and an unrelated
/// `./s.sh` does not.
#[test]
fn scripts_are_found_from_the_task_cwd() {
    let workflow =
        "[[tasks]]\nname = \"t\"\ncwd = \"sub\"\ncommand = \"sh s.sh > ../o1.txt\"\noutputs = [\"o1.txt\"]\n";
    let t = Test::new().workflow(workflow).file("sub/s.sh", "echo one\n");
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.file("sub/s.sh", "echo two\n");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    assert_eq!(statuses(&t, None)["t"], "succeeded", "{}", out.stderr);
    assert_eq!(crate::support::process::read(&t, "o1.txt"), "two\n");
    let t = t.file("s.sh", "echo unrelated\n");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 1 instance of 1 task
        results: o1.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 1 unchanged (skipped) in [TIME]
    ");
    assert_eq!(crate::support::process::read(&t, "o1.txt"), "two\n");
}

/// Issue 18: an argv element that is shell text (`sh -c "…"`) is split into
/// words like a `command`, so the script it runs is tracked.
#[test]
fn scripts_in_shell_text_of_an_argv_are_tracked() {
    let workflow =
        "[[tasks]]\nname = \"t\"\nargv = [\"sh\", \"-c\", \"sh helper.sh > o.txt\"]\noutputs = [\"o.txt\"]\n";
    let t = Test::new().workflow(workflow).file("helper.sh", "echo one\n");
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.file("helper.sh", "echo two\n");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    assert_eq!(statuses(&t, None)["t"], "succeeded", "{}", out.stderr);
    assert_eq!(crate::support::process::read(&t, "o.txt"), "two\n");
}

#[test]
fn dry_exec_respects_the_cache_and_is_marked_as_dry() {
    let t = Test::new().workflow(TWO_STAGES);
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.file("workflow.toml", &TWO_STAGES.replace("echo {{ index }}", "echo v2 {{ index }}"));
    let dry = t.run_with(&["run", "--dry-exec"]);
    assert_code(&dry, 0);
    // gen changed, and sum reads what gen writes: the real run would run
    // sum too, so the dry run says so rather than "unchanged" (issue 18).
    insta::assert_snapshot!(t.normalize(&dry.stderr), @r"
        run [RUN]: 4 instances of 2 tasks
        log:  flow log list
        report:  flow report
        run [RUN]: 4 succeeded in [TIME] (--dry-exec: nothing was executed)
    ");
    Test::new()
        .current_dir(t.path())
        .args(["runs"])
        .stdout_normalized(
            "RUN  STATE  INSTANCES  SUCCEEDED  UNCHANGED  FAILED  CANCELLED  SKIPPED  TIME\n\
             [RUN]  succeeded  4  4  0  0  0  0  [TIME]\n\
             [RUN]  dry (nothing ran)  4  4  0  0  0  0  [TIME]\n",
        )
        .success();
    let list = t.run_with(&["log", "list"]);
    insta::assert_snapshot!(t.normalize(&list.stderr), @"note: run [RUN] was a --dry-exec run: nothing was executed, its successes are not results");
    // The dry run did no work: a real run still runs the changed instances.
    let real = t.run_with(&["run"]);
    insta::assert_snapshot!(t.normalize(&real.stderr), @r"
        run [RUN]: 4 instances of 2 tasks
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 4 succeeded in [TIME]
    ");
}

#[test]
fn the_output_of_a_skipped_instance_is_read_from_the_run_that_produced_it() {
    let t = Test::new().workflow("[[tasks]]\nname = \"hello\"\ncommand = \"echo made here > out.txt; echo hello from the work\"\noutputs = [\"out.txt\"]\n");
    assert_code(&t.run_with(&["run"]), 0);
    let first = crate::run::run_ids(t.path()).pop().expect("first run");
    assert_code(&t.run_with(&["run"]), 0);
    assert_code(&t.run_with(&["run"]), 0);
    let cat = t.run_with(&["log", "cat", "hello"]);
    assert_code(&cat, 0);
    assert_eq!(cat.stdout, "hello from the work\n");
    // Of three runs, the first is named: its id is kept apart from other run ids.
    insta::assert_snapshot!(t.normalize(&cat.stderr.replace(&first, "[FIRST]")), @"note: run [RUN] skipped hello as unchanged; its output is from run [FIRST]");
    let explained = t.success_with(&["explain", "hello"]);
    assert!(explained.starts_with(&format!("hello: unchanged since run {first}, so skipped")), "{explained}");
}
