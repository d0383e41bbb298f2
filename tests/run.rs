//! `flow run` end to end: real processes, failures, signals, resuming,
//! the run directory and `flow log` on what a run left behind. Resources
//! and priorities are in `resources.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::copy::{copy_example, example_files, init_repository};
use crate::support::process::{entries, lines, read, spawn_flow, wait_child, wait_for};
use crate::support::{Output, Test, root};

/// Run ids under `dir/.flow/runs`, oldest first.
pub(crate) fn run_ids(dir: &Path) -> Vec<String> {
    entries(&dir.join(".flow/runs")).into_iter().collect()
}

/// `summary.json` of the newest run.
pub(crate) fn last_summary(dir: &Path) -> serde_json::Value {
    let id = run_ids(dir).pop().expect("a run directory");
    let text = fs_err::read_to_string(dir.join(".flow/runs").join(id).join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

/// `flow log [--run ID] list --json`: label → status.
pub(crate) fn statuses(t: &Test, run: Option<&str>) -> BTreeMap<String, String> {
    let mut args = vec!["log"];
    if let Some(id) = run {
        args.extend(["--run", id]);
    }
    args.extend(["list", "--json"]);
    let out = t.success_with(&args);
    out.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            (v["label"].as_str().expect("label").to_owned(), v["state"].as_str().unwrap_or("-").to_owned())
        })
        .collect()
}

pub(crate) fn assert_code(out: &Output, code: i32) {
    assert_eq!(out.code, code, "expected exit code {code}\nstdout:\n{}\nstderr:\n{}", out.stdout, out.stderr);
}

/// Live (not zombie) processes whose process group is `pgid`, or whose pid is `pgid`.
pub(crate) fn live_in_group(pgid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for name in entries(Path::new("/proc")) {
        let Ok(pid) = name.parse::<u32>() else { continue };
        let Ok(stat) = fs_err::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // pid (comm) state ppid pgrp ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let (state, pgrp) = (fields.first().copied().unwrap_or("Z"), fields.get(2).and_then(|p| p.parse().ok()));
        if state != "Z" && (pid == pgid || pgrp == Some(pgid)) {
            found.push(pid);
        }
    }
    found
}

// 1
#[test]
fn hello_two_dependent_tasks() {
    let t = Test::new()
        .workflow(
            r#"
name = "hello"

[[tasks]]
name = "greet"
command = "echo hello > hello.txt"
outputs = ["hello.txt"]

[[tasks]]
name = "shout"
command = "tr a-z A-Z < hello.txt > shout.txt"
inputs = ["hello.txt"]
outputs = ["shout.txt"]
"#,
        )
        .args(["run"]);
    let out = t.run();
    assert_code(&out, 0);
    assert_eq!(read(&t, "hello.txt"), "hello\n");
    assert_eq!(read(&t, "shout.txt"), "HELLO\n");
    let list = t.success_with(&["log", "list"]);
    insta::assert_snapshot!(t.normalize(&list), @r"
        TASK  STATE  EXIT  DURATION  CPU  RSS  STDOUT  STDERR
        greet  succeeded  0  [TIME]  [TIME]  [SIZE]  0 B  0 B
        shout  succeeded  0  [TIME]  [TIME]  [SIZE]  0 B  0 B
    ");
    let summary = last_summary(t.path());
    assert_eq!(summary["total"], 2);
    assert_eq!(summary["succeeded"], 2);
    assert_eq!(summary["interrupted"], false);
}

// 7
#[test]
fn timeout_kills_the_task() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "slow"
timeout = "1s"
command = "sleep 5 & echo $! > sleep.pid; wait"
"#,
        )
        .args(["run"]);
    let start = Instant::now();
    let out = t.run();
    let elapsed = start.elapsed();
    assert_code(&out, 1);
    // The limit it names is the task's, which normalising would hide.
    assert_eq!(out.stderr.lines().nth(1), Some("✗ slow failed: timed out after 1s (workflow.toml:3:8)"));
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 1 instance of 1 task
        ✗ slow failed: timed out after [TIME] (workflow.toml:3:8)
        log:  flow log cat --failed
        report:  flow report
        run [RUN]: 0 succeeded, 1 failed in [TIME]
    ");
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");
    let pid: u32 = read(&t, "sleep.pid").trim().parse().expect("sleep pid");
    assert!(wait_for(Duration::from_secs(2), || live_in_group(pid).is_empty()), "sleep {pid} still running");
    assert_eq!(statuses(&t, None)["slow"], "failed");
}

