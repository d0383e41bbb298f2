//! Helpers for tests that start `flow` in the background and signal it, or
//! look at the files and processes a run leaves.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::Test;

/// The `flow` binary, for runs the test must signal while they are going.
pub fn flow_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_flow"))
}

/// A file of the test directory, or "" when it does not exist.
pub fn read(t: &Test, path: &str) -> String {
    fs_err::read_to_string(t.path().join(path)).unwrap_or_default()
}

/// The non-empty lines of a file of the test directory.
pub fn lines(t: &Test, path: &str) -> Vec<String> {
    read(t, path).lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect()
}

/// Names of the entries of a directory (empty if it does not exist).
pub fn entries(dir: &Path) -> BTreeSet<String> {
    match fs_err::read_dir(dir) {
        Ok(rd) => rd.flatten().filter_map(|e| e.file_name().into_string().ok()).collect(),
        Err(_) => BTreeSet::new(),
    }
}

/// Waits up to `limit` for `done`; returns whether it became true.
pub fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// Starts `flow ARGS` in `dir` without waiting; its stderr goes to the file `dir/<stderr>`.
pub fn spawn_flow(dir: &Path, args: &[&str], stderr: &str) -> Child {
    spawn_flow_with(dir, args, stderr, &[])
}

/// [`spawn_flow`] with the variables `env` set too.
pub fn spawn_flow_with(dir: &Path, args: &[&str], stderr: &str, env: &[(&str, &str)]) -> Child {
    Command::new(flow_bin())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs_err::File::create(dir.join(stderr)).expect("stderr file").into_parts().0)
        .spawn()
        .expect("start flow")
}

/// Starts `flow ARGS` in the test's directory without waiting; its stdout
/// goes to the file `out` and its stderr to `out.stderr`.
pub fn spawn_flow_out(t: &Test, args: &[&str], out: &str) -> Child {
    let file = |name: &str| fs_err::File::create(t.path().join(name)).expect("an output file").into_parts().0;
    Command::new(flow_bin())
        .args(args)
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(file(out))
        .stderr(file(&format!("{out}.stderr")))
        .spawn()
        .expect("start flow")
}

/// Waits up to `limit` for the child to exit.
pub fn wait_child(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits up to `limit` for the `flow run` child `run` to exit and returns
/// its exit code; kills it and fails with its stderr (`run.stderr`) otherwise.
pub fn finish(t: &Test, run: &mut Child, limit: Duration) -> i32 {
    match wait_child(run, limit) {
        Some(status) => status.code().unwrap_or(-1),
        None => {
            let _ = run.kill();
            panic!("the run did not finish in {limit:?}; stderr:\n{}", read(t, "run.stderr"));
        }
    }
}

/// The `flow guard` process that flow process `pid` started, if it runs.
pub fn guard_of(pid: u32) -> Option<u32> {
    let children = fs_err::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    children.split_whitespace().filter_map(|c| c.parse().ok()).find(|c: &u32| {
        let cmdline = std::fs::read(format!("/proc/{c}/cmdline")).unwrap_or_default();
        cmdline.split(|&b| b == 0).any(|arg| arg == b"guard")
    })
}

pub fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill").args([sig, &pid.to_string()]).status().expect("run kill");
    assert!(status.success(), "kill {sig} {pid} failed");
}
