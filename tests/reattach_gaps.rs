//! Workers that outlive their coordinator, the edges: output written across
//! the kill reaches the resumed run's log once, a worker holds at most its
//! `--output-buffer` of output while it rejoins (its tasks wait to write),
//! an adopted task keeps its CPU ids, and the hold ends at once for a
//! worker whose cluster job is gone. Real processes, real TCP.

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use flow_engine::profile::Manager;
use flow_engine::rundir::{AllocRecord, AllocState, AllocsFile, QueueRecord, RunDir, STATE_DIR};

use crate::support::Test;
use crate::support::process::{finish, flow_bin, read, signal, spawn_flow, wait_child, wait_for};
use crate::workers::{start_run, start_worker};

/// Kills `run` with SIGKILL once `ready` holds.
fn kill_when(t: &Test, run: &mut Child, ready: impl FnMut() -> bool) {
    assert!(wait_for(Duration::from_secs(20), ready), "not ready; run:\n{}", read(t, "run.stderr"));
    signal(run.id(), "-KILL");
    wait_child(run, Duration::from_secs(5)).expect("the run was killed");
}

/// `flow run` again in the same directory: the run that resumes the killed one.
fn resume(t: &Test, extra: &[&str]) -> String {
    let mut args = vec!["run", "--listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut again = spawn_flow(t.path(), &args, "run.stderr");
    assert_eq!(finish(t, &mut again, Duration::from_secs(90)), 0, "{}", read(t, "run.stderr"));
    read(t, "run.stderr")
}

/// The CPU ids a task wrote from `FLOW_CPUS` into `file`.
fn cpus(t: &Test, file: &str) -> BTreeSet<String> {
    read(t, file).trim().split(',').map(str::to_owned).collect()
}

#[test]
fn output_written_across_a_coordinator_kill_is_in_the_resumed_runs_log_once_and_in_order() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"talk\"\n\
         command = \"for i in $(seq 1 30); do echo line $i; echo $i > said; sleep 0.1; done\"\n",
    );
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = start_worker(&t, &access, &["--cpus", "1"], "worker.stderr");
    // Killed once the run's log holds 8 lines: what the task said travels
    // to the log after it, later still on a loaded machine.
    let logged = || t.run_with(&["log", "cat", "talk"]).stdout.lines().count() >= 8;
    kill_when(&t, &mut run, || read(&t, "said").trim().parse::<u32>().is_ok_and(|n| n >= 8) && logged());
    let stderr = resume(&t, &["--no-local-worker"]);
    assert!(stderr.contains("rejoined with 1 task(s) of the killed run"), "{stderr}");
    // The killed run's log has the start; the resumed run's has it all, once.
    let expected: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    assert_eq!(t.success_with(&["log", "cat", "talk"]), expected);
    let killed = &RunDir::list(&t.path().join(STATE_DIR))[0];
    let before = t.success_with(&["log", "cat", "talk", "--run", &killed.id]);
    assert!(before.lines().count() >= 8 && expected.starts_with(&before), "{before}");
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some(), "worker did not leave");
}

#[test]
fn a_worker_holds_at_most_its_output_buffer_while_it_rejoins_and_its_task_waits_to_write() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"flood\"\n\
         command = \"touch started; while [ ! -e go ]; do sleep 0.05; done; seq 1 100000; touch printed\"\n",
    );
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let buffer = ["--cpus", "1", "--output-buffer", "64KiB"];
    let mut worker = start_worker(&t, &access, &buffer, "worker.stderr");
    kill_when(&t, &mut run, || t.path().join("started").exists());
    // 576 KiB to print with no coordinator: the worker stops reading at 64 KiB.
    fs_err::write(t.path().join("go"), "").expect("go");
    std::thread::sleep(Duration::from_secs(2));
    assert!(!t.path().join("printed").exists(), "the task printed it all while the worker held 64 KiB");
    resume(&t, &["--no-local-worker"]);
    assert!(t.path().join("printed").exists());
    let out = t.success_with(&["log", "cat", "flood"]);
    let expected: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert!(out == expected, "{} bytes of {}", out.len(), expected.len());
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some(), "worker did not leave");
}

