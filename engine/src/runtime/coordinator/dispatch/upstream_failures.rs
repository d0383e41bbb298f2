//! [`UpstreamFailures`]: what a task that waits for another's failure, or
//! for it whatever happened (`after = [{ task = "dock", on = "failure" }]`,
//! `on = "always"`), learns when it is about to start — whether it runs at
//! all, and which of the instances it waits for failed, and how.
//!
//! The core releases such a task once what it waits for ended, however;
//! the question "did any of them fail?" is asked here, before dispatch, in
//! the one place that also decides a `when` ([`crate::runtime::coordinator::driver`]'s gate).

use hashbrown::HashMap;

use serde::Serialize;

use crate::ir::{EdgeOn, Graph, GroupId, TaskId};
use crate::runtime::core::Core;

/// How a task waited for did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(in crate::runtime::coordinator) struct Failed {
    /// The instance, as `flow log` names it (`dock[3]`).
    pub(in crate::runtime::coordinator) task: String,
    /// `failed`, or `cancelled` (something it waited for failed first).
    pub(in crate::runtime::coordinator) state: &'static str,
    /// Its exit code, if it exited.
    pub(in crate::runtime::coordinator) exit_code: Option<i32>,
    /// The signal that killed it, if one did.
    pub(in crate::runtime::coordinator) signal: Option<i32>,
    /// Why, in words (`exit code 3`, `timed out after 90s`, `prep failed`).
    pub(in crate::runtime::coordinator) reason: String,
}

/// Whether an instance about to start runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::runtime::coordinator) enum Gate {
    /// It runs as any task does (and may be unchanged from an earlier run).
    Runs,
    /// It is skipped, for this reason: its `when` is false, or it waits for
    /// a failure that did not happen.
    Skipped(String),
    /// Some of what it waits for did not succeed: it runs, told which, and
    /// is never taken from an earlier run.
    Reacts(Vec<Failed>),
}

/// The edges that wait for an end however, by waiting group, and how the
/// instances they leave from failed.
pub(in crate::runtime::coordinator) struct UpstreamFailures {
    /// Per group: the indices of its incoming edges with `on` failure or always.
    incoming: Vec<Vec<usize>>,
    /// Per group: whether such an edge leaves it (its failures are kept).
    watched: Vec<bool>,
    /// How each failed or cancelled instance of a watched group ended.
    ended: HashMap<TaskId, Failed>,
}

impl UpstreamFailures {
    /// Finds the edges of `graph` that wait for an end however.
    pub(in crate::runtime::coordinator) fn new(graph: &Graph) -> Self {
        let n = graph.groups.len();
        let (mut incoming, mut watched) = (vec![Vec::new(); n], vec![false; n]);
        for (e, edge) in graph.edges.iter().enumerate() {
            if edge.on != EdgeOn::Success && edge.to.index() < n && edge.from.index() < n {
                incoming[edge.to.index()].push(e);
                watched[edge.from.index()] = true;
            }
        }
        Self { incoming, watched, ended: HashMap::new() }
    }

    /// `task`, labelled `label`, failed for good: kept if something waits
    /// for its failure.
    pub(in crate::runtime::coordinator) fn failed(
        &mut self,
        task: TaskId,
        label: String,
        exit_code: Option<i32>,
        signal: Option<i32>,
        reason: &str,
    ) {
        if self.watched.get(task.group.index()).copied().unwrap_or(false) {
            let reason = reason.to_owned();
            self.ended.insert(task, Failed { task: label, state: "failed", exit_code, signal, reason });
        }
    }

    /// `task` was cancelled for `reason`: kept, labelled by `label`, if
    /// something waits for its failure.
    pub(in crate::runtime::coordinator) fn cancelled(
        &mut self,
        task: TaskId,
        label: impl FnOnce() -> String,
        reason: &str,
    ) {
        if self.watched.get(task.group.index()).copied().unwrap_or(false) {
            let (task_label, reason) = (label(), reason.to_owned());
            self.ended
                .insert(task, Failed { task: task_label, state: "cancelled", exit_code: None, signal: None, reason });
        }
    }

