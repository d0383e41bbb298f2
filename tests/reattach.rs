//! Workers that outlive their coordinator: `kill -9` of `flow run` while a
//! `flow worker` runs its tasks; the worker keeps them, and rejoins the run
//! that resumes it, which takes them over. Real processes, real TCP.

use std::process::Child;
use std::time::{Duration, Instant};

use flow_engine::runtime::{RunDir, STATE_DIR};

use crate::support::Test;
use crate::support::process::{finish, lines, read, signal, spawn_flow, wait_child, wait_for};
use crate::workers::{start_run, start_worker};

/// Three tasks that say they started (in `starts.txt`, and on stdout),
/// sleep, and say they are done (on stdout, and in `ends.txt`).
const SLEEPERS: &str = "[[tasks]]\nname = \"work\"\nrange = \"1-3\"\n\
    command = \"echo $FLOW_INDEX >> starts.txt; echo before $FLOW_INDEX; sleep 3; echo after $FLOW_INDEX; \
    echo $FLOW_INDEX >> ends.txt\"\n";

/// Kills the run `run` with SIGKILL once all three sleepers started.
fn kill_once_started(t: &Test, run: &mut Child) {
    assert!(
        wait_for(Duration::from_secs(20), || lines(t, "starts.txt").len() == 3),
        "the tasks did not start; run:\n{}",
        read(t, "run.stderr")
    );
    signal(run.id(), "-KILL");
    wait_child(run, Duration::from_secs(5)).expect("the run was killed");
}

/// The run directories under the test directory, oldest first.
fn runs(t: &Test) -> Vec<RunDir> {
    RunDir::list(&t.path().join(STATE_DIR))
}

/// Whether process `pid` still exists (and is not a zombie).
fn alive(pid: u32) -> bool {
    fs_err::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z "))
}

#[test]
fn a_worker_whose_coordinator_is_killed_rejoins_the_resumed_run_with_its_tasks() {
    let t = Test::new().workflow(SLEEPERS);
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = start_worker(&t, &access, &["--cpus", "3"], "worker.stderr");
    kill_once_started(&t, &mut run);
    let killed = Instant::now();

    // The same command again: a new run that resumes the killed one.
    let mut again = spawn_flow(t.path(), &["run", "--listen", "127.0.0.1:0", "--no-local-worker"], "run.stderr");
    assert_eq!(finish(&t, &mut again, Duration::from_secs(60)), 0, "{}", read(&t, "run.stderr"));
    let stderr = read(&t, "run.stderr");
    assert!(stderr.contains("3 instance(s) that remote workers ran when the last run was killed are held"), "{stderr}");
    assert!(stderr.contains("worker 0 (") && stderr.contains("rejoined with 3 task(s) of the killed run"), "{stderr}");
    assert!(killed.elapsed() < Duration::from_secs(30), "the held tasks waited out the window");
    // Each task ran once: the resumed run took them over, it did not start them again.
    for file in ["starts.txt", "ends.txt"] {
        let mut each = lines(&t, file);
        each.sort();
        assert_eq!(each, ["1", "2", "3"], "{file}");
    }
    // What the tasks wrote after the kill is in the resumed run's log.
    let out = t.success_with(&["log", "cat", "work"]);
    for i in 1..=3 {
        assert!(out.contains(&format!("after {i}")), "{out}");
    }
    // Its journal has them as succeeded, on the worker that rejoined.
    let status: serde_json::Value = serde_json::from_str(&t.success_with(&["status", "--json"])).expect("JSON");
    assert_eq!(status["counts"]["succeeded"], 3, "{status}");
    // The killed run's access file now points at the resumed run.
    let resumed = runs(&t).pop().expect("the resumed run");
    assert_eq!(fs_err::read_to_string(&access).ok(), fs_err::read_to_string(resumed.access()).ok());
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some_and(|s| s.success()), "worker did not leave");
    assert!(read(&t, "worker.stderr").contains("worker left: the run ended"), "{}", read(&t, "worker.stderr"));
}

#[test]
fn a_worker_gives_up_rejoining_after_reconnect_for_and_stops_its_tasks() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"long\"\ncommand = \"echo $$ > pid; sleep 30; echo late > late.txt\"\n");
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = start_worker(&t, &access, &["--cpus", "1", "--reconnect-for", "2s"], "worker.stderr");
    assert!(wait_for(Duration::from_secs(10), || !read(&t, "pid").trim().is_empty()), "{}", read(&t, "run.stderr"));
    let pid: u32 = read(&t, "pid").trim().parse().expect("pid");
    signal(run.id(), "-KILL");
    wait_child(&mut run, Duration::from_secs(5)).expect("the run was killed");
    let killed = Instant::now();
    // Its task runs on while it tries to rejoin.
    std::thread::sleep(Duration::from_millis(500));
    assert!(alive(pid), "the task was stopped at once");
    let status = wait_child(&mut worker, Duration::from_secs(20)).expect("the worker gives up");
    let waited = killed.elapsed();
    assert!(status.success(), "{}", read(&t, "worker.stderr"));
    assert!(waited >= Duration::from_secs(2) && waited < Duration::from_secs(10), "left after {waited:?}");
    let stderr = read(&t, "worker.stderr");
    assert!(stderr.contains("worker: lost the coordinator; its tasks run on while it tries to rejoin"), "{stderr}");
    assert!(stderr.contains("worker left: the coordinator was lost (killed, or unreachable)"), "{stderr}");
    assert!(wait_for(Duration::from_secs(5), || !alive(pid)), "the task outlived its worker");
    assert!(!t.path().join("late.txt").exists());
}

#[test]
fn tasks_the_resumed_run_does_not_hold_are_stopped_on_the_worker() {
    let t = Test::new().workflow(SLEEPERS);
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = start_worker(&t, &access, &["--cpus", "3"], "worker.stderr");
    kill_once_started(&t, &mut run);
    // The workflow changed meanwhile: the same places hold other instances.
    let renamed = read(&t, "workflow.toml").replace("name = \"work\"", "name = \"other\"").replace("sleep 3", "true");
    fs_err::write(t.path().join("workflow.toml"), renamed).expect("write the workflow");
    let mut again = spawn_flow(t.path(), &["run", "--listen", "127.0.0.1:0", "--no-local-worker"], "run.stderr");
    assert_eq!(finish(&t, &mut again, Duration::from_secs(60)), 0, "{}", read(&t, "run.stderr"));
    let stderr = read(&t, "run.stderr");
    assert!(stderr.contains("rejoined with 3 task(s) of the killed run: 0 run on, 3 stopped"), "{stderr}");
    // The old tasks were killed before they were done; the new ones ran,
    // as attempts numbered after the old ones, whose last words were dropped.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!((lines(&t, "starts.txt").len(), lines(&t, "ends.txt").len()), (6, 3));
    let out = t.success_with(&["log", "cat", "other"]);
    assert_eq!(out.matches("after").count(), 3, "{out}");
    let status: serde_json::Value = serde_json::from_str(&t.success_with(&["status", "--json"])).expect("JSON");
    assert_eq!(status["counts"]["succeeded"], 3, "{status}");
    let _ = wait_child(&mut worker, Duration::from_secs(10));
}