// 8
#[test]
fn retries_rerun_a_failed_instance() {
    let workflow = |retries: u32| {
        format!(
            r#"
[[tasks]]
name = "flaky"
retries = {retries}
command = "echo $FLOW_INSTANCE >> attempts.txt; test $FLOW_INSTANCE -ge 2"
"#
        )
    };
    let enough = Test::new().workflow(&workflow(2)).args(["run"]);
    assert_code(&enough.run(), 0);
    assert_eq!(lines(&enough, "attempts.txt"), ["0", "1", "2"]);

    let too_few = Test::new().workflow(&workflow(1)).args(["run"]);
    let out = too_few.run();
    assert_code(&out, 1);
    assert_eq!(lines(&too_few, "attempts.txt"), ["0", "1"]);
    insta::assert_snapshot!(too_few.normalize(&out.stderr), @r"
        run [RUN]: 1 instance of 1 task
        ! flaky failed (exit code 1), retrying (attempt 1)
        ✗ flaky failed: exit code 1 (workflow.toml:3:8)
        log:  flow log cat --failed
        report:  flow report
        run [RUN]: 0 succeeded, 1 failed in [TIME]
    ");
    assert_eq!(last_summary(too_few.path())["failed"], 1);
}

// 9
#[test]
fn a_failure_cancels_its_dependents_only() {
    let t = Test::new()
        .workflow(
            r#"name = "fails"

[[tasks]]
name = "a"
command = "echo oops-from-a >&2; exit 3"

[[tasks]]
name = "b"
after = ["a"]
command = "touch b.done"

[[tasks]]
name = "c"
command = "touch c.done"
"#,
        )
        .args(["run"])
        .stderr_normalized(
            "run [RUN]: 3 instances of 3 tasks\n\
             ✗ a failed: exit code 3 (workflow.toml:4:8)\n  │ oops-from-a\n\
             log:     flow log cat --failed\nreport:  flow report\n\
             run [RUN]: 1 succeeded, 1 failed, 1 cancelled in [TIME]\n",
        );
    t.status(1);
    assert!(!t.path().join("b.done").exists());
    assert!(t.path().join("c.done").exists());
    let s = statuses(&t, None);
    assert_eq!((s["a"].as_str(), s["b"].as_str(), s["c"].as_str()), ("failed", "cancelled", "succeeded"));
    let summary = last_summary(t.path());
    assert_eq!((summary["succeeded"].as_u64(), summary["failed"].as_u64()), (Some(1), Some(1)));
    assert_eq!(summary["cancelled"], 1);
}

// 10
#[test]
fn max_fails_stops_starting_tasks() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "bad"
range = "1-10"
command = "mkdir -p ran && touch ran/{{ index }} && exit 1"
"#,
        )
        .args(["run", "--cpus", "1", "--max-fails", "2"]);
    let out = t.run();
    assert_code(&out, 1);
    let ran = entries(&t.path().join("ran")).len();
    assert!(matches!(ran, 2 | 3), "{ran} instances ran");
    let summary = last_summary(t.path());
    assert_eq!(summary["failed"].as_u64(), Some(ran as u64));
    assert_eq!(summary["cancelled"].as_u64(), Some(10 - ran as u64));
    // `flow log list` lists attempts: the instances cancelled before they
    // started have none (issue 29: they are journaled together), and
    // `flow status` counts them from the journal.
    let s = statuses(&t, None);
    assert_eq!((s.len(), s.values().filter(|v| *v == "failed").count()), (ran, ran), "{s:?}");
    let status: serde_json::Value = serde_json::from_str(&t.success_with(&["status", "--json"])).expect("JSON");
    assert_eq!(status["counts"]["cancelled"].as_u64(), Some(10 - ran as u64), "{status}");
    let report: serde_json::Value = serde_json::from_str(&t.success_with(&["report", "--json"])).expect("JSON");
    assert_eq!(report["counts"]["cancelled"].as_u64(), Some(10 - ran as u64), "{report}");
}

