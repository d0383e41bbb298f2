//! [`WorkersFile`]: the driver's record of its workers for `flow workers`
//! and `flow explain`: `workers.json` (who is connected, and how many tasks
//! each runs, kept current while the run goes on) and `workers-left.json`.

use std::time::Duration;

use crate::rundir::RunDir;
use crate::rundir::WorkerInfo;

/// How often `workers.json` is brought up to date with the running tasks.
pub(in crate::runtime::coordinator) const WORKERS_TICK: Duration = Duration::from_secs(1);

/// What `workers.json` and `workers-left.json` last said.
pub(in crate::runtime::coordinator) struct WorkersFile {
    run_dir: RunDir,
    /// Workers that left before the run ended (`workers-left.json`).
    left: Vec<WorkerInfo>,
    /// Running tasks per worker as `workers.json` last said.
    written: Vec<(u32, u64)>,
}

impl WorkersFile {
    /// Files in `run_dir`, not written yet.
    pub(in crate::runtime::coordinator) fn new(run_dir: RunDir) -> Self {
        Self { run_dir, left: Vec::new(), written: Vec::new() }
    }

    /// Keeps what a worker about to leave was, in `workers-left.json`.
    pub(in crate::runtime::coordinator) fn left(&mut self, info: WorkerInfo) {
        self.left.push(info);
        let _ = self.run_dir.write_workers_left(&self.left);
    }

    /// Writes `workers.json` with `infos` if `always`, or if their running
    /// counts changed since it was last written.
    pub(in crate::runtime::coordinator) fn write(&mut self, infos: &[WorkerInfo], always: bool) {
        let mut now: Vec<(u32, u64)> = infos.iter().map(|w| (w.id, w.running)).collect();
        now.sort_unstable();
        if always || now != self.written {
            let _ = self.run_dir.write_workers(infos);
            self.written = now;
        }
    }
}
