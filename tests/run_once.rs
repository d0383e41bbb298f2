//! Nothing runs twice, no two attempts at once (issue 26): a task a remote
//! worker started is journaled before its job leaves, so a coordinator
//! killed at any moment leaves a resumed run that takes it over instead of
//! running it again. The journal writer is slowed on purpose
//! (`FLOW_DEBUG_JOURNAL_DELAY_MS`, debug builds only) so the window is wide.
//! Each task counts its runs in a file outside the workflow's directory.
//! Real processes, real TCP.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use flow_engine::runtime::{RunDir, STATE_DIR};

use crate::support::Test;
use crate::support::process::{finish, lines, read, signal, spawn_flow, spawn_flow_with, wait_child, wait_for};

/// The journal's writer pauses this long before each write.
const SLOW_JOURNAL: (&str, &str) = ("FLOW_DEBUG_JOURNAL_DELAY_MS", "1500");

/// A test directory with the workflow `text` in its subdirectory `wf/`; the
/// task's runs are counted in `count.txt`, beside `wf/`.
fn workflow(text: &str) -> (Test, PathBuf) {
    let t = Test::new();
    let dir = t.path().join("wf");
    fs_err::create_dir(&dir).expect("mkdir");
    fs_err::write(dir.join("workflow.toml"), text).expect("write the workflow");
    (t, dir)
}

/// One task that counts its run, then takes a while.
const ONCE: &str = "[[tasks]]\nname = \"once\"\ncommand = \"echo ran >> ../count.txt; sleep 2\"\n";

/// The latest run under `dir`, once it wrote its access file.
fn access(dir: &Path) -> Option<PathBuf> {
    RunDir::latest(&dir.join(STATE_DIR)).map(|run| run.access()).filter(|a| a.exists())
}

/// Kills `run` with SIGKILL as soon as the task counted its first run.
fn kill_once_counted(t: &Test, run: &mut Child) {
    let counted = wait_for(Duration::from_secs(20), || !lines(t, "count.txt").is_empty());
    assert!(counted, "the task did not start; run:\n{}", read(t, "wf/run.stderr"));
    signal(run.id(), "-KILL");
    wait_child(run, Duration::from_secs(5)).expect("the run was killed");
}

#[test]
fn a_task_a_remote_worker_started_runs_once_across_a_coordinator_kill() {
    let (t, dir) = workflow(ONCE);
    let listen = ["run", "--listen", "127.0.0.1:0", "--no-local-worker"];
    let mut run = spawn_flow_with(&dir, &listen, "run.stderr", &[SLOW_JOURNAL]);
    assert!(wait_for(Duration::from_secs(10), || access(&dir).is_some()), "no access file");
    let access = access(&dir).expect("access file");
    let access = access.to_str().expect("utf-8");
    let mut worker = spawn_flow(&dir, &["worker", "--access", access, "--cpus", "1"], "worker.stderr");
    kill_once_counted(&t, &mut run);
    // The same command again, with a journal as fast as usual.
    let mut again = spawn_flow(&dir, &listen, "run.stderr");
    let stderr = || read(&t, "wf/run.stderr");
    assert_eq!(finish(&t, &mut again, Duration::from_secs(60)), 0, "{}", stderr());
    assert!(stderr().contains("rejoined with 1 task(s) of the killed run"), "{}", stderr());
    assert_eq!(lines(&t, "count.txt"), ["ran"], "the task ran twice");
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some(), "worker did not leave");
}

#[test]
fn a_task_the_embedded_worker_ended_unrecorded_when_flow_was_killed_runs_again() {
    // It ended, but its end was not yet in the journal: the next run cannot
    // know it ran, and runs it again (docs/reference/reruns.md says so).
    let (t, dir) = workflow("[[tasks]]\nname = \"once\"\ncommand = \"echo ran >> ../count.txt\"\n");
    let mut run = spawn_flow_with(&dir, &["run"], "run.stderr", &[SLOW_JOURNAL]);
    kill_once_counted(&t, &mut run);
    let mut again = spawn_flow(&dir, &["run"], "run.stderr");
    assert_eq!(finish(&t, &mut again, Duration::from_secs(30)), 0, "{}", read(&t, "wf/run.stderr"));
    assert_eq!(lines(&t, "count.txt"), ["ran", "ran"]);
}
