//! `flow explain`: finished runs, live runs waiting on dependencies,
//! remote workers too small or too short-lived for a task, and an
//! allocation queue described by a hand-written `allocs.json`.

use std::time::Duration;

use flow_engine::ir::{GroupId, TaskId};
use flow_engine::log::{JournalEvent, JournalRecord, JournalWriter};
use flow_engine::profile::Manager;
use flow_engine::resources::{Deadline, WorkerShape};
use flow_engine::runtime::{AllocRecord, AllocState, AllocsFile, QueueRecord, RunDir, RunLock, STATE_DIR, WorkerInfo};

use crate::run::assert_code;
use crate::support::Test;
use crate::support::process::{read, signal, spawn_flow, wait_child, wait_for};
use crate::workers::{start_run, start_worker};

const FAILING: &str = r#"
[[tasks]]
name = "dock"
range = "1-3"
command = "if [ {{ index }} = 2 ]; then echo no pose >&2; exit 3; fi"

[[tasks]]
name = "score"
range = "1-3"
after = ["dock[{{ index }}]"]
command = "echo scored"

[[tasks]]
name = "report"
after = ["score"]
command = "echo done"
"#;

#[test]
fn a_finished_run_says_how_each_instance_ended() {
    let t = Test::new().workflow(FAILING);
    assert_code(&t.run_with(&["run"]), 1);

    let host = flow_engine::host::hostname();
    let ok = t.success_with(&["explain", "dock[1]"]);
    assert!(ok.starts_with("dock[1]: succeeded in ") && ok.contains(&format!(" on worker 0 ({host}), ended ")), "{ok}");
    let failed = t.success_with(&["explain", "dock[2]"]);
    assert!(failed.starts_with("dock[2]: failed (exit code 3) after "), "{failed}");
    assert!(failed.ends_with("  its output: flow log cat 'dock[2]'\n"), "{failed}");
    let cancelled = t.success_with(&["explain", "score[2]"]);
    assert!(cancelled.starts_with("score[2]: cancelled at ") && cancelled.ends_with(" UTC: dock[2] failed\n"));
    assert!(t.success_with(&["explain", "report"]).ends_with(": dock[2] failed\n"));

    // Instances whose lines read the same share one; durations may differ, so
    // the succeeded ones get one line or two.
    let summary = t.success_with(&["explain", "score"]);
    let (first, succeeded) = summary.split_at(summary.find("  2 succeeded\n").expect("a count of successes"));
    insta::with_settings!({ filters => vec![
        (r"\d{8}-\d{6}-\d{3}", "[RUN]"),
        (r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "[TIME]"),
    ]}, {
        insta::assert_snapshot!(first, @r"
        score: 3 instances in run [RUN] (finished)
          1 cancelled
            score[2]: cancelled at [TIME]: dock[2] failed
        ");
    });
    assert!(succeeded.contains("score[1]") && succeeded.contains("score[3]"), "{succeeded}");
    assert_eq!(succeeded.matches(": succeeded in ").count(), succeeded.lines().count() - 1, "{succeeded}");

    let json = t.success_with(&["explain", "dock", "--json"]);
    let lines: Vec<serde_json::Value> = json.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    assert_eq!(lines.len(), 3);
    let failed = &lines[1];
    assert_eq!((failed["label"].as_str(), failed["state"].as_str()), (Some("dock[2]"), Some("failed")));
    assert_eq!(failed["reason"]["kind"], "failed");
    assert_eq!(failed["reason"]["exit_code"], 3);
    assert_eq!(failed["reason"]["ran"]["worker"], serde_json::json!({ "id": 0, "host": host, "allocation": null }));
    assert!(failed["message"].as_str().is_some_and(|m| m.starts_with("failed (exit code 3)")));
}

#[test]
fn unknown_tasks_indices_and_runs_are_usage_errors() {
    let t = Test::new().workflow(FAILING);
    let none = t.run_with(&["explain", "dock"]);
    assert_code(&none, 2);
    assert!(none.stderr.starts_with("error: no `.flow` directory"), "{}", none.stderr);
    assert_code(&t.run_with(&["run"]), 1);
    let typo = t.run_with(&["explain", "dok[1]"]);
    assert_code(&typo, 2);
    assert!(typo.stderr.contains("no task named `dok`") && typo.stderr.contains("did you mean `dock`?"));
    let missing = t.run_with(&["explain", "score[4]"]);
    assert_code(&missing, 2);
    assert!(missing.stderr.contains("`score[4]` in run "), "{}", missing.stderr);
    assert!(
        missing.stderr.ends_with(": `score` has no instance with index 4 (its indices: 1-3)\n"),
        "{}",
        missing.stderr
    );
    let unrelated = t.run_with(&["explain", "zzz"]);
    assert!(unrelated.stderr.ends_with("(tasks: dock, score, report)\n"), "{}", unrelated.stderr);
    assert_code(&t.run_with(&["explain", "--run", "19990101", "dock"]), 2);
}

#[test]
fn a_live_run_says_what_a_task_waits_for() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"slow\"\ncommand = \"sleep 30\"\n\
         [[tasks]]\nname = \"after\"\nafter = [\"slow\"]\ncommand = \"echo done\"\n",
    );
    let mut run = spawn_flow(t.path(), &["run"], "run.stderr");
    let running = wait_for(Duration::from_secs(10), || {
        let host = flow_engine::host::hostname();
        t.run_with(&["explain", "slow"]).stdout.starts_with(&format!("slow: running on worker 0 ({host}) for "))
    });
    if !running {
        let _ = run.kill();
        panic!("`slow` never ran; stderr:\n{}", read(&t, "run.stderr"));
    }
    assert_eq!(
        t.success_with(&["explain", "after"]),
        "after: waiting for slow (running on worker 0)\n  `flow explain slow` says why that one has not finished\n"
    );
    let json: serde_json::Value =
        serde_json::from_str(&t.success_with(&["explain", "after", "--json"])).expect("one JSON line");
    assert_eq!(json["reason"]["kind"], "dependencies");
    assert_eq!(json["reason"]["upstream"][0]["examples"][0]["state"], "running");

    signal(run.id(), "-INT");
    let status = wait_child(&mut run, Duration::from_secs(10));
    if status.is_none() {
        let _ = run.kill();
    }
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{}", read(&t, "run.stderr"));
    assert!(t.success_with(&["explain", "after"]).ends_with(" UTC: interrupted\n"));
}

