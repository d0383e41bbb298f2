//! Leftovers of a run whose flow process was killed (`kill -9`, a crash):
//! its tasks may still be running. The next run finds them by the
//! `FLOW_RUN_DIR` in their environment and kills their process groups
//! before starting, so no old task races a new one.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use nix::sys::signal::Signal;
use nix::unistd::{Pid, getpgid};

use super::run_dir::RunDir;

/// Kills the tasks of runs under `state` that never finished and whose flow
/// process is gone; returns how many processes were found.
pub fn reap(state: &Path) -> usize {
    let dead: HashSet<PathBuf> =
        RunDir::list(state).into_iter().filter(|r| !r.is_finished() && !r.is_live()).map(|r| r.path).collect();
    if dead.is_empty() {
        return 0;
    }
    let Ok(procs) = fs_err::read_dir("/proc") else { return 0 };
    let mut found = 0;
    for entry in procs.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        let run_dir = environ
            .split(|&b| b == 0)
            .find_map(|var| var.strip_prefix(b"FLOW_RUN_DIR="))
            .map(|dir| PathBuf::from(String::from_utf8_lossy(dir).into_owned()));
        if run_dir.is_some_and(|dir| dead.contains(&dir))
            && let Ok(group) = getpgid(Some(Pid::from_raw(pid)))
        {
            super::spawn::signal_group(group.as_raw() as u32, Signal::SIGKILL);
            found += 1;
        }
    }
    found
}
