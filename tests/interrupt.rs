//! Stopping and resuming: Ctrl-C, SIGTERM, `kill -9`, torn logs, one run
//! at a time, and what a second run skips or redoes.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::run::{assert_code, last_summary, live_in_group, run_ids, statuses};
use crate::support::Test;
use crate::support::process::{entries, guard_of, lines, read, signal, spawn_flow, wait_child, wait_for};

#[test]
fn ctrl_c_stops_every_task_and_exits_130() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "wait"
range = "1-4"
command = "mkdir -p running && echo $$ > running/{{ index }} && sleep 30"
"#,
    );
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2"], "flow.stderr");
    let running = t.path().join("running");
    let two = wait_for(Duration::from_secs(10), || {
        let files = entries(&running);
        files.len() >= 2 && files.iter().all(|f| !read(&t, &format!("running/{f}")).trim().is_empty())
    });
    if !two {
        let _ = flow.kill();
        panic!("two tasks never started: {:?}", entries(&running));
    }
    let pids: Vec<u32> =
        entries(&running).iter().map(|f| read(&t, &format!("running/{f}")).trim().parse().expect("pid")).collect();
    for pid in &pids {
        assert!(!live_in_group(*pid).is_empty(), "task {pid} is running before Ctrl-C");
    }
    let sent = Instant::now();
    signal(flow.id(), "-INT");
    let status = wait_child(&mut flow, Duration::from_secs(6));
    let Some(status) = status else {
        let _ = flow.kill();
        panic!("flow did not exit within 6 s of SIGINT");
    };
    assert!(sent.elapsed() < Duration::from_secs(5), "exit took {:?}", sent.elapsed());
    assert_eq!(status.code(), Some(130), "{status:?}\n{}", read(&t, "flow.stderr"));
    for pid in &pids {
        assert!(
            wait_for(Duration::from_secs(1), || live_in_group(*pid).is_empty()),
            "task process group {pid} still has {:?}",
            live_in_group(*pid)
        );
    }
    assert_eq!(entries(&running).len(), 2, "no new task starts after Ctrl-C");
    let summary = last_summary(t.path());
    assert_eq!(summary["interrupted"], true, "{summary}");
    assert_eq!(summary["succeeded"], 0);
    assert_eq!(summary["cancelled"], 4, "{summary}");
    let s = statuses(&t, None);
    assert!(s.values().all(|v| v != "running" && v != "succeeded"), "{s:?}");
    t.success_with(&["log", "list"]);
}

// 12, continued
#[test]
fn ctrl_c_kills_a_task_that_ignores_sigterm() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "stubborn"
command = "trap '' TERM; sleep 30 & echo $$ > pid; wait; wait; wait"
"#,
    );
    let mut flow = spawn_flow(t.path(), &["run"], "flow.stderr");
    let started = wait_for(Duration::from_secs(10), || !read(&t, "pid").trim().is_empty());
    if !started {
        let _ = flow.kill();
        panic!("the task never started");
    }
    let pid: u32 = read(&t, "pid").trim().parse().expect("pid");
    assert!(wait_for(Duration::from_secs(2), || live_in_group(pid).len() >= 2), "sh and sleep run");
    signal(flow.id(), "-INT");
    let Some(status) = wait_child(&mut flow, Duration::from_secs(5)) else {
        let _ = flow.kill();
        panic!("flow did not exit within 5 s of SIGINT");
    };
    assert_eq!(status.code(), Some(130), "{}", read(&t, "flow.stderr"));
    assert!(
        wait_for(Duration::from_secs(1), || live_in_group(pid).is_empty()),
        "SIGKILL after the grace period: {:?} still running",
        live_in_group(pid)
    );
}

#[test]
fn a_second_run_of_a_running_workflow_is_refused() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "long"
command = "touch started; sleep 30"
"#,
    );
    let mut flow = spawn_flow(t.path(), &["run"], "flow.stderr");
    let started = wait_for(Duration::from_secs(10), || t.path().join("started").exists());
    let second = t.run_with(&["run"]);
    signal(flow.id(), "-INT");
    let status = wait_child(&mut flow, Duration::from_secs(5));
    if status.is_none() {
        let _ = flow.kill();
    }
    assert!(started, "the first run never started its task");
    assert_code(&second, 2);
    insta::assert_snapshot!(t.normalize(&second.stderr), @"error: another `flow run` is running this workflow's directory (run [RUN]); wait for it or stop it");
    assert_eq!(status.and_then(|s| s.code()), Some(130));
    assert_eq!(run_ids(t.path()).len(), 1, "the refused run made no run directory");
}