// 11
#[test]
fn a_missing_declared_output_is_a_failure() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "liar"
command = "true"
outputs = ["never.txt"]
"#,
        )
        .args(["run"])
        .stderr_normalized(
            "run [RUN]: 1 instance of 1 task\n\
             ✗ liar failed: declared output `[DIR]/never.txt` was not created (workflow.toml:3:8)\n\
             log:     flow log cat --failed\nreport:  flow report\n\
             run [RUN]: 0 succeeded, 1 failed in [TIME]\n",
        );
    t.status(1);
    assert_eq!(statuses(&t, None)["liar"], "failed");
}

// 12
#[test]
fn json_prints_events_as_ndjson() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "a"
command = "echo a"

[[tasks]]
name = "b"
after = ["a"]
command = "echo b"
"#,
        )
        .args(["run", "--json"]);
    let out = t.success();
    let events: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().expect("event")).collect();
    assert_eq!(kinds.first(), Some(&"run_started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"run_finished"), "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "task_started").count(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "task_finished").count(), 2, "{kinds:?}");
    let started: Vec<&str> =
        events.iter().filter(|e| e["event"] == "task_started").map(|e| e["label"].as_str().unwrap()).collect();
    assert_eq!(started, ["a", "b"]);
    let finished = events.last().unwrap();
    assert_eq!(finished["counts"]["succeeded"], 2, "{finished}");
    assert!(events[0]["run_id"].is_string() && events[0]["total"] == 2, "{}", events[0]);
}

// 17
#[test]
fn dry_exec_starts_no_process() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "many"
range = "1-10000"
command = "mkdir -p made && touch made/{{ index }}"
"#,
    );
    // Spawned, so that a stalled run fails the test instead of hanging it.
    let mut flow = spawn_flow(t.path(), &["run", "--dry-exec"], "flow.stderr");
    let status = wait_child(&mut flow, Duration::from_secs(30));
    if status.is_none() {
        let _ = flow.kill();
        let _ = flow.wait();
    }
    let status = status.unwrap_or_else(|| panic!("--dry-exec stalled:\n{}", read(&t, "flow.stderr")));
    assert_eq!(status.code(), Some(0), "{}", read(&t, "flow.stderr"));
    assert!(!t.path().join("made").exists());
    let summary = last_summary(t.path());
    assert_eq!(summary["total"], 10000);
    assert_eq!(summary["succeeded"], 10000);
}

// 18
#[test]
fn tasks_see_flow_variables_and_chunks() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "plain"
command = '''
mkdir -p env
printf '%s|%s|%s|%s\n' "$FLOW_TASK" "$FLOW_INDEX" "$FLOW_ITEM" "$FLOW_INSTANCE" > env/plain
test -d "$FLOW_RUN_DIR" && echo "$FLOW_RUN_DIR" > env/run_dir
'''

[[tasks]]
name = "lines"
each_line = "names.txt"
command = '''
mkdir -p env
printf '%s|%s|%s\n' "$FLOW_TASK" "$FLOW_INDEX" "$FLOW_ITEM" > env/lines-$FLOW_INDEX
'''