#[test]
fn remote_workers_too_small_or_too_short_lived_are_named() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"big\"\ncpus = 2\ncommand = \"echo big\"\n\
         [[tasks]]\nname = \"long\"\ntime_request = \"2h\"\ncommand = \"echo long\"\n\
         [[tasks]]\nname = \"small\"\ncommand = \"echo small\"\n",
    );
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let waiting = t.success_with(&["explain", "big"]);
    assert!(waiting.starts_with("big: waiting for a worker: none is connected\n  start one: flow worker --access "));
    assert!(waiting.trim_end().ends_with("/access.json"), "{waiting}");

    let mut worker = start_worker(&t, &access, &["--cpus", "1", "--time-limit", "1h"], "worker.stderr");
    let ran = wait_for(Duration::from_secs(10), || t.run_with(&["explain", "small"]).stdout.contains("succeeded"));
    if !ran {
        let _ = (run.kill(), worker.kill());
        panic!("`small` never ran; stderr:\n{}", read(&t, "run.stderr"));
    }
    assert_eq!(
        t.success_with(&["explain", "big"]),
        "big: no worker can run it: needs 2 cpus, the largest worker has 1\n"
    );
    let long = t.success_with(&["explain", "long"]);
    assert!(
        long.starts_with(
            "long: its time request (2h00m) does not fit in what any worker that fits has left (at most 59m"
        ),
        "{long}"
    );
    let json: serde_json::Value = serde_json::from_str(&t.success_with(&["explain", "long", "--json"])).expect("JSON");
    assert_eq!(json["reason"]["kind"], "time_request");
    assert_eq!(json["reason"]["seconds"], 7200);
    assert!(json["reason"]["longest_left_s"].as_u64().is_some_and(|s| (3500..=3600).contains(&s)), "{json}");

    // Such a run waits for a better worker until it is stopped.
    signal(run.id(), "-INT");
    let status = wait_child(&mut run, Duration::from_secs(10));
    if status.is_none() {
        let _ = run.kill();
    }
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{}", read(&t, "run.stderr"));
    if wait_child(&mut worker, Duration::from_secs(10)).is_none() {
        let _ = worker.kill();
    }
    assert!(t.success_with(&["explain", "big"]).ends_with(" UTC: interrupted\n"));
}

/// 2023-11-14T22:13:20Z, in µs.
const T0: u64 = 1_700_000_000_000_000;

/// A run directory written by hand and held live: its graph, journal,
/// workers and queue are what the test says.
struct LiveFixture {
    t: Test,
    run: RunDir,
    _lock: RunLock,
}