// 13
#[test]
fn kill_9_then_resume_skips_finished_work() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "step"
range = "1-20"
command = "echo step {{ index }}; sleep 0.2; echo {{ index }} >> done.txt"
"#,
    );
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2"], "flow1.stderr");
    let some_done = wait_for(Duration::from_secs(10), || lines(&t, "done.txt").len() >= 5);
    signal(flow.id(), "-KILL");
    let status = wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");
    assert!(some_done, "no task finished before the kill");
    assert_eq!(status.code(), None, "killed by a signal");
    let done_before = lines(&t, "done.txt");
    assert!(done_before.len() < 20, "the run finished before it was killed");
    let run1 = run_ids(t.path()).pop().expect("run 1");
    assert!(!t.path().join(".flow/runs").join(&run1).join("summary.json").exists());

    // Let any orphaned `sleep` of a killed task end before counting.
    std::thread::sleep(Duration::from_millis(300));
    let second = t.run_with(&["run", "--cpus", "2"]);
    assert_code(&second, 0);
    let run2 = run_ids(t.path()).pop().expect("run 2");
    assert_ne!(run1, run2);

    let first = statuses(&t, Some(&run1));
    let again = statuses(&t, Some(&run2));
    let succeeded: Vec<&String> = first.iter().filter(|(_, s)| *s == "succeeded").map(|(l, _)| l).collect();
    assert!(!succeeded.is_empty(), "{first:?}");
    assert_eq!(again.len(), 20, "{again:?}");
    let mut counts = BTreeMap::<String, usize>::new();
    for index in lines(&t, "done.txt") {
        *counts.entry(format!("step[{index}]")).or_default() += 1;
    }
    for label in &succeeded {
        assert_eq!(again[*label], "cached", "{label} succeeded in run 1\nrun 1: {first:?}\nrun 2: {again:?}");
        assert_eq!(counts.get(*label), Some(&1), "{label} finished more than once: {counts:?}");
    }
    for i in 1..=20 {
        assert!(counts.contains_key(&format!("step[{i}]")), "step[{i}] never finished: {counts:?}");
    }
    let summary = last_summary(t.path());
    assert_eq!(summary["cached"].as_u64(), Some(succeeded.len() as u64), "{summary}");
    assert_eq!(summary["succeeded"].as_u64(), Some(20 - succeeded.len() as u64), "{summary}");

    let cat = t.run_with(&["log", "--run", &run1, "cat"]);
    assert_code(&cat, 0);
    // Which instances had started when the run was killed depends on timing:
    // the output of every one that succeeded is there, and maybe more.
    let printed: BTreeSet<&str> = cat.stdout.lines().collect();
    let expected: Vec<String> =
        succeeded.iter().map(|l| format!("step {}", l.trim_start_matches("step[").trim_end_matches(']'))).collect();
    let expected: BTreeSet<&str> = expected.iter().map(String::as_str).collect();
    assert!(expected.is_subset(&printed), "output missing:\n{}", cat.stdout);
}

// 13, continued
#[test]
fn the_next_run_kills_tasks_left_by_a_killed_run() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "wait"
range = "1-2"
command = "mkdir -p pids && echo $$ >> pids/{{ index }} && if [ ! -e second ]; then sleep 30; fi"
"#,
    );
    let pids = t.path().join("pids");
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2"], "flow1.stderr");
    let started =
        wait_for(Duration::from_secs(10), || (1..=2).all(|i| !read(&t, &format!("pids/{i}")).trim().is_empty()));
    // Its guard goes first, as when a whole process group is killed.
    signal(guard_of(flow.id()).expect("flow run has a guard"), "-KILL");
    signal(flow.id(), "-KILL");
    wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");
    assert!(started, "the tasks never started: {:?}", entries(&pids));
    let orphans: Vec<u32> = (1..=2).map(|i| read(&t, &format!("pids/{i}")).trim().parse().expect("pid")).collect();

    fs_err::write(t.path().join("second"), "").expect("write marker");
    let start = Instant::now();
    assert_code(&t.run_with(&["run", "--cpus", "2"]), 0);
    assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
    for pid in orphans {
        assert!(
            wait_for(Duration::from_secs(1), || live_in_group(pid).is_empty()),
            "task {pid} of the killed run still has {:?}",
            live_in_group(pid)
        );
    }
    assert_eq!(lines(&t, "pids/1").len(), 2, "wait[1] ran again");
}