[[tasks]]
name = "json"
from_json = "params.json"
command = '''mkdir -p env && printf '%s' "$FLOW_ITEM" > env/json-$FLOW_INDEX'''

[[tasks]]
name = "chunks"
each_chunk = { file = "big.txt", lines = 2, stdin = true }
command = '''
mkdir -p chunk stdin
cp {{ chunk.path }} chunk/{{ index }}
cat > stdin/{{ index }}
echo "$FLOW_CHUNK" > chunk/{{ index }}.env
echo "{{ chunk.path }}" > chunk/{{ index }}.path
'''
"#,
        )
        .file("names.txt", "alpha\n\nbeta gamma\n")
        .file("params.json", r#"[{"lr": 0.1, "name": "x"}, {"depth": 4}]"#)
        .file("big.txt", "l1\nl2\nl3\n\nl4\nl5\n")
        .args(["run"]);
    assert_code(&t.run(), 0);
    assert_eq!(read(&t, "env/plain"), "plain|0||0\n");
    let run = run_ids(t.path()).pop().unwrap();
    let run_dir = PathBuf::from(read(&t, "env/run_dir").trim());
    assert!(run_dir.ends_with(Path::new(".flow/runs").join(&run)), "{}", run_dir.display());
    assert_eq!(read(&t, "env/lines-0"), "lines|0|alpha\n");
    assert_eq!(read(&t, "env/lines-1"), "lines|1|beta gamma\n");
    let item0: serde_json::Value = serde_json::from_str(&read(&t, "env/json-0")).expect("FLOW_ITEM is JSON");
    assert_eq!(item0, serde_json::json!({"lr": 0.1, "name": "x"}));
    let item1: serde_json::Value = serde_json::from_str(&read(&t, "env/json-1")).expect("FLOW_ITEM is JSON");
    assert_eq!(item1, serde_json::json!({"depth": 4}));
    let expected = ["l1\nl2\n", "l3\nl4\n", "l5\n"];
    for (i, text) in expected.iter().enumerate() {
        assert_eq!(read(&t, &format!("chunk/{i}")), *text, "chunk {i} file");
        assert_eq!(read(&t, &format!("stdin/{i}")), *text, "chunk {i} on stdin");
        // `chunk.path` is relative to the workflow directory; `FLOW_CHUNK` is absolute.
        let relative = read(&t, &format!("chunk/{i}.path"));
        assert_eq!(relative.trim(), format!(".flow/chunks/chunks/{i}.txt"));
        let absolute = read(&t, &format!("chunk/{i}.env"));
        assert_eq!(Path::new(absolute.trim()), t.path().join(relative.trim()), "FLOW_CHUNK");
    }
    assert!(!t.path().join("chunk/3").exists());
}

// 19
#[test]
fn every_example_runs() {
    run_every_example(&root().join("examples/workflows"));
}

