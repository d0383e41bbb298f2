//! Per-instance fan-out: `for_each` with a file expansion gives a part of
//! instances per instance of the parent task, known as soon as that
//! instance is done, named `refine[12.3]`.

use crate::run::{assert_code, last_summary, statuses};
use crate::support::Test;
use std::time::Duration;

use crate::support::process::{entries, read, signal, spawn_flow, wait_child, wait_for};

/// `search[i]` writes `i` hits (none for 0); `refine` refines each hit of
/// each search, `report` mirrors it, `combine` waits for all of them.
/// A search instance fails while a file `fail-INDEX` exists.
fn screening() -> String {
    r#"
[[tasks]]
name = "search"
range = "0-3"
command = "[ ! -e fail-{{ index }} ] && mkdir -p hits && seq 1 {{ index }} | sed 's/^/mol/' > hits/{{ index }}.txt"
outputs = ["hits/{{ index }}.txt"]

[[tasks]]
name = "refine"
for_each = "search"
each_line = "hits/{{ index }}.txt"
command = "mkdir -p out && echo {{ item }} $FLOW_INDEX.$FLOW_SUBINDEX > out/{{ index }}.{{ subindex }}.txt"
outputs = ["out/{{ index }}.{{ subindex }}.txt"]

[[tasks]]
name = "report"
for_each = "refine"
command = "cat out/{{ index }}.{{ subindex }}.txt"
inputs = ["out/{{ index }}.{{ subindex }}.txt"]

[[tasks]]
name = "combine"
after = ["report"]
command = "cat out/*.txt | sort > all.txt"
outputs = ["all.txt"]
"#
    .to_owned()
}

#[test]
fn each_producer_instance_gives_its_own_part() {
    // An old copy of a produced file is never read.
    let t = Test::new().workflow(&screening()).file("hits/3.txt", "stale\n");
    let plan = t.success_with(&["plan"]);
    insta::assert_snapshot!(plan);
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    assert_eq!(
        read(&t, "all.txt"),
        "mol1 1.0\nmol1 2.0\nmol1 3.0\nmol2 2.1\nmol2 3.1\nmol3 3.2\n",
        "each instance sees its parent's index and its subindex"
    );
    let labels = statuses(&t, None);
    let refine: Vec<&str> = labels.keys().filter(|l| l.starts_with("refine[")).map(String::as_str).collect();
    assert_eq!(refine, ["refine[1.0]", "refine[2.0]", "refine[2.1]", "refine[3.0]", "refine[3.1]", "refine[3.2]"]);
    assert_eq!(labels.keys().filter(|l| l.starts_with("report[")).count(), 6, "{labels:?}");
    let summary = last_summary(t.path());
    assert_eq!((summary["total"].as_u64(), summary["succeeded"].as_u64()), (Some(4 + 6 + 6 + 1), Some(17)));

    assert_eq!(t.success_with(&["log", "cat", "report[3.1]"]), "mol2 3.1\n");
    let part = t.success_with(&["log", "list", "refine[2]", "--columns", "task,status"]);
    assert_eq!(part, "TASK         STATE\nrefine[2.0]  succeeded\nrefine[2.1]  succeeded\n");
    let missing = t.run_with(&["log", "cat", "refine[2.5]"]);
    assert_code(&missing, 2);
    insta::assert_snapshot!(t.normalize(&missing.stderr), @"error: `refine[2.5]` in this run: `refine[2]` has no instance 5 (it has 2)");
    // Issue 11: every --json names a nested instance by its parent's index and its `sub`.
    let ids = |line: &str| {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        (v["label"].as_str().unwrap_or_default().to_owned(), v["index"].as_i64(), v["sub"].as_u64())
    };
    let list = t.success_with(&["log", "list", "--json", "refine[3.1]"]);
    assert_eq!(list.lines().map(ids).collect::<Vec<_>>(), [("refine[3.1]".to_owned(), Some(3), Some(1))]);
    let explained = t.success_with(&["explain", "--json", "refine[3]"]);
    let explained: Vec<_> = explained.lines().map(ids).map(|(_, index, sub)| (index, sub)).collect();
    assert_eq!(explained, [(Some(3), Some(0)), (Some(3), Some(1)), (Some(3), Some(2))]);

    let again = t.run_with(&["run"]);
    assert_code(&again, 0);
    insta::assert_snapshot!(t.normalize(&again.stderr), @r"
        run [RUN]: 5 instances of 4 tasks, + the instances of `refine`, `report` (known at run time)
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 17 unchanged (skipped) in [TIME]
    ");
}

#[test]
fn a_part_starts_as_soon_as_its_producer_instance_is_done() {
    // `slow` finishes only once the part of `fast` has run: a part that
    // waited for the whole producer task would never start.
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "search"
matrix = { who = ["fast", "slow"] }
command = """
mkdir -p hits
if [ {{ item.who }} = slow ]; then
  for i in $(seq 1 100); do [ -e refined-fast ] && break; sleep 0.1; done
  [ -e refined-fast ] || exit 1
fi
echo {{ item.who }} > hits/{{ item.who }}.txt
"""
outputs = ["hits/{{ item.who }}.txt"]

[[tasks]]
name = "refine"
for_each = "search"
each_line = "hits/{{ item.who }}.txt"
command = "touch refined-{{ item }}"
"#,
    );
    let out = t.run_with(&["run", "--cpus", "2"]);
    assert_code(&out, 0);
    let labels = statuses(&t, None);
    assert_eq!(labels.get("refine[0.0]").map(String::as_str), Some("succeeded"), "{labels:?}");
    assert_eq!(labels.get("refine[1.0]").map(String::as_str), Some("succeeded"), "{labels:?}");
}

