//! Leftovers of a run whose flow process was killed (`kill -9`, a crash):
//! its tasks may still be running. The next run finds them by the
//! `FLOW_RUN_DIR` in their environment and kills their process groups
//! before starting, so no old task races a new one, and cancels the
//! cluster allocations it left queued or running.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use nix::sys::signal::Signal;
use nix::unistd::{Pid, getpgid};

use crate::rundir::RunDir;

/// Kills the tasks of runs under `state` that never finished and whose flow
/// process is gone, and cancels their allocations; returns what it
/// cancelled, to be said.
pub fn reap(state: &Path) -> Vec<String> {
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
            && let Ok(group) = getpgid(Some(Pid::from_raw(pid)))
        {
            crate::runtime::agent::spawn::signal_group(group.as_raw() as u32, Signal::SIGKILL);
        }
    }
    said
}

/// Cancels the allocations dead `run` left queued or running — those still
/// its own jobs — and records that in its `allocs.json`; says what it did.
fn cancel_allocations(run: &RunDir) -> Option<String> {
    use crate::rundir::AllocState;
    let mut file = run.read_allocs().ok()?;
    let manager = file.queue.as_ref().map(|q| q.manager)?;
    let mut ids = Vec::new();
    for a in file.allocations.iter_mut().filter(|a| a.state.is_active()) {
        ids.push(a.job_id.clone());
        a.state = AllocState::Cancelled;
        a.reason = Some("its run's flow process was gone".to_owned());
    }
    ids.retain(|id| !id.is_empty());
    if ids.is_empty() {
        return None;
    }
    let job_name = super::alloc::script::job_name(&run.id);
    let said = match super::alloc::manager::cancel_own(manager, &job_name, &ids) {
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