impl LiveFixture {
    fn new(workflow: &str, journal: &[JournalRecord]) -> Self {
        let t = Test::new().workflow(workflow);
        let ir = t.success_with(&["plan", "--json"]);
        let run = RunDir::create(&t.path().join(STATE_DIR), false).expect("run dir");
        let lock = run.lock().expect("lock");
        fs_err::write(run.graph(), ir).expect("write graph");
        JournalWriter::create(&run.journal()).expect("journal").append_batch(journal).expect("write journal");
        Self { t, run, _lock: lock }
    }

    fn workers(&self, workers: &[WorkerInfo]) {
        fs_err::write(self.run.workers(), serde_json::to_string(workers).expect("JSON")).expect("write workers");
    }

    fn allocs(&self, allocs: &AllocsFile) {
        let text = serde_json::to_string_pretty(allocs).expect("JSON");
        fs_err::write(self.run.path.join("allocs.json"), text).expect("write allocs");
    }

    fn explain(&self, args: &[&str]) -> String {
        self.t.success_with(&[&["explain"], args].concat())
    }
}

const SIMS: &str = "[[tasks]]\nname = \"sim\"\nrange = \"1-3\"\ncommand = \"sim\"\n\
                    [[tasks]]\nname = \"long\"\ntime_request = \"8h\"\ncommand = \"sim --long\"\n";

fn queue(paused: Option<&str>, allocations: Vec<AllocRecord>) -> AllocsFile {
    let queue = QueueRecord {
        profile: "cluster".into(),
        manager: Manager::Slurm,
        time_limit_s: 4 * 3600,
        workers_per_allocation: 1,
        max_workers: 4,
        backlog: 1,
        paused: paused.map(str::to_owned),
        unschedulable: vec!["`long`: its time_request (8h) is longer than the queue's time_limit (4h)".into()],
    };
    AllocsFile { queue: Some(queue), allocations }
}

fn allocation(id: u32, job_id: &str, state: AllocState, reason: Option<&str>) -> AllocRecord {
    let now_us = flow_engine::host::now_us();
    AllocRecord {
        id,
        job_id: job_id.into(),
        state,
        workers: 1,
        connected: 0,
        joined: 0,
        submitted_us: now_us - 300_000_000,
        started_us: None,
        ended_us: None,
        reason: reason.map(str::to_owned),
        script: format!("allocs/{id}.sh"),
        output: format!("allocs/{id}.out"),
    }
}

