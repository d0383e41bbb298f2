//! [`Held`]: the instances a resumed run holds for the remote workers of a
//! killed run (see `stranded.rs`), each with the worker that ran it and
//! what the killed runs' logs already hold of its output.

use std::collections::{HashMap, HashSet};

use super::earlier_output::EarlierOutput;
use crate::ir::TaskId;

/// A worker of a killed run: which run (its place among the killed runs
/// read) and its id there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(in crate::runtime::coordinator) struct KilledWorker {
    /// The run's place among the killed runs, oldest first.
    pub(in crate::runtime::coordinator) run: usize,
    /// The worker's id in that run.
    pub(in crate::runtime::coordinator) id: u32,
}

/// An instance held for the worker that may bring it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::runtime::coordinator) struct HeldTask {
    /// Its `name[index]`: a carried task is this one only if its label is the same.
    pub(in crate::runtime::coordinator) label: String,
    /// The attempt the killed run started.
    pub(in crate::runtime::coordinator) attempt: u32,
    /// The worker it ran on.
    pub(in crate::runtime::coordinator) worker: KilledWorker,
    /// Its output that the killed runs' logs hold.
    pub(in crate::runtime::coordinator) earlier: EarlierOutput,
}

/// The instances held, by task.
#[derive(Debug, Default)]
pub(in crate::runtime::coordinator) struct Held {
    tasks: HashMap<TaskId, HeldTask>,
}

impl Held {
    /// Holds `task` as `held`.
    pub(in crate::runtime::coordinator) fn insert(&mut self, task: TaskId, held: HeldTask) {
        self.tasks.insert(task, held);
    }

    /// Whether an instance labelled `label` is held.
    pub(in crate::runtime::coordinator) fn holds(&self, label: &str) -> bool {
        self.tasks.values().any(|t| t.label == label)
    }

    /// How many instances are held.
    pub(in crate::runtime::coordinator) fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether none is.
    pub(in crate::runtime::coordinator) fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Takes `task` out, if it is held as `label`.
    pub(in crate::runtime::coordinator) fn take(&mut self, task: TaskId, label: &str) -> Option<HeldTask> {
        self.tasks.get(&task).filter(|held| held.label == label)?;
        self.tasks.remove(&task)
    }

    /// Takes out what is held for `workers`, which came back without it:
    /// nobody else can bring it. Returns those tasks, in order.
    pub(in crate::runtime::coordinator) fn take_left_by(&mut self, workers: &HashSet<KilledWorker>) -> Vec<TaskId> {
        let mut left: Vec<TaskId> =
            self.tasks.iter().filter(|(_, held)| workers.contains(&held.worker)).map(|(task, _)| *task).collect();
        left.sort_unstable();
        for task in &left {
            self.tasks.remove(task);
        }
        left
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::core::tests::env::t;

    fn held(label: &str, run: usize, id: u32) -> HeldTask {
        let worker = KilledWorker { run, id };
        HeldTask { label: label.into(), attempt: 0, worker, earlier: EarlierOutput::default() }
    }

    #[test]
    fn what_a_worker_that_came_back_did_not_carry_is_let_go() {
        let mut h = Held::default();
        h.insert(t(0, 0), held("a[0]", 0, 1));
        h.insert(t(0, 1), held("a[1]", 0, 1));
        h.insert(t(0, 2), held("a[2]", 0, 2));
        h.insert(t(0, 3), held("a[3]", 1, 1));
        assert_eq!(h.take(t(0, 0), "b[0]"), None, "another instance now");
        assert_eq!(h.take(t(0, 0), "a[0]").map(|h| h.worker), Some(KilledWorker { run: 0, id: 1 }));
        let back = HashSet::from([KilledWorker { run: 0, id: 1 }]);
        assert_eq!(h.take_left_by(&back), [t(0, 1)]);
        assert_eq!(h.len(), 2, "other workers' tasks, and the same id in another run, are still held");
        assert!(h.take_left_by(&back).is_empty());
    }
}
