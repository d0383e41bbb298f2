//! [`SendAhead`]: tasks sent to a remote worker before a slot frees there,
//! and the measurements that tell which groups are short enough for it.

use hashbrown::HashMap;
use std::time::Duration;

use crate::ir::{GroupId, TaskId};

/// Instances of a group measured before it may count as short.
const SHORT_SAMPLE: u32 = 8;
/// The mean duration under which a group counts as short: a round trip to a
/// remote worker matters next to it, so its tasks are sent ahead.
const SHORT_TASK: Duration = Duration::from_millis(100);
/// How much work waits in line behind each running task of a short group
/// on a remote worker: enough to cover a round trip and the worker's
/// [`crate::runtime::protocol::messages::REPORT_HOLD`], little enough that a run's last tasks
/// still end together on all workers.
const LINE: Duration = Duration::from_millis(10);
/// The most tasks in line behind one (at least two always are).
const MAX_LINE: u8 = 8;

/// A task in line: which, its label, and when it became ready.
pub(in crate::runtime::coordinator) type Next = (TaskId, String, u64);

/// Tasks waiting in line on remote workers, and the durations of groups
/// not yet known to be short.
#[derive(Default)]
pub(in crate::runtime::coordinator) struct SendAhead {
    /// Tasks sent ahead, by the task they start after, with their label
    /// and when they became ready, to record their start when it comes.
    /// Only a stopped run ends a task still in line, and then the whole
    /// line is dropped ([`SendAhead::clear`]): no map the other way is needed.
    ahead: HashMap<TaskId, Next>,
    /// Successful runs and their total duration, per group, until it is known to be short.
    durations: HashMap<GroupId, (u32, Duration)>,
}

impl SendAhead {
    /// `task`, labelled `label` and ready since `ready_us`, was sent to start when `before` ends.
    pub(in crate::runtime::coordinator) fn hold(&mut self, before: TaskId, task: TaskId, label: String, ready_us: u64) {
        self.ahead.insert(before, (task, label, ready_us));
    }

    /// `task` was lost with its worker, or what was sent to start after it
    /// never left: nothing starts after it.
    pub(in crate::runtime::coordinator) fn forget(&mut self, task: TaskId) {
        self.release(task);
    }

    /// `task` ended: the task that starts after it, with its label and
    /// when it became ready.
    pub(in crate::runtime::coordinator) fn release(&mut self, task: TaskId) -> Option<Next> {
        self.ahead.remove(&task)
    }

    /// The run is stopped: no task in line starts any more.
    pub(in crate::runtime::coordinator) fn clear(&mut self) {
        self.ahead.clear();
    }

    /// Counts a successful run of an instance of `group` that took
    /// `duration`. Once enough instances ran and they are short, returns
    /// how many tasks may wait in line behind each running one.
    pub(in crate::runtime::coordinator) fn measure(&mut self, group: GroupId, duration: Duration) -> Option<u8> {
        let (count, total) = self.durations.entry(group).or_default();
        if *count >= SHORT_SAMPLE {
            return None;
        }
        *count += 1;
        *total += duration;
        (*count == SHORT_SAMPLE && *total < SHORT_TASK * SHORT_SAMPLE).then(|| line_depth(*total / SHORT_SAMPLE))
    }
}

/// How many tasks of a group whose instances take `mean` wait in line
/// behind each running one: [`LINE`]'s worth, between 2 and [`MAX_LINE`].
fn line_depth(mean: Duration) -> u8 {
    let depth = LINE.as_nanos().div_ceil(mean.as_nanos().max(1));
    depth.clamp(2, u128::from(MAX_LINE)) as u8
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{SendAhead, line_depth};
    use crate::ir::{GroupId, TaskId};

    #[test]
    fn the_line_holds_about_ten_milliseconds_of_work() {
        assert_eq!(line_depth(Duration::from_micros(700)), 8, "capped");
        assert_eq!(line_depth(Duration::from_millis(2)), 5);
        assert_eq!(line_depth(Duration::from_millis(3)), 4);
        assert_eq!(line_depth(Duration::from_millis(50)), 2, "never under two");
        assert_eq!(line_depth(Duration::ZERO), 8);
    }

    #[test]
    fn a_group_is_short_once_eight_quick_instances_ran() {
        let mut ahead = SendAhead::default();
        let quick = Duration::from_millis(2);
        assert_eq!((0..7).filter_map(|_| ahead.measure(GroupId(0), quick)).count(), 0);
        assert_eq!(ahead.measure(GroupId(0), quick), Some(5));
        assert_eq!(ahead.measure(GroupId(0), quick), None, "measured once");
        let slow = Duration::from_secs(1);
        assert_eq!((0..8).filter_map(|_| ahead.measure(GroupId(1), slow)).count(), 0);
    }

    #[test]
    fn a_task_in_line_starts_when_the_one_before_ends() {
        let mut ahead = SendAhead::default();
        let (a, b, c) = (TaskId::new(GroupId(0), 0), TaskId::new(GroupId(0), 1), TaskId::new(GroupId(0), 2));
        ahead.hold(a, b, "g[1]".to_owned(), 7);
        assert_eq!(ahead.release(c), None);
        assert_eq!(ahead.release(a), Some((b, "g[1]".to_owned(), 7)));
        assert_eq!(ahead.release(a), None, "started once");
        ahead.hold(a, b, "g[1]".to_owned(), 7);
        ahead.hold(b, c, "g[2]".to_owned(), 8);
        ahead.forget(a);
        assert_eq!(ahead.release(a), None, "lost with its worker");
        ahead.clear();
        assert_eq!(ahead.release(b), None, "the run stopped");
    }
}