/// Runs each example under `workflows` in a copy of what a fresh clone
/// has of it: every instance succeeds, and its `.gitignore` lists every
/// file the run left (issue 27).
pub(crate) fn run_every_example(workflows: &Path) {
    let mut dirs: Vec<PathBuf> = fs_err::read_dir(workflows)
        .expect("examples dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("workflow.toml").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 4, "{dirs:?}");
    for dir in dirs {
        let name = dir.file_name().and_then(|n| n.to_str()).expect("utf-8 name").to_owned();
        let t = Test::new();
        copy_example(&dir, t.path());
        init_repository(t.path());
        let copied = example_files(t.path());
        assert!(!t.path().join(".flow").exists(), "{name}: a run's files were copied");
        let out = t.run_with(&["run"]);
        assert_eq!(out.code, 0, "{name}: expected success\nstdout:\n{}\nstderr:\n{}", out.stdout, out.stderr);
        let summary = last_summary(t.path());
        // Skipped: a task that runs only on a failure, when nothing failed.
        let done = summary["succeeded"].as_u64().unwrap_or(0) + summary["skipped"].as_u64().unwrap_or(0);
        assert_eq!(Some(done), summary["total"].as_u64(), "{name}: {summary}");
        assert_eq!(summary["failed"], 0, "{name}: {summary}");
        assert_eq!(example_files(t.path()), copied, "{name}: its .gitignore misses files the run wrote");
        if name == "ligand-screening" {
            let ranked = read(&t, "ranked.csv");
            let rows: Vec<&str> = ranked.lines().collect();
            assert_eq!(rows.len(), 60, "{ranked}");
            let scores: Vec<f64> = rows
                .iter()
                .map(|r| r.split(',').nth(1).and_then(|s| s.trim().parse().ok()).unwrap_or_else(|| panic!("{r}")))
                .collect();
            assert!(scores.windows(2).all(|w| w[0] <= w[1]), "not sorted by score: {scores:?}");
            insta::assert_snapshot!("ligand_screening_ranked", ranked);
        }
    }
}

// 20
#[test]
fn cwd_env_stdin_stdout_and_argv() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "in_sub"
cwd = "sub"
command = "pwd > here.txt"

[[tasks]]
name = "with_env"
env = { GREETING = "hi {{ task.name }}", THREADS = 4 }
command = "echo \"$GREETING $THREADS\" > env.txt"

[[tasks]]
name = "from_stdin"
stdin = "input.txt"
command = "tr a-z A-Z > upper.txt"

[[tasks]]
name = "to_file"
range = "1-2"
stdout = "out/{{ index }}.log"
command = "echo to-file-{{ index }}"

[[tasks]]
name = "quiet"
stdout = "none"
command = "echo discarded; echo kept-stderr >&2"

[[tasks]]
name = "raw"
argv = ["printf", "%s\n", "a b; echo injected $HOME", "{{ index }}"]
"#,
        )
        .file("sub/.keep", "")
        .file("input.txt", "shout me\n")
        .args(["run"]);
    assert_code(&t.run(), 0);
    let here = read(&t, "sub/here.txt");
    assert!(here.trim_end().ends_with("/sub"), "{here}");
    assert!(!t.path().join("here.txt").exists());
    assert_eq!(read(&t, "env.txt"), "hi with_env 4\n");
    assert_eq!(read(&t, "upper.txt"), "SHOUT ME\n");
    assert_eq!(read(&t, "out/1.log"), "to-file-1\n");
    assert_eq!(read(&t, "out/2.log"), "to-file-2\n");
    // The tasks run side by side: the log holds their lines in the order they finished.
    let log = t.success_with(&["log", "cat"]);
    let mut logged: Vec<&str> = log.lines().collect();
    logged.sort_unstable();
    assert_eq!(logged, ["0", "a b; echo injected $HOME", "kept-stderr"], "{log}");
    assert_eq!(t.success_with(&["log", "cat", "raw"]), "a b; echo injected $HOME\n0\n");
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs_err::metadata(path).expect("metadata").permissions().mode() & 0o777
}

/// Issue 12: run directories were 0755, so any user of a shared login node
/// could read every task's output. They are the owner's alone now, unless
/// the run shares them with the group; an existing `.flow` is closed too.
#[test]
fn run_directories_are_private() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ncommand = \"echo secret\"\n");
    fs_err::create_dir(t.path().join(".flow")).unwrap();
    t.success_with(&["run"]);
    let id = run_ids(t.path()).pop().unwrap();
    assert_eq!(mode(&t.path().join(".flow")), 0o700);
    assert_eq!(mode(&t.path().join(".flow/runs").join(&id)), 0o700);

    t.success_with(&["run", "--force", "--share-with-group"]);
    let id = run_ids(t.path()).pop().unwrap();
    assert_eq!(mode(&t.path().join(".flow")), 0o750);
    assert_eq!(mode(&t.path().join(".flow/runs").join(&id)), 0o750);
}