#[test]
fn a_killed_runs_tasks_end_with_it() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"wait\"\nrange = \"1-2\"\ncommand = \"mkdir -p pids && echo $$ > pids/{{ index }}; sleep 30\"\n",
    );
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2"], "flow.stderr");
    let started =
        wait_for(Duration::from_secs(10), || (1..=2).all(|i| !read(&t, &format!("pids/{i}")).trim().is_empty()));
    assert!(started, "the tasks never started");
    // Long enough for flow to hand the tasks to its guard.
    std::thread::sleep(Duration::from_millis(500));
    signal(flow.id(), "-KILL");
    wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");
    for i in 1..=2 {
        let pid: u32 = read(&t, &format!("pids/{i}")).trim().parse().expect("pid");
        assert!(
            wait_for(Duration::from_secs(5), || live_in_group(pid).is_empty()),
            "task {pid} runs on after its run was killed: {:?}",
            live_in_group(pid)
        );
    }
}

// 14
#[test]
fn a_torn_output_log_tail_is_a_warning() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "one"
command = "echo first-output"

[[tasks]]
name = "two"
after = ["one"]
command = "echo second-output"

[[tasks]]
name = "three"
after = ["two"]
command = "echo third-output"
"#,
        )
        .args(["run"]);
    assert_code(&t.run(), 0);
    let before = t.success_with(&["log", "cat"]);
    assert_eq!(before, "first-output\nsecond-output\nthird-output\n");
    let run = run_ids(t.path()).pop().expect("run");
    let log = t.path().join(".flow/runs").join(run).join("output.log");
    let len = fs_err::metadata(&log).expect("output.log").len();
    let file = fs_err::OpenOptions::new().write(true).open(&log).expect("open output.log");
    file.set_len(len - 5).expect("truncate");
    let out = t.run_with(&["log", "cat"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "first-output\nsecond-output\n");
    insta::assert_snapshot!(t.normalize(&out.stderr), @"warning: output.log ends with 41 bytes of an incomplete record (the run was interrupted); ignored");
}

// 15
#[test]
fn resume_reruns_only_what_changed() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "stage"
each_line = "list.txt"
command = "mkdir -p out && cat data/{{ item }} > out/{{ index }}.txt && echo stage-{{ index }} >> ran.txt"
inputs = ["data/{{ item }}"]
outputs = ["out/{{ index }}.txt"]

[[tasks]]
name = "combine"
command = "cat out/*.txt > all.txt && echo combine >> ran.txt"
inputs = ["out/*.txt"]
outputs = ["all.txt"]
"#,
        )
        .file("list.txt", "a\nb\nc\n")
        .file("data/a", "apple\n")
        .file("data/b", "banana\n")
        .file("data/c", "cherry\n")
        .args(["run"]);
    let ran = |t: &Test| -> Vec<String> {
        let all = lines(t, "ran.txt");
        fs_err::remove_file(t.path().join("ran.txt")).ok();
        let mut all = all;
        all.sort();
        all
    };
    assert_code(&t.run(), 0);
    assert_eq!(ran(&t), ["combine", "stage-0", "stage-1", "stage-2"]);
    assert_eq!(read(&t, "all.txt"), "apple\nbanana\ncherry\n");

    assert_code(&t.run(), 0);
    assert_eq!(ran(&t), Vec::<String>::new(), "an unchanged workflow reruns nothing");
    assert_eq!(last_summary(t.path())["cached"], 4);

    fs_err::write(t.path().join("data/b"), "blueberry\n").expect("write data/b");
    assert_code(&t.run(), 0);
    assert_eq!(ran(&t), ["combine", "stage-1"]);
    assert_eq!(read(&t, "all.txt"), "apple\nblueberry\ncherry\n");
    let summary = last_summary(t.path());
    assert_eq!((summary["succeeded"].as_u64(), summary["cached"].as_u64()), (Some(2), Some(2)), "{summary}");

    assert_code(&t.run_with(&["run", "--force"]), 0);
    assert_eq!(ran(&t), ["combine", "stage-0", "stage-1", "stage-2"]);

    assert_code(&t.run_with(&["run", "--only", "stage[1]"]), 0);
    assert_eq!(ran(&t), ["combine", "stage-1"]);
    let s = statuses(&t, None);
    assert_eq!(s["stage[0]"], "cached");
    assert_eq!(s["stage[2]"], "cached");
    assert_eq!(s["stage[1]"], "succeeded");
    assert_eq!(s["combine"], "succeeded");
}

