//! [`Results`]: where a run's results are — the declared outputs of the
//! instances of its final tasks (those no other task depends on) that
//! succeeded or were unchanged. It keeps the first few instances and a
//! count, so a million-instance final task costs a counter.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::ir::{Graph, TaskId};
use crate::runtime::coordinator::dispatch::job_factory::JobFactory;
use crate::runtime::event::Event;
use crate::runtime::protocol::outcome::Status;

/// Outputs named in full; the rest are counted.
pub const SHOWN: usize = 3;

/// The finished instances of final tasks, as the run goes.
#[derive(Debug, Default)]
pub struct Results {
    /// Per group: whether it is final and declares outputs (how many per instance).
    outputs: Vec<u64>,
    /// The first finished instances that declare outputs, in instance order.
    first: BTreeSet<TaskId>,
    /// Outputs of every finished instance counted.
    total: u64,
}

impl Results {
    /// Tracks the final groups of `graph` that declare outputs.
    pub fn new(graph: &Graph) -> Self {
        let outputs = (0..graph.groups.len())
            .map(|g| {
                let depended_on = graph.edges.iter().any(|e| e.from.index() == g && e.to.index() != g);
                if depended_on { 0 } else { graph.groups[g].template.outputs.len() as u64 }
            })
            .collect();
        Results { outputs, ..Results::default() }
    }

    /// Counts the instance of a `TaskFinished` event that succeeded or
    /// was unchanged.
    pub fn see(&mut self, event: &Event) {
        let Event::TaskFinished { task, status: Status::Succeeded | Status::Cached, retrying: false, .. } = event
        else {
            return;
        };
        let task = *task;
        let Some(&n) = self.outputs.get(task.group.index()) else { return };
        if n == 0 || !task.is_instance() {
            return;
        }
        self.total += n;
        self.first.insert(task);
        if self.first.len() > SHOWN {
            self.first.pop_last();
        }
    }

    /// The first [`SHOWN`] outputs (absolute) and how many more there are.
    pub fn paths(&self, factory: &JobFactory) -> (Vec<PathBuf>, u64) {
        let paths: Vec<PathBuf> =
            self.first.iter().filter_map(|&task| factory.outputs(task).ok()).flatten().take(SHOWN).collect();
        let more = self.total.saturating_sub(paths.len() as u64);
        (paths, more)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::GroupId;

    fn graph() -> Graph {
        crate::compile::compile_toml(
            "[[tasks]]\nname = \"a\"\nrange = \"0-4\"\ncommand = \"true\"\noutputs = [\"a{{ index }}\"]\n\n\
             [[tasks]]\nname = \"b\"\nrange = \"0-4\"\ncommand = \"true\"\n\
             outputs = [\"b{{ index }}.x\", \"b{{ index }}.y\"]\n\n\
             [[tasks]]\nname = \"c\"\ncommand = \"true\"\ninputs = [\"a*\"]\n",
        )
    }

    fn finished(task: TaskId, status: Status) -> Event {
        Event::TaskFinished {
            task,
            label: String::new(),
            attempt: 0,
            status,
            retrying: false,
            retry_at_us: None,
            duration: std::time::Duration::ZERO,
            stderr_tail: String::new(),
            location: "".into(),
            metrics: None,
        }
    }

    #[test]
    fn only_final_tasks_with_outputs_count() {
        let graph = graph();
        let mut results = Results::new(&graph);
        for g in 0..3 {
            for i in (0..5).rev() {
                results.see(&finished(TaskId::new(GroupId(g), i), Status::Succeeded));
                results.see(&finished(TaskId::new(GroupId(g), i), Status::failed(Some(1), None, String::new())));
            }
        }
        // `a` feeds `c`; `c` declares no outputs: only `b` counts, two outputs each.
        assert_eq!(results.total, 10);
        let first: Vec<TaskId> = results.first.iter().copied().collect();
        assert_eq!(first, [0, 1, 2].map(|i| TaskId::new(GroupId(1), i)));
    }
}