#[test]
fn a_failed_producer_instance_cancels_only_its_part() {
    let t = Test::new().workflow(&screening()).file("fail-2", "");
    let out = t.run_with(&["run"]);
    assert_code(&out, 1);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 5 instances of 4 tasks, + the instances of `refine`, `report` (known at run time)
        ✗ search[2] failed: exit code 1 (workflow.toml:3:8)
        log:  flow log cat --failed
        report:  flow report
        run [RUN]: 11 succeeded, 1 failed, 1 cancelled in [TIME]
    ");
    let labels = statuses(&t, None);
    assert_eq!(labels.get("combine").map(String::as_str), Some("cancelled"), "{labels:?}");
    assert_eq!(labels.get("search[2]").map(String::as_str), Some("failed"), "{labels:?}");
    for done in ["refine[1.0]", "refine[3.2]", "report[3.2]"] {
        assert_eq!(labels.get(done).map(String::as_str), Some("succeeded"), "{done}: {labels:?}");
    }
    assert!(!labels.keys().any(|l| l.starts_with("refine[2.")), "{labels:?}");
    let why = t.success_with(&["explain", "refine[2]"]);
    assert_eq!(
        why,
        "refine[2.?]: its instances are never known: they come from `hits/2.txt` once search[2] is done, \
         and search[2] failed\n"
    );
    let only = t.run_with(&["run", "--only", "refine[1.0]"]);
    assert_code(&only, 2);
    insta::assert_snapshot!(t.normalize(&only.stderr), @"error: `--only`: the instances of `refine` are known only as `search` runs; select the whole task");
    let summary = last_summary(t.path());
    // search[2] failed and combine was cancelled; the parts refine[2.?] and
    // report[2.?], never known, are no instances (issue 27: the counts add up).
    assert_eq!((summary["failed"].as_u64(), summary["cancelled"].as_u64()), (Some(1), Some(1)), "{summary}");

    // Fixed: the failed instance and its part run, the rest is unchanged.
    fs_err::remove_file(t.path().join("fail-2")).expect("remove fail-2");
    let again = t.run_with(&["run"]);
    assert_code(&again, 0);
    insta::assert_snapshot!(t.normalize(&again.stderr), @r"
        run [RUN]: 5 instances of 4 tasks, + the instances of `refine`, `report` (known at run time)
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 6 succeeded, 11 unchanged (skipped) in [TIME]
    ");
    assert_eq!(read(&t, "out/2.1.txt"), "mol2 2.1\n");
}

#[test]
fn nested_tasks_are_checked() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "select"
command = "echo 1 > list.txt"
outputs = ["list.txt"]

[[tasks]]
name = "search"
each_line = "list.txt"
command = "echo {{ item }} > hits/{{ index }}.txt"
outputs = ["hits/{{ index }}.txt"]

[[tasks]]
name = "refine"
for_each = "search"
each_line = "hits/{{ index }}.txt"
command = "true"
after = ["search[1.2]"]
"#,
    );
    let out = t.run_with(&["check"]);
    assert_code(&out, 2);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r#"
        flow::compile::nested_parent

          × `refine` expands a file per instance of `search`, whose own instances are known only at run
          │ time
            ╭─[workflow.toml:15:12]
         14 │ name = "refine"
         15 │ for_each = "search"
            ·  ────┬───
            ·  ╰── instances not known before the run
         16 │ each_line = "hits/{{ index }}.txt"
            ╰────
          help: expand per instance of a task whose instances are known before the run, or expand over one
                file
        error: 1 problem in workflow.toml
    "#);
}