// 16
#[test]
fn sigterm_stops_the_run_like_ctrl_c() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"wait\"\nrange = \"1-2\"\ncommand = \"mkdir -p running && touch running/{{ index }} && sleep 30\"\n",
    );
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2"], "flow.stderr");
    let running = t.path().join("running");
    if !wait_for(Duration::from_secs(10), || entries(&running).len() == 2) {
        let _ = flow.kill();
        panic!("tasks never started");
    }
    signal(flow.id(), "-TERM");
    let Some(status) = wait_child(&mut flow, Duration::from_secs(6)) else {
        let _ = flow.kill();
        panic!("flow did not exit within 6 s of SIGTERM");
    };
    assert_eq!(status.code(), Some(130), "{}", read(&t, "flow.stderr"));
    assert_eq!(last_summary(t.path())["interrupted"], true);
}

/// Issue 29: Ctrl-C during a run of a million instances cancels those that
/// never started with one journal record per task, and every reader still
/// counts each of them.
#[test]
fn ctrl_c_on_a_million_instances_cancels_every_one() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"wait\"\nrange = \"1-1000000\"\ncommand = \"mkdir -p running && touch running/{{ index }} && sleep 30\"\n",
    );
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2"], "flow.stderr");
    let running = t.path().join("running");
    if !wait_for(Duration::from_secs(60), || entries(&running).len() == 2) {
        let _ = flow.kill();
        panic!("tasks never started: {}", read(&t, "flow.stderr"));
    }
    signal(flow.id(), "-INT");
    let Some(status) = wait_child(&mut flow, Duration::from_secs(60)) else {
        let _ = flow.kill();
        panic!("flow did not exit within 60 s of SIGINT");
    };
    assert_eq!(status.code(), Some(130), "{}", read(&t, "flow.stderr"));
    assert_eq!(last_summary(t.path())["cancelled"], 1_000_000);
    let status: serde_json::Value = serde_json::from_str(&t.success_with(&["status", "--json"])).expect("JSON");
    let counts = serde_json::json!({
        "total": 1_000_000, "succeeded": 0, "cached": 0, "failed": 0, "cancelled": 1_000_000, "running": 0, "queued": 0
    });
    assert_eq!(status["counts"], counts);
    // The two that ran have their own records; the rest stand on one.
    assert_eq!(
        statuses(&t, None),
        BTreeMap::from([("wait[1]".into(), "cancelled".into()), ("wait[2]".into(), "cancelled".into())])
    );
    let explained = t.success_with(&["explain", "wait[500000]"]);
    assert!(explained.starts_with("wait[500000]: cancelled at "), "{explained}");
    assert!(explained.trim_end().ends_with(": interrupted"), "{explained}");
}

#[test]
fn a_changed_chunk_reruns_its_instance() {
    let t = Test::new()
        .workflow(
            "[[tasks]]\nname = \"count\"\neach_chunk = { file = \"data.txt\", lines = 2 }\ncommand = \"wc -l < {{ chunk.path }} >> counted.txt\"\n",
        )
        .file("data.txt", "a\nb\nc\nd\n");
    t.success_with(&["run"]);
    t.success_with(&["run"]);
    assert_eq!(lines(&t, "counted.txt").len(), 2, "the second run skips both unchanged chunks");
    fs_err::write(t.path().join("data.txt"), "a\nb\nc\nX\n").expect("edit data");
    t.success_with(&["run"]);
    assert_eq!(lines(&t, "counted.txt").len(), 3, "only the chunk whose lines changed runs again");
}