/// Issue 12: a chunk or line over the kernel's 128 KiB limit for one
/// environment string made every instance fail "Argument list too long".
/// Large items now reach the task as a file named by `FLOW_ITEM_FILE`.
#[test]
fn items_too_large_for_the_environment_come_in_a_file() {
    let line = "C".repeat(137);
    let lines: String = (0..1300).map(|i| format!("{line}{}\n", i % 10)).collect();
    let huge_line = "x".repeat(200_000);
    let t = Test::new()
        .file("mols.smi", &lines)
        .file("big.txt", &format!("small\n{huge_line}\n"))
        .workflow(
            r#"
[[tasks]]
name = "chunked"
each_chunk = { file = "mols.smi", lines = 1000 }
command = "mkdir -p out && echo \"$(printf %s \"$FLOW_ITEM\" | wc -c) $(wc -l < ${FLOW_ITEM_FILE:-/dev/null}) $(cmp -s ${FLOW_ITEM_FILE:-/dev/null} $FLOW_CHUNK && echo same)\" > out/c{{ index }}"

[[tasks]]
name = "lines"
each_line = "big.txt"
command = "mkdir -p out && if [ -n \"$FLOW_ITEM_FILE\" ]; then wc -c < $FLOW_ITEM_FILE; else echo \"$FLOW_ITEM\"; fi > out/l{{ index }}"
"#,
        );
    t.success_with(&["run"]);
    let read = |name: &str| fs_err::read_to_string(t.path().join("out").join(name)).unwrap();
    assert_eq!(read("c0"), "0 1000 same\n", "a 138 KB chunk comes as its file");
    assert_eq!(read("c1"), format!("{} 0 \n", 300 * 139), "a 42 KB chunk fits the environment");
    assert_eq!(read("l0"), "small\n");
    assert_eq!(read("l1"), "200000\n", "the item file holds the line without its newline");
}

/// `flow run`'s stderr with its run id and wall time replaced.
fn redacted(stderr: &str) -> String {
    let id = regex::Regex::new(r"\d{8}-\d{6}-\d{3}").expect("regex");
    let time = regex::Regex::new(r"in \d+\.\ds").expect("regex");
    time.replace_all(&id.replace_all(stderr, "[RUN]"), "in [TIME]").into_owned()
}

#[test]
fn the_run_counts_instances_and_ends_naming_results_log_and_report() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "select"
command = "printf 'a\nb\nc\nd\n' > hits.txt"
outputs = ["hits.txt"]

[[tasks]]
name = "refine"
each_line = "hits.txt"
command = "echo {{ item }} > refined-{{ item }}.txt"
outputs = ["refined-{{ item }}.txt"]
"#,
        )
        .args(["run"]);
    let out = t.run();
    assert_code(&out, 0);
    assert_eq!(
        redacted(&out.stderr),
        "run [RUN]: 1 instance of 2 tasks, + the instances of `refine` (known at run time)\n\
         + refine: 4 instances from hits.txt\n\
         results: refined-a.txt, refined-b.txt, refined-c.txt and 1 more\n\
         log:     flow log list\n\
         report:  flow report\n\
         run [RUN]: 5 succeeded in [TIME]\n"
    );
}

#[test]
fn run_from_another_directory_names_the_workflow_in_its_commands() {
    let t = Test::new()
        .file("sub/workflow.toml", "[[tasks]]\nname = \"a\"\ncommand = \"echo a > a.txt\"\noutputs = [\"a.txt\"]\n")
        .args(["run", "sub/workflow.toml"]);
    let out = t.run();
    assert_code(&out, 0);
    assert_eq!(
        redacted(&out.stderr),
        "run [RUN]: 1 instance of 1 task\n\
         results: sub/a.txt\n\
         log:     flow log -w sub/workflow.toml list\n\
         report:  flow report -w sub/workflow.toml\n\
         run [RUN]: 1 succeeded in [TIME]\n"
    );
}