#[test]
fn without_workers_the_allocation_queue_is_described() {
    let f = LiveFixture::new(SIMS, &[]);
    f.allocs(&queue(
        None,
        vec![
            allocation(1, "", AllocState::Failed, Some("sbatch: error: invalid account")),
            allocation(2, "4712", AllocState::Queued, None),
        ],
    ));
    insta::with_settings!({ filters => vec![(r"\d+m\d\ds", "[DURATION]")] }, {
        insta::assert_snapshot!(f.explain(&["sim[1]"]), @r"
        sim[1]: waiting for a worker: none is connected; 1 allocation is queued in Slurm: job 4712 for [DURATION]
          the last allocation failed: sbatch: error: invalid account
        ");
    });
    assert_eq!(
        f.explain(&["long"]),
        "long: its time request (8h00m) does not fit in the 3h59m a worker of the queue gets \
         (its time_limit less a margin for starting and stopping)\n  \
         the queue reports: `long`: its time_request (8h) is longer than the queue's time_limit (4h)\n"
    );
    let json: serde_json::Value = serde_json::from_str(&f.explain(&["sim[2]", "--json"])).expect("JSON");
    assert_eq!(json["reason"]["queue"]["queued"][0]["job_id"], "4712");
    assert_eq!(json["reason"]["queue"]["manager"], "slurm");

    f.allocs(&queue(Some("sbatch: command not found"), vec![]));
    assert_eq!(
        f.explain(&["sim[3]"]),
        "sim[3]: waiting for a worker: none is connected and the Slurm queue is paused: sbatch: command not found\n"
    );
    f.allocs(&queue(None, vec![]));
    assert_eq!(
        f.explain(&["sim[3]"]),
        "sim[3]: waiting for a worker: none is connected; Slurm allocations: none submitted yet\n"
    );
}

#[test]
fn a_worker_of_an_allocation_is_named_with_its_job() {
    let sim = |i| TaskId::new(GroupId(0), i);
    let started = JournalRecord::new(T0, sim(0), 0, JournalEvent::Started { worker: 1, ready_us: None });
    let f = LiveFixture::new(SIMS, &[started]);
    f.allocs(&queue(None, vec![allocation(1, "4711", AllocState::Running, None)]));
    f.workers(&[WorkerInfo {
        id: 1,
        hostname: "node17".into(),
        peer: "10.0.0.17:41000".into(),
        shape: WorkerShape::counted(1, 0, 4 << 30, Default::default()),
        deadline: Some(Deadline::after(flow_engine::host::now_us(), Duration::from_secs(4 * 3600))),
        allocation: Some("4711".into()),
        running: 1,
    }]);
    let running = f.explain(&["sim[1]"]);
    assert!(running.starts_with("sim[1]: running on worker 1 (node17, job 4711) for "), "{running}");
    insta::with_settings!({ filters => vec![(r"\d{8}-\d{6}-\d{3}", "[RUN]"), (r"for \d\S*", "for [DURATION]")] }, {
        insta::assert_snapshot!(f.explain(&["sim"]), @r"
        sim: 3 instances in run [RUN] (running)
          2 ready, waiting for a free slot
            sim[2], sim[3]: ready, waiting for a free slot: 1 task running, 1 of 1 worker busy
          1 running
            sim[1]: running on worker 1 (node17, job 4711) for [DURATION]
        ");
    });
    assert_eq!(
        f.explain(&["long"]),
        "long: its time request (8h00m) does not fit in what any worker that fits has left (at most 3h59m); \
         a new worker of the queue gets 3h59m, not long enough either\n  \
         the queue reports: `long`: its time_request (8h) is longer than the queue's time_limit (4h)\n"
    );
}

#[test]
fn attempts_are_numbered_from_0_in_templates_the_environment_and_explain() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "flaky"
retries = 2
command = "echo {{ attempt }} $FLOW_INSTANCE > try{{ attempt }}.txt; exit $(( {{ attempt }} < 2 ))"
"#,
    );
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("! flaky failed (exit code 1), retrying (attempt 2)"), "{}", out.stderr);
    for n in 0..3 {
        assert_eq!(
            fs_err::read_to_string(t.path().join(format!("try{n}.txt"))).expect("try file"),
            format!("{n} {n}\n")
        );
    }
    let explained = t.success_with(&["explain", "flaky"]);
    assert!(explained.starts_with("flaky: succeeded in") && explained.contains(", attempt 2,"), "{explained}");
}

#[test]
fn attempt_is_unknown_where_files_are_worked_out() {
    let t = Test::new().workflow("[[tasks]]\nname = \"t\"\ncommand = \"true\"\noutputs = [\"out{{ attempt }}.txt\"]\n");
    let out = t.run_with(&["check"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("`attempt` is known only when an instance starts"), "{}", out.stderr);
}

/// Issue 18: with a 10m queue, a `time_request` of 9m30s (exactly what a
/// worker gets) was "longer than any worker has left" yet the queue's
/// allocations were "long enough for it". Both halves now ask the same
/// question; 9m29s fits a new worker.
#[test]
fn a_time_request_of_exactly_a_workers_limit_is_too_long_everywhere() {
    let workflow = "[[tasks]]\nname = \"edge\"\ntime_request = \"9m30s\"\ncommand = \"x\"\n\
                    [[tasks]]\nname = \"inside\"\ntime_request = \"9m29s\"\ncommand = \"x\"\n";
    let f = LiveFixture::new(workflow, &[]);
    let mut allocs = queue(None, vec![allocation(1, "4711", AllocState::Running, None)]);
    if let Some(q) = allocs.queue.as_mut() {
        q.time_limit_s = 600;
        q.unschedulable.clear();
    }
    f.allocs(&allocs);
    assert_eq!(
        f.explain(&["edge"]),
        "edge: its time request (9m30s) does not fit in the 9m30s a worker of the queue gets \
         (its time_limit less a margin for starting and stopping)\n"
    );
    assert_eq!(
        f.explain(&["inside"]),
        "inside: waiting for a worker: none is connected; 1 allocation has started, its workers not connected yet\n"
    );
    f.workers(&[WorkerInfo {
        id: 1,
        hostname: "node17".into(),
        peer: "10.0.0.17:41000".into(),
        shape: WorkerShape::counted(1, 0, 4 << 30, Default::default()),
        deadline: Some(Deadline::after(flow_engine::host::now_us(), Duration::from_secs(570))),
        allocation: Some("4711".into()),
        running: 0,
    }]);
    assert_eq!(
        f.explain(&["edge"]),
        "edge: its time request (9m30s) does not fit in what any worker that fits has left (at most 9m29s); \
         a new worker of the queue gets 9m30s, not long enough either\n"
    );
}
