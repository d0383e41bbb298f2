//! [`Core::adopt`]: a task a worker carried over from a run that was
//! killed. A resumed run holds such an instance ([`Core::wait_until`])
//! while the worker may come back; when it does, the instance counts as
//! running there, as if this run had started it.

use crate::ir::TaskId;

use super::allocation::Allocation;
use super::core::{Core, Running};
use super::worker_id::WorkerId;

impl Core {
    /// Held `task` runs on `worker` as attempt `attempt`: it was started
    /// there by the run before and the worker kept it. Takes the resources
    /// of the first variant that fits what is free there, and returns what
    /// it took; `None` (and nothing done) unless `task` is held, its group
    /// takes a single node, and a variant fits.
    pub fn adopt(&mut self, task: TaskId, worker: WorkerId, attempt: u32) -> Option<Allocation> {
        let g = task.group.index();
        let group = self.groups.get(g).filter(|group| group.nodes <= 1)?;
        let requests = group.requests(attempt);
        let slot = self.workers.get_mut(worker.0 as usize)?.as_mut()?;
        let v = requests.iter().position(|r| slot.has_room(r))?;
        if !self.groups[g].adopt(task.instance) {
            return None;
        }
        self.pending -= 1;
        let mut alloc = self.spare.pop().unwrap_or_default();
        alloc.variant = v;
        if let Some(slot) = self.workers[worker.0 as usize].as_mut() {
            slot.take(&self.groups[g].requests(attempt)[v], &self.names, &mut alloc);
        }
        if attempt > 0 {
            self.history.entry(task).or_default().attempt = attempt;
        }
        self.running.insert(task, Running { worker, attempt, alloc: alloc.clone(), next: None, depth: 0 });
        self.sync_active(g);
        Some(alloc)
    }

    /// A worker was told to forget attempt `attempt` of `task`, which it
    /// ran for a killed run: unless `task` runs, its next start here is a
    /// later attempt, so that nothing the dying one still says is taken for
    /// the new one's.
    pub fn number_after(&mut self, task: TaskId, attempt: u32) {
        let known = self.groups.get(task.group.index()).is_some_and(|g| task.instance < g.count);
        if known && !self.running.contains_key(&task) {
            let history = self.history.entry(task).or_default();
            history.attempt = history.attempt.max(attempt + 1);
        }
    }
}