    /// What the edges into `task` that wait for an end however say, now
    /// that everything they wait for ended: [`Gate::Runs`] for a task
    /// without such edges.
    pub(in crate::runtime::coordinator) fn verdict(&self, graph: &Graph, core: &Core, task: TaskId) -> Gate {
        let Some(edges) = self.incoming.get(task.group.index()).filter(|e| !e.is_empty()) else {
            return Gate::Runs;
        };
        let (mut failed, mut waits_for_failure, mut failure_seen) = (Vec::new(), false, false);
        for &e in edges {
            let edge = &graph.edges[e];
            let count = graph.group(edge.from).count;
            let before = failed.len();
            for s in edge.kind.sources(task.instance, count) {
                let up = TaskId::new(edge.from, s);
                if core.did_not_succeed(up) {
                    failed.push(self.ended.get(&up).cloned().unwrap_or_else(|| Failed {
                        task: graph.label(up),
                        state: "cancelled",
                        exit_code: None,
                        signal: None,
                        reason: String::new(),
                    }));
                }
            }
            if edge.on == EdgeOn::Failure {
                failure_seen |= failed.len() > before;
                waits_for_failure = true;
            }
        }
        if waits_for_failure && !failure_seen {
            let names = failure_names(graph, task.group).unwrap_or_default();
            return Gate::Skipped(format!("it runs on a failure of {names}, and nothing it waits for failed"));
        }
        if failed.is_empty() { Gate::Runs } else { Gate::Reacts(failed) }
    }
}

/// The tasks whose failure `group` waits for (`on = "failure"`), as
/// "`dock` or `score`"; `None` when it waits for none.
pub(crate) fn failure_names(graph: &Graph, group: GroupId) -> Option<String> {
    let mut names: Vec<&str> = graph
        .edges
        .iter()
        .filter(|e| e.to == group && e.on == EdgeOn::Failure)
        .map(|e| graph.group(e.from).name.as_str())
        .collect();
    names.dedup();
    (!names.is_empty()).then(|| format!("`{}`", names.join("` or `")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::compile_toml;
    use crate::runtime::core::{CoreOptions, TaskResult, TaskState};

    /// A core for `graph` whose one worker ran `results` in order.
    fn ran(graph: &Graph, results: &[(TaskId, TaskResult)]) -> Core {
        struct Nothing;
        impl crate::runtime::core::Out for Nothing {
            fn start(
                &mut self,
                _: TaskId,
                _: u32,
                _: crate::runtime::core::WorkerId,
                _: &crate::runtime::core::Allocation,
            ) {
            }
            fn state(&mut self, _: TaskId, _: TaskState) {}
            fn cancelled_rest(&mut self, _: crate::ir::GroupId, _: u64, _: crate::runtime::core::CancelReason) {}
        }
        let mut core = Core::new(graph, CoreOptions::default());
        core.add_worker(crate::resources::WorkerShape::counted(64, 0, 0, Default::default()), None);
        for &(task, result) in results {
            core.schedule(0, &mut Nothing);
            core.on_finished(task, result, 0, &mut Nothing);
        }
        core
    }

    #[test]
    fn a_failure_handler_runs_on_failures_and_is_skipped_without_one() {
        let graph = compile_toml(
            "[[tasks]]\nname = \"dock\"\nrange = \"1-2\"\ncommand = \"true\"\n\n\
             [[tasks]]\nname = \"alert\"\ncommand = \"true\"\nafter = [{ task = \"dock\", on = \"failure\" }]\n",
        );
        let (dock, alert) = (graph.find("dock").unwrap(), graph.find("alert").unwrap());
        let mut failures = UpstreamFailures::new(&graph);
        let one_failed =
            ran(&graph, &[(TaskId::new(dock, 0), TaskResult::Succeeded), (TaskId::new(dock, 1), TaskResult::Failed)]);
        failures.failed(TaskId::new(dock, 1), "dock[2]".into(), Some(3), None, "exit code 3");
        let Gate::Reacts(failed) = failures.verdict(&graph, &one_failed, TaskId::new(alert, 0)) else {
            panic!("alert should run");
        };
        assert_eq!(
            failed,
            [Failed {
                task: "dock[2]".into(),
                state: "failed",
                exit_code: Some(3),
                signal: None,
                reason: "exit code 3".into()
            }]
        );

        let none_failed = ran(
            &graph,
            &[(TaskId::new(dock, 0), TaskResult::Succeeded), (TaskId::new(dock, 1), TaskResult::Succeeded)],
        );
        let verdict = UpstreamFailures::new(&graph).verdict(&graph, &none_failed, TaskId::new(alert, 0));
        assert_eq!(verdict, Gate::Skipped("it runs on a failure of `dock`, and nothing it waits for failed".into()));
        assert_eq!(UpstreamFailures::new(&graph).verdict(&graph, &none_failed, TaskId::new(dock, 0)), Gate::Runs);
    }
}