#[test]
fn kill_9_with_half_the_parts_done_resumes_the_rest() {
    // Parts 1-3 are known and run; part instances of 2 and 3 above the
    // first wait until `go` exists. After kill -9 the next run reads the
    // parts back from the killed run and runs only what did not finish.
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "search"
range = "1-3"
command = "mkdir -p hits && seq 1 {{ index }} > hits/{{ index }}.txt"
outputs = ["hits/{{ index }}.txt"]

[[tasks]]
name = "refine"
for_each = "search"
each_line = "hits/{{ index }}.txt"
command = "mkdir -p done && if [ {{ subindex }} -gt 0 ] && [ ! -e go ]; then sleep 30; fi; echo {{ index }}.{{ subindex }} >> ran.txt; touch done/{{ index }}.{{ subindex }}"
outputs = ["done/{{ index }}.{{ subindex }}"]
"#,
    );
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "6"], "flow.stderr");
    let half = wait_for(Duration::from_secs(20), || {
        entries(&t.path().join("done")).len() == 3
            && statuses(&t, None).iter().filter(|(l, s)| l.starts_with("refine[") && *s == "succeeded").count() == 3
    });
    signal(flow.id(), "-KILL");
    let _ = wait_child(&mut flow, Duration::from_secs(5));
    assert!(half, "three instances never finished: {}", read(&t, "flow.stderr"));
    let plan = t.success_with(&["plan", "--why"]);
    insta::assert_snapshot!(t.normalize(&plan), @r"
        search: 0 of 3 would run, 3 unchanged
        refine: 3 of 6 would run, 3 unchanged
          3 failed last time: refine[2.1], refine[3.1], refine[3.2]
    ");
    let t = t.file("go", "").timeout(Duration::from_secs(60));
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 3 instances of 2 tasks, + the instances of `refine` (known at run time)
        results: done/1.0, done/2.0, done/2.1 and 3 more
        log:  flow log list
        report:  flow report
        run [RUN]: 3 succeeded, 6 unchanged (skipped) in [TIME]
    ");
    let mut ran: Vec<String> = read(&t, "ran.txt").lines().map(str::to_owned).collect();
    ran.sort();
    assert_eq!(ran, ["1.0", "2.0", "2.1", "3.0", "3.1", "3.2"], "each instance ran once");
}