/// Issue 12: `flow log tail -f` on a run killed with `kill -9` waited for its
/// summary for ever; it now sees that no process holds the run and stops.
#[test]
fn tail_f_stops_on_a_killed_run() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"slow\"\nrange = \"1-2\"\ncommand = \"echo started {{ index }}; touch s{{ index }}; sleep 30\"\n",
    );
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2"], "run.stderr");
    // Both lines are in the run log (written a moment after the tasks print them).
    let logged = wait_for(Duration::from_secs(10), || {
        let out = t.run_with(&["log", "cat"]).stdout;
        out.lines().filter(|l| l.starts_with("started ")).count() == 2
    });
    assert!(logged, "{}", read(&t, "run.stderr"));
    signal(flow.id(), "-KILL");
    wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");

    let tail = Test::new().current_dir(t.path()).args(["log", "tail", "-f"]).timeout(Duration::from_secs(20));
    let out = tail.run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["slow[1] | started 1", "slow[2] | started 2"]);
    insta::assert_snapshot!(t.normalize(&out.stderr), @"flow: run [RUN] stopped without finishing (its process is gone: killed or crashed); `flow run` again resumes it");
}

/// Issue 12: a resume killed while it hashed a large input redid every
/// instance in the next run, though none ran in the killed one: the start
/// was journaled before the fingerprint check. A start is now recorded when
/// the process starts.
#[test]
fn kill_9_while_hashing_inputs_redoes_nothing() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"use\"\nrange = \"1-24\"\ninputs = [\"big.bin\"]\ncommand = \"echo {{ index }} >> done.txt\"\n",
    );
    // 400 MB of (sparse) input: each instance hashes it, for seconds in all.
    fs_err::File::create(t.path().join("big.bin")).unwrap().set_len(400 << 20).unwrap();
    t.success_with(&["run", "--cpus", "2"]);
    assert_eq!(lines(&t, "done.txt").len(), 24);

    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2"], "run.stderr");
    assert!(wait_for(Duration::from_secs(10), || run_ids(t.path()).len() == 2), "the second run started");
    std::thread::sleep(Duration::from_millis(300));
    signal(flow.id(), "-KILL");
    let status = wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");
    assert_eq!(status.code(), None, "killed while hashing, before it finished");
    let second = run_ids(t.path()).pop().unwrap();
    assert!(!t.path().join(".flow/runs").join(second).join("summary.json").exists());

    let out = t.run_with(&["run", "--cpus", "2"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 24 instances of 1 task
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 24 unchanged (skipped) in [TIME]
    ");
    assert_eq!(lines(&t, "done.txt").len(), 24, "no instance ran again");
}

/// The frames of a framed run file: (offset, payload length) of each.
fn frames(bytes: &[u8]) -> Vec<(usize, usize)> {
    let (mut at, mut out) = (8, Vec::new());
    while at + 8 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        out.push((at, len));
        at += 8 + len;
    }
    out
}

/// `text` with the offsets of damaged records masked: they follow the
/// length of the records before them, which hold the host name and paths.
fn record_offsets(text: &str) -> String {
    static OFFSETS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"bytes \d+\.\.\d+ \(a damaged record\)").expect("offsets pattern")
    });
    OFFSETS.replace_all(text, "bytes [OFFSETS] (a damaged record)").into_owned()
}

