//! [`Core::adopt`]: a task a worker carried over from a run that was
//! killed. A resumed run holds such an instance ([`Core::wait_until`])
//! while the worker may come back; when it does, the instance counts as
//! running there, as if this run had started it, on the CPU and GPU ids
//! it was given there.

use crate::ir::TaskId;

use super::{Core, Running};
use crate::runtime::core::allocation::Allocation;
use crate::runtime::core::group_state::Instance;
use crate::runtime::core::worker_id::WorkerId;

/// A task taken over from a killed run ([`Core::adopt`]): what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adopted {
    /// The resources it holds on its worker.
    pub alloc: Allocation,
    /// Whether those are the CPU and GPU ids it was pinned to there; if
    /// not (they were no longer free), it holds amounts of what was free.
    pub same_ids: bool,
}

impl Core {
    /// Held `task` runs on `worker` as attempt `attempt`: it was started
    /// there by the run before, given the CPU and GPU `ids`, and the
    /// worker kept it. Takes those very ids for the first variant they
    /// hold, so that no task started later is given them; else the
    /// resources of the first variant that fits what is free. `None` (and
    /// nothing done) unless `task` is held, its group takes a single node,
    /// and a variant fits.
    pub fn adopt(&mut self, task: TaskId, worker: WorkerId, attempt: u32, ids: (&[u32], &[u32])) -> Option<Adopted> {
        let g = task.group.index();
        let group = self.groups.get(g).filter(|group| group.settings().nodes <= 1)?;
        if task.instance >= group.count() || group.state(task.instance) != Instance::Delayed {
            return None;
        }
        let requests = group.settings().requests(attempt);
        let slot = self.workers.get_mut(worker.0 as usize)?.as_mut()?;
        let mut alloc = self.spare.pop().unwrap_or_default();
        alloc.clear();
        let exact = requests.iter().position(|r| slot.take_ids(r, ids, &self.names, &mut alloc));
        let variant = exact.or_else(|| {
            let v = requests.iter().position(|r| slot.has_room(r))?;
            slot.take(&requests[v], &self.names, &mut alloc);
            Some(v)
        });
        let Some(variant) = variant else {
            self.spare.push(alloc);
            return None;
        };
        alloc.variant = variant;
        self.groups[g].adopt(task.instance);
        self.pending -= 1;
        if attempt > 0 {
            self.history.entry(task).or_default().attempt = attempt;
        }
        self.running.insert(task, Running::new(task, worker, attempt, alloc.clone()));
        self.sync_active(g);
        Some(Adopted { alloc, same_ids: exact.is_some() })
    }

    /// A worker was told to forget attempt `attempt` of `task`, which it
    /// ran for a killed run: unless `task` runs, its next start here is a
    /// later attempt, so that nothing the dying one still says is taken for
    /// the new one's.
    pub fn number_after(&mut self, task: TaskId, attempt: u32) {
        let known = self.groups.get(task.group.index()).is_some_and(|g| task.instance < g.count());
        if known && !self.running.contains_key(&task) {
            let history = self.history.entry(task).or_default();
            history.attempt = history.attempt.max(attempt + 1);
        }
    }
}
