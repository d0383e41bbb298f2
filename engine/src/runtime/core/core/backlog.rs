//! [`Core::backlog`]: how much work each group still has, for deciding how
//! many workers to ask a cluster for.

use hashbrown::HashMap;

use super::Core;
use crate::ir::GroupId;
use crate::runtime::core::worker_id::WorkerId;

/// The unfinished instances of one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupBacklog {
    /// Which group.
    pub group: GroupId,
    /// Instances whose dependencies are done.
    pub ready: u64,
    /// Instances still waiting for dependencies.
    pub blocked: u64,
    /// Instances running now on the workers asked about.
    pub running: u64,
}

impl Core {
    /// Every group with unfinished instances, in group order; `running`
    /// counts the instances running on workers for which `on` is true.
    pub fn backlog(&self, on: impl Fn(WorkerId) -> bool) -> Vec<GroupBacklog> {
        let mut running: HashMap<u32, u64> = HashMap::new();
        for (task, run) in &self.running {
            if on(run.worker) {
                *running.entry(task.group.0).or_default() += 1;
            }
        }
        self.groups
            .iter()
            .enumerate()
            .filter_map(|(g, group)| {
                let running = running.get(&(g as u32)).copied().unwrap_or(0);
                let ready = group.ready();
                // Instances not known yet (a deferred group, the parts of a
                // nested one) ask for nothing.
                let pending = group.known_pending();
                (pending + running > 0).then(|| GroupBacklog {
                    group: Self::group_id(g),
                    ready,
                    blocked: pending - ready,
                    running,
                })
            })
            .collect()
    }
}
