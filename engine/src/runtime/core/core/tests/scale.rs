//! A million instances: compact state and a full run through a small worker.

use super::env::{GroupSpec, graph};
use crate::ir::{GroupId, TaskId};
use crate::resources::WorkerShape;
use crate::runtime::core::{Allocation, CancelReason, Core, CoreOptions, Out, TaskResult, TaskState, WorkerId};

/// An [`Out`] that only keeps what is running.
#[derive(Default)]
struct Running(Vec<TaskId>, u64);

impl Out for Running {
    fn start(&mut self, task: TaskId, _: u32, _: WorkerId, _: &Allocation) {
        self.0.push(task);
    }

    fn state(&mut self, _: TaskId, state: TaskState) {
        assert_eq!(state, TaskState::Succeeded);
        self.1 += 1;
    }

    fn cancelled_rest(&mut self, _: GroupId, _: u64, _: CancelReason) {
        unreachable!("nothing is cancelled");
    }
}

const MILLION: u64 = 1_000_000;

fn run_to_end(core: &mut Core) -> (u64, Vec<TaskId>) {
    core.add_worker(WorkerShape { cpus: vec![0, 1], ..WorkerShape::default() }, None);
    let (now, mut out, mut first) = (0, Running::default(), Vec::new());
    core.schedule(now, &mut out);
    while let Some(task) = out.0.pop() {
        if first.len() < 4 {
            first.push(task);
        }
        core.on_finished(task, TaskResult::Succeeded, now, &mut out);
        core.schedule(now, &mut out);
    }
    (out.1, first)
}

#[test]
fn a_million_instances_take_a_byte_each_and_run_through_two_cpus() {
    let mut core = Core::new(&graph(vec![GroupSpec::new("big", MILLION)], vec![]), CoreOptions::default());
    let bytes = core.instance_heap_bytes();
    assert!(bytes <= MILLION as usize + 64, "{bytes} bytes of per-instance state");
    let (succeeded, _) = run_to_end(&mut core);
    assert_eq!(succeeded, MILLION);
    assert!(core.is_finished());
    assert_eq!(core.counts().succeeded, MILLION);
}

#[test]
fn ten_groups_of_a_hundred_thousand_go_by_priority() {
    let groups = (0..10).map(|i| GroupSpec::new(&format!("g{i}"), MILLION / 10).priority(i)).collect();
    let mut core = Core::new(&graph(groups, vec![]), CoreOptions::default());
    let (succeeded, first) = run_to_end(&mut core);
    assert_eq!(succeeded, MILLION);
    assert!(first.iter().all(|t| t.group.0 == 9), "{first:?}");
}