/// Issue 12: a byte flipped in the middle of the journal dropped every record
/// after it, so the next run redid everything from there, silently; a
/// garbage `graph.json` or `summary.json` was skipped without a word.
#[test]
fn damaged_run_files_are_reported_and_their_intact_records_used() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"step\"\nrange = \"1-20\"\ncommand = \"echo {{ index }} >> ran.txt; echo out {{ index }}\"\n",
    );
    t.success_with(&["run", "--cpus", "1"]);
    let run1 = run_ids(t.path()).pop().unwrap();
    let dir1 = t.path().join(".flow/runs").join(&run1);

    let journal = dir1.join("journal");
    let mut bytes = fs_err::read(&journal).unwrap();
    let (at, _) = frames(&bytes)[20];
    bytes[at + 8 + 2] ^= 0x10;
    bytes[3] ^= 0x01; // and the file header
    fs_err::write(&journal, &bytes).unwrap();
    let log = dir1.join("output.log");
    let mut bytes = fs_err::read(&log).unwrap();
    let (at, _) = frames(&bytes)[10];
    bytes[at + 8 + 30] ^= 0x10;
    fs_err::write(&log, &bytes).unwrap();

    let cat = t.run_with(&["log", "cat"]);
    assert_code(&cat, 0);
    assert_eq!(cat.stdout.lines().count(), 19, "every intact record is printed:\n{}", cat.stdout);
    insta::assert_snapshot!(record_offsets(&t.normalize(&cat.stderr)), @r"
        warning: journal is damaged: bytes 0..8 (a damaged file header) were skipped; the records before and after them were read
        warning: journal is damaged: bytes [OFFSETS] (a damaged record) were skipped; the records before and after them were read
        warning: output.log is damaged: bytes [OFFSETS] (a damaged record) were skipped; the records before and after them were read
    ");
    let list = t.run_with(&["log", "list"]);
    assert_code(&list, 0);
    insta::assert_snapshot!(record_offsets(&t.normalize(&list.stderr)), @r"
        warning: journal is damaged: bytes 0..8 (a damaged file header) were skipped; the records before and after them were read
        warning: journal is damaged: bytes [OFFSETS] (a damaged record) were skipped; the records before and after them were read
        warning: output.log is damaged: bytes [OFFSETS] (a damaged record) were skipped; the records before and after them were read
    ");
    assert!(list.stdout.lines().count() >= 20, "{}", list.stdout);

    let out = t.run_with(&["run", "--cpus", "1"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(record_offsets(&t.normalize(&out.stderr)), @r"
        run [RUN]: 20 instances of 1 task
        warning: run [RUN]: journal: bytes 0..8 (a damaged file header) were skipped
        warning: run [RUN]: journal: bytes [OFFSETS] (a damaged record) were skipped
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 20 unchanged (skipped) in [TIME]
    ");
    let again = lines(&t, "ran.txt").len() - 20;
    assert!(again <= 1, "only the instance whose record was damaged may run again, not {again}");

    // A garbage graph.json: the run's results cannot be mapped, and it says so.
    fs_err::write(dir1.join("graph.json"), "garbage").unwrap();
    let run2 = run_ids(t.path()).pop().unwrap();
    fs_err::write(t.path().join(".flow/runs").join(&run2).join("summary.json"), "{ not json").unwrap();
    let out = t.run_with(&["run", "--cpus", "1"]);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 20 instances of 1 task
        warning: run [RUN]: `[DIR]/.flow/runs/[RUN]/graph.json` is damaged (expected value at line 1 column 1); its results are not reused
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 20 unchanged (skipped) in [TIME]
    ");

    let runs = t.run_with(&["runs"]);
    assert_code(&runs, 0);
    insta::assert_snapshot!(t.normalize(&runs.stdout), @r"
        RUN  STATE  INSTANCES  SUCCEEDED  UNCHANGED  FAILED  CANCELLED  SKIPPED  TIME
        [RUN]  damaged  -  -  -  -  -  -  -
        [RUN]  damaged  -  -  -  -  -  -  -
        [RUN]  succeeded  20  0  20  0  0  0  [TIME]
    ");
    insta::assert_snapshot!(t.normalize(&runs.stderr), @r"
        warning: run [RUN]: `[DIR]/.flow/runs/[RUN]/graph.json` is damaged (expected value at line 1 column 1)
        warning: run [RUN]: `[DIR]/.flow/runs/[RUN]/summary.json` is damaged (key must be a string at line 1 column 3)
    ");
    let json: serde_json::Value = serde_json::from_str(&t.success_with(&["runs", "--json"])).expect("one document");
    let damaged = json["runs"].as_array().expect("runs").iter().find(|r| r["run_id"] == run2.as_str()).expect("run2");
    assert_eq!((&damaged["state"], damaged.get("counts")), (&"damaged".into(), None), "{damaged}");
    insta::assert_snapshot!(t.normalize(damaged["error"].as_str().unwrap_or("<no error>")), @"`[DIR]/.flow/runs/[RUN]/summary.json` is damaged (key must be a string at line 1 column 3)");
}
