//! The driver's record of its workers for `flow workers` and `flow
//! explain`: `workers.json` (who is connected, and how many tasks each
//! runs, kept current while the run goes on) and `workers-left.json`.

use std::collections::HashMap;
use std::time::Duration;

use super::driver::Driver;
use crate::runtime::core::WorkerId;

/// How often `workers.json` is brought up to date with the running tasks.
pub(super) const WORKERS_TICK: Duration = Duration::from_secs(1);

impl Driver {
    /// Keeps what `worker`, about to leave, was, in `workers-left.json`.
    pub(super) fn remember_left(&mut self, worker: WorkerId) {
        let Some(info) = self.links.infos(|_| 0).into_iter().find(|w| w.id == worker.0) else { return };
        self.left_workers.push(info);
        let _ = self.run_dir.write_workers_left(&self.left_workers);
    }

    /// Writes `workers.json`: every connected worker and how many tasks it runs.
    pub(super) fn write_workers(&mut self) {
        self.update_workers(true);
    }

    /// Rewrites `workers.json` when the tasks running on its workers changed.
    pub(super) fn refresh_workers(&mut self) {
        self.update_workers(false);
    }

    /// Writes `workers.json` if `always`, or if its running counts changed.
    fn update_workers(&mut self, always: bool) {
        let counts = self.running_per_worker();
        let infos = self.links.infos(|w| counts.get(&w).copied().unwrap_or(0));
        let mut now: Vec<(u32, u64)> = infos.iter().map(|w| (w.id, w.running)).collect();
        now.sort_unstable();
        if always || now != self.workers_written {
            let _ = self.run_dir.write_workers(&infos);
            self.workers_written = now;
        }
    }

    fn running_per_worker(&self) -> HashMap<WorkerId, u64> {
        let mut counts: HashMap<WorkerId, u64> = HashMap::new();
        for (_, w) in self.running.values() {
            *counts.entry(*w).or_default() += 1;
        }
        counts
    }
}
