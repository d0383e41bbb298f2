//! Leftovers of a run whose flow process was killed (`kill -9`, a crash):
//! its tasks may still be running. The next run finds them by the
//! `FLOW_RUN_DIR` in their environment and kills the process groups of
//! those the embedded worker ran (it died with its run) before starting,
//! so no old task races a new one, and cancels the cluster allocations it
//! left queued. The tasks of a live `flow worker`, and the allocations
//! that run such workers, are left alone: those workers rejoin the new run
//! with their tasks (see `reattach.rs`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use nix::sys::signal::Signal;
use nix::unistd::{Pid, getpgid};

use crate::rundir::RunDir;

/// Kills the tasks of runs under `state` that never finished and whose flow
/// process is gone — but, when `spare_workers` (the new run listens, so
/// they may rejoin it), not those a live `flow worker` runs — and cancels
/// their queued allocations; returns what it cancelled, to be said.
pub fn reap(state: &Path, spare_workers: bool) -> Vec<String> {
    let dead: Vec<RunDir> = RunDir::list(state).into_iter().filter(|r| !r.is_finished() && !r.is_live()).collect();
    if dead.is_empty() {
        return Vec::new();
    }
    let said: Vec<String> = dead.iter().filter_map(cancel_allocations).collect();
    let dead: HashSet<PathBuf> = dead.into_iter().map(|r| r.path).collect();
    let Ok(procs) = fs_err::read_dir("/proc") else { return said };
    for entry in procs.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        let run_dir = environ
            .split(|&b| b == 0)
            .find_map(|var| var.strip_prefix(b"FLOW_RUN_DIR="))
            .map(|dir| PathBuf::from(String::from_utf8_lossy(dir).into_owned()));
        if run_dir.is_some_and(|dir| dead.contains(&dir))
            && !(spare_workers && under_a_worker(pid))
            && let Ok(group) = getpgid(Some(Pid::from_raw(pid)))
        {
            crate::runtime::agent::spawn::signal_group(group.as_raw() as u32, Signal::SIGKILL);
        }
    }
    said
}

/// Whether process `pid` descends from a live `flow worker` (its command
/// line names the `worker` command and an `--access` file).
fn under_a_worker(pid: i32) -> bool {
    let mut at = parent(pid);
    // A process tree is shallow; the bound guards against a loop read mid-change.
    for _ in 0..64 {
        match at {
            Some(p) if p > 1 => {
                if is_worker(p) {
                    return true;
                }
                at = parent(p);
            }
            _ => return false,
        }
    }
    false
}

/// The parent of process `pid`, from `/proc/<pid>/stat`.
fn parent(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: the command may hold spaces and parentheses.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether process `pid` is a `flow worker`.
fn is_worker(pid: i32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { return false };
    let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    let worker = args.iter().position(|a| *a == b"worker");
    worker.is_some_and(|w| args[w..].iter().any(|a| *a == b"--access" || a.starts_with(b"--access=")))
}

/// Cancels the allocations dead `run` left queued — those still its own
/// jobs — and records that in its `allocs.json`; says what it did. Those
/// that run keep their workers, which rejoin the new run.
fn cancel_allocations(run: &RunDir) -> Option<String> {
    use crate::rundir::AllocState;
    let mut file = run.read_allocs().ok()?;
    let manager = file.queue.as_ref().map(|q| q.manager)?;
    let mut ids = Vec::new();
    for a in file.allocations.iter_mut().filter(|a| a.state == AllocState::Queued) {
        ids.push(a.job_id.clone());
        a.state = AllocState::Cancelled;
        a.reason = Some("its run's flow process was gone".to_owned());
    }
    ids.retain(|id| !id.is_empty());
    if ids.is_empty() {
        return None;
    }
    let job_name = crate::runtime::coordinator::alloc::script::job_name(&run.id);
    let said = match crate::runtime::coordinator::alloc::manager::cancel_own(manager, &job_name, &ids) {
        Ok(own) if own.is_empty() => format!(
            "run {} was killed; none of its jobs {} is still queued as `{job_name}` of yours, so none was cancelled",
            run.id,
            ids.join(", ")
        ),
        Ok(own) => format!("run {} was killed; cancelled its jobs {}", run.id, own.join(", ")),
        Err(e) => format!("run {} was killed; could not cancel its jobs {}: {e}", run.id, ids.join(", ")),
    };
    let _ = run.write_allocs(&file);
    Some(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_process_parent_and_tells_a_worker_by_its_command_line() {
        let me = std::process::id() as i32;
        assert_eq!(parent(me), Some(nix::unistd::getppid().as_raw()));
        assert!(!is_worker(me), "the test binary is no `flow worker`");
        assert!(!under_a_worker(me));
        assert_eq!(parent(-1), None);
    }
}