#[test]
fn nested_tasks_run_on_remote_workers_with_variants_and_retries() {
    let t =
        Test::new().workflow(&screening().replace(
            "name = \"refine\"\n",
            "name = \"refine\"\nretries = 1\nvariants = [{ cpus = 64 }, { cpus = 2 }]\n",
        ));
    let t = t.file("fail-once", "");
    let workflow = read(&t, "workflow.toml").replace(
        "command = \"mkdir -p out &&",
        "command = \"if [ {{ index }}.{{ subindex }} = 3.1 ] && rm fail-once 2>/dev/null; then exit 1; fi; mkdir -p out &&",
    );
    fs_err::write(t.path().join("workflow.toml"), workflow).expect("write the workflow");
    let (mut run, access) = crate::workers::start_run(&t, &["--no-local-worker"]);
    let mut worker = crate::workers::start_worker(&t, &access, &["--cpus", "4"], "worker.stderr");
    let code = crate::support::process::finish(&t, &mut run, Duration::from_secs(60));
    assert_eq!(code, 0, "{}", read(&t, "run.stderr"));
    let _ = wait_child(&mut worker, Duration::from_secs(10));
    insta::assert_snapshot!(t.normalize(&read(&t, "run.stderr")), @r"
        run [RUN]: 5 instances of 4 tasks, + the instances of `refine`, `report` (known at run time)
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        + worker 0 joined: [HOST] ([ADDR]), 4 cpus, 0 gpus
        ! refine[3.1] failed (exit code 1), retrying (attempt 1)
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 17 succeeded in [TIME]
    ");
    assert_eq!(read(&t, "all.txt").lines().count(), 6);
}

#[test]
fn the_pocket_docking_example_docks_into_every_pocket() {
    let t = Test::new();
    crate::support::copy::copy_example(&crate::support::root().join("examples/workflows/pocket-docking"), t.path());
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    let summary = read(&t, "summary.txt");
    assert_eq!(summary.lines().count(), 10, "{summary}");
    assert_eq!(summary.lines().next(), Some("3ert pocket 3 score 30"), "{summary}");
    let labels = statuses(&t, None);
    let docked: Vec<&str> = labels.keys().filter(|l| l.starts_with("dock[")).map(String::as_str).collect();
    // 2xyz (index 2) has no pocket; 3ert (index 1) has three.
    insta::assert_snapshot!(docked.join(" "), @"dock[0.0] dock[0.1] dock[1.0] dock[1.1] dock[1.2] dock[3.0] dock[3.1] dock[4.0] dock[5.0] dock[5.1]");
    // Editing the docking script reruns every pose, the summary and the
    // included report on it, nothing else.
    let script = read(&t, "scripts/dock.sh").replace("* 7", "* 9");
    fs_err::write(t.path().join("scripts/dock.sh"), script).expect("edit the script");
    let again = t.run_with(&["run"]);
    assert_code(&again, 0);
    insta::assert_snapshot!(t.normalize(&again.stderr), @r"
        run [RUN]: 9 instances of 5 tasks, + the instances of `dock` (known at run time); dropped by `when`: `notify`
        results: lib/best.txt
        log:  flow log list
        report:  flow report
        finally: succeeded in [TIME]
        run [RUN]: 12 succeeded, 6 unchanged (skipped), 1 skipped by a condition in [TIME]
    ");
}

#[test]
fn dry_exec_warns_once_per_nested_task() {
    let t = Test::new().workflow(&screening()).file("hits/2.txt", "a\nb\n");
    let out = t.run_with(&["run", "--dry-exec"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 5 instances of 4 tasks, + the instances of `refine`, `report` (known at run time)
        warning: `hits/0.txt` does not exist (its writers did not run under --dry-exec): no instances (and the other files of this task that are missing)
        log:  flow log list
        report:  flow report
        run [RUN]: 9 succeeded in [TIME] (--dry-exec: nothing was executed)
    ");
    // The file on disk is read under --dry-exec: two instances of part 2.
    let labels = statuses(&t, None);
    assert_eq!(labels.keys().filter(|l| l.starts_with("refine[")).count(), 2, "{labels:?}");
}

#[test]
fn a_cycle_through_the_files_of_a_nested_task_is_reported() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "search"
range = "1-3"
command = "true"
inputs = ["out/*.txt"]
outputs = ["hits/{{ index }}.txt"]

[[tasks]]
name = "refine"
for_each = "search"
each_line = "hits/{{ index }}.txt"
command = "true"
outputs = ["out/{{ index }}.{{ subindex }}.txt"]
"#,
    );
    let out = t.run_with(&["check"]);
    assert_code(&out, 2);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r#"
        flow::compile::cycle

          × dependency cycle: search → refine → search
           ╭─[workflow.toml:3:8]
         2 │ [[tasks]]
         3 │ name = "search"
           ·  ────┬───
           ·  ╰── part of the cycle
         4 │ range = "1-3"
           ╰────
          help: remove one of these dependencies: `search` → `refine` (expansion), `refine` → `search`
                (files)
        error: 1 problem in workflow.toml
    "#);
}

#[test]
fn files_no_task_writes_must_be_there_before_the_run() {
    let workflow = r#"
[[tasks]]
name = "receptor"
range = "1-3"
command = "true"

[[tasks]]
name = "dock"
for_each = "receptor"
each_line = "pockets/{{ index }}.txt"
command = "echo {{ item }} {{ subindex }}"
"#;
    let t = Test::new().workflow(workflow).file("pockets/1.txt", "a\n").file("pockets/3.txt", "b\nc\n");
    let out = t.run_with(&["check"]);
    assert_code(&out, 2);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r#"
        flow::compile::unreadable_file

          × `pockets/2.txt`, the `each_line` file of `receptor[2]`, does not exist, and no task writes it
            ╭─[workflow.toml:10:13]
          9 │ for_each = "receptor"
         10 │ each_line = "pockets/{{ index }}.txt"
            ·  ────────────┬────────────
            ·  ╰── rendered per instance
         11 │ command = "echo {{ item }} {{ subindex }}"
            ╰────
          help: create the files, or list them in the `outputs` of the task that writes them
        error: 1 problem in workflow.toml
    "#);
    let t = t.file("pockets/2.txt", "");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    assert_eq!(t.success_with(&["log", "cat", "dock[3.1]"]), "c 1\n");
}

#[test]
fn plan_why_reads_the_parts_whose_producer_would_not_run() {
    let t = Test::new().workflow(&screening());
    assert_code(&t.run_with(&["run"]), 0);
    fs_err::remove_file(t.path().join("hits/2.txt")).expect("remove a producer's output");
    let plan = t.success_with(&["plan", "--why"]);
    insta::assert_snapshot!(t.normalize(&plan), @r"
        search: 1 of 4 would run, 3 unchanged
          1 output `hits/2.txt` missing: search[2]
        refine: 0 of 4 would run, 4 unchanged; 1 part known after `search` runs
        report: 0 of 4 would run, 4 unchanged; 1 part known after `search` runs
        combine: 1 of 1 would run, 0 unchanged
          1 after `report`, which runs first: combine
    ");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    // search[2] wrote the same two hits again: its part is unchanged too.
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 5 instances of 4 tasks, + the instances of `refine`, `report` (known at run time)
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 1 succeeded, 16 unchanged (skipped) in [TIME]
    ");
}
