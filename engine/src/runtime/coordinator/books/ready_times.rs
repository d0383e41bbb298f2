//! [`ReadyTimes`]: when each instance became ready to start, for the
//! `ready_us` of its start record. The core keeps no clock, so the driver
//! works it out when the instance starts: the latest of the run's start,
//! the end of each instance it waits for ([`Graph::upstream`]), and the
//! moment it became ready again on its own (its comparison with an earlier
//! run made, its failed attempt's retry due, its worker lost).

use hashbrown::HashMap;

use crate::ir::{EdgeKind, Graph, TaskId};

/// End times of the instances others wait for, and instances ready again.
#[derive(Debug)]
pub(in crate::runtime::coordinator) struct ReadyTimes {
    /// When the run started: instances with nothing to wait for are ready then.
    run_start_us: u64,
    /// Per group, the latest end of any of its instances (for `all` edges).
    group_end: Vec<u64>,
    /// Per group waited for instance by instance, each instance's end.
    ends: Vec<Vec<u64>>,
    /// Whether a group is waited for instance by instance.
    per_instance: Vec<bool>,
    /// Instances that became ready again, and when.
    again: HashMap<TaskId, u64>,
}

impl ReadyTimes {
    /// Times for a run of `graph` that starts at `run_start_us`.
    pub(in crate::runtime::coordinator) fn new(graph: &Graph, run_start_us: u64) -> Self {
        let mut per_instance = vec![false; graph.groups.len()];
        for edge in graph.edges.iter().filter(|e| !matches!(e.kind, EdgeKind::All)) {
            if let Some(flag) = per_instance.get_mut(edge.from.index()) {
                *flag = true;
            }
        }
        // An instance of a nested group waits for its part's parent instance.
        for group in &graph.groups {
            if let crate::ir::Domain::Nested { parent, .. } = &group.domain
                && let Some(flag) = per_instance.get_mut(parent.index())
            {
                *flag = true;
            }
        }
        let groups = graph.groups.len();
        Self {
            run_start_us,
            group_end: vec![0; groups],
            ends: vec![Vec::new(); groups],
            per_instance,
            again: HashMap::new(),
        }
    }

    /// `task` ended (ran, was found unchanged, or was skipped) at `at_us`.
    pub(in crate::runtime::coordinator) fn ended(&mut self, task: TaskId, at_us: u64) {
        let g = task.group.index();
        if let Some(end) = self.group_end.get_mut(g) {
            *end = (*end).max(at_us);
        }
        if self.per_instance.get(g).copied().unwrap_or(false) {
            let ends = &mut self.ends[g];
            let i = usize::try_from(task.instance).unwrap_or(usize::MAX);
            if i >= ends.len() {
                ends.resize(i.saturating_add(1), 0);
            }
            ends[i] = at_us;
        }
    }

    /// `task` became ready again at `at_us`: compared with an earlier run
    /// and found changed, due to be retried, or requeued by a lost worker.
    pub(in crate::runtime::coordinator) fn ready_again(&mut self, task: TaskId, at_us: u64) {
        self.again.insert(task, at_us);
    }

    /// When `task`, starting now, became ready.
    pub(in crate::runtime::coordinator) fn take(&mut self, task: TaskId, graph: &Graph) -> u64 {
        let mut ready = self.run_start_us.max(self.again.remove(&task).unwrap_or(0));
        for up in graph.upstream(task) {
            let g = up.group.index();
            let whole = graph.groups.get(g).is_some_and(|group| up.count() >= group.count);
            let latest = match self.ends.get(g) {
                Some(ends) if !whole && self.per_instance[g] => {
                    up.positions().map(|p| ends.get(p as usize).copied().unwrap_or(0)).max().unwrap_or(0)
                }
                _ => self.group_end.get(g).copied().unwrap_or(0),
            };
            ready = ready.max(latest);
        }
        ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::core::tests::env::{GroupSpec, edge_all, edge_each, graph, t};

    #[test]
    fn an_instance_without_dependencies_is_ready_when_the_run_starts() {
        let g = graph(vec![GroupSpec::new("a", 3)], vec![]);
        let mut times = ReadyTimes::new(&g, 100);
        assert_eq!(times.take(t(0, 2), &g), 100);
    }

    #[test]
    fn element_wise_waits_for_its_own_source_and_all_for_the_last() {
        let g = graph(
            vec![GroupSpec::new("a", 3), GroupSpec::new("b", 3), GroupSpec::new("c", 1)],
            vec![edge_each(0, 1), edge_all(1, 2)],
        );
        let mut times = ReadyTimes::new(&g, 100);
        times.ended(t(0, 0), 300);
        times.ended(t(0, 1), 200);
        assert_eq!(times.take(t(1, 1), &g), 200);
        assert_eq!(times.take(t(1, 0), &g), 300);
        times.ended(t(1, 0), 500);
        times.ended(t(1, 1), 400);
        times.ended(t(1, 2), 450);
        assert_eq!(times.take(t(2, 0), &g), 500);
    }

    #[test]
    fn ready_again_counts_once_and_only_if_later() {
        let g = graph(vec![GroupSpec::new("a", 2), GroupSpec::new("b", 2)], vec![edge_each(0, 1)]);
        let mut times = ReadyTimes::new(&g, 100);
        times.ended(t(0, 0), 300);
        times.ready_again(t(1, 0), 700);
        assert_eq!(times.take(t(1, 0), &g), 700);
        assert_eq!(times.take(t(1, 0), &g), 300);
        times.ready_again(t(1, 0), 50);
        assert_eq!(times.take(t(1, 0), &g), 300);
    }
}