#[test]
fn a_task_started_after_the_rejoin_is_not_given_the_cpu_ids_of_an_adopted_one() {
    // `first` goes first and takes CPUs 0 and 1, so `long` runs on 2 and 3;
    // `later` starts in the resumed run, once `first` is done.
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"long\"\ncpus = 2\ncommand = \"echo $FLOW_CPUS > long.cpus; sleep 6\"\n\
         [[tasks]]\nname = \"first\"\ncpus = 2\npriority = 10\n\
         command = \"echo $FLOW_CPUS > first.cpus; sleep 2\"\n\
         [[tasks]]\nname = \"later\"\ncpus = 2\nafter = [\"first\"]\ncommand = \"echo $FLOW_CPUS > later.cpus\"\n",
    );
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = start_worker(&t, &access, &["--cpus", "4"], "worker.stderr");
    let both = || ["long.cpus", "first.cpus"].iter().all(|f| !read(&t, f).trim().is_empty());
    kill_when(&t, &mut run, both);
    assert_eq!(cpus(&t, "long.cpus"), BTreeSet::from(["2".to_owned(), "3".to_owned()]));
    let stderr = resume(&t, &["--no-local-worker"]);
    assert!(stderr.contains("rejoined with 2 task(s) of the killed run"), "{stderr}");
    assert!(!stderr.contains("no longer free"), "{stderr}");
    let (long, later) = (cpus(&t, "long.cpus"), cpus(&t, "later.cpus"));
    assert!(long.is_disjoint(&later), "`later` got {later:?} while `long` ran on {long:?}");
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some(), "worker did not leave");
}

#[test]
fn what_ran_in_a_cluster_job_that_is_gone_is_not_held() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"work\"\ncommand = \"touch started; [ -e again ] || sleep 60\"\n")
        // A queue that lists no job: every allocation has ended.
        .file("bin/squeue", "#!/bin/sh\nexit 0\n");
    let bin = t.path().join("bin");
    fs_err::set_permissions(bin.join("squeue"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    // A worker of the killed run's allocation 4242, which ends with it.
    let mut worker = Command::new(flow_bin())
        .args(["worker", "--access", access.to_str().expect("utf-8"), "--cpus", "1"])
        .current_dir(t.path())
        .env("SLURM_JOB_ID", "4242")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("worker");
    kill_when(&t, &mut run, || t.path().join("started").exists());
    signal(worker.id(), "-KILL");
    let _ = wait_child(&mut worker, Duration::from_secs(5));
    let killed = RunDir::latest(&t.path().join(STATE_DIR)).expect("the killed run");
    killed.write_allocs(&allocs("4242")).expect("allocs.json");
    fs_err::write(t.path().join("again"), "").expect("again");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let started = Instant::now();
    let status = Command::new(flow_bin())
        .args(["run", "--listen", "127.0.0.1:0"])
        .current_dir(t.path())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(fs_err::File::create(t.path().join("run.stderr")).expect("stderr").into_parts().0)
        .status()
        .expect("resume");
    let stderr = read(&t, "run.stderr");
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "1 instance(s) that remote workers ran when the last run was killed run again now: \
             the cluster job(s) they ran in (4242) no longer run"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("are held"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30), "it waited out the window");
    let status: serde_json::Value = serde_json::from_str(&t.success_with(&["status", "--json"])).expect("JSON");
    assert_eq!(status["counts"]["succeeded"], 1, "{status}");
}

/// An `allocs.json` of a Slurm queue with one running allocation, job `job`.
fn allocs(job: &str) -> AllocsFile {
    let queue = QueueRecord {
        profile: "cluster".into(),
        manager: Manager::Slurm,
        time_limit_s: 3600,
        workers_per_allocation: 1,
        max_workers: 1,
        backlog: 1,
        paused: None,
        unschedulable: Vec::new(),
    };
    let allocation = AllocRecord {
        id: 1,
        job_id: job.into(),
        state: AllocState::Running,
        workers: 1,
        connected: 1,
        joined: 1,
        submitted_us: 1,
        started_us: Some(2),
        ended_us: None,
        reason: None,
        script: String::new(),
        output: String::new(),
    };
    AllocsFile { queue: Some(queue), allocations: vec![allocation] }
}

#[test]
fn an_output_buffer_that_is_no_size_is_refused() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ncommand = \"sleep 5\"\n");
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let output = t.run_with(&["worker", "--access", access.to_str().expect("utf-8"), "--output-buffer", "lots"]);
    signal(run.id(), "-KILL");
    let _ = wait_child(&mut run, Duration::from_secs(5));
    assert_eq!(output.code, 2, "{}", output.stderr);
    assert!(output.stderr.contains("`--output-buffer lots`: "), "{}", output.stderr);
}
