//! [`Counts`]: how many instances of a task, or of the run, ended in each
//! state, and [`Counts::per_group`], the one place that counts them from
//! the journal (for `flow report`, `flow status` of a live or crashed run,
//! and `flow log summary`).

use serde::Serialize;

use crate::ir::Graph;
use crate::log::{Latest, State};

/// Instances by the state of their last attempt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Instances in the graph.
    pub total: u64,
    /// Ran and succeeded.
    pub succeeded: u64,
    /// Skipped: an earlier run did the same work.
    pub cached: u64,
    /// Failed after their retries.
    pub failed: u64,
    /// Cancelled before they finished.
    pub cancelled: u64,
    /// Their worker disappeared.
    pub lost: u64,
    /// Not run: their `when` was false, or they wait on a skipped instance.
    pub skipped: u64,
    /// Started and never ended (the run was killed or is still going).
    pub running: u64,
    /// Never started.
    pub waiting: u64,
    /// Failed, and waiting to run again after their `retry_delay` (not in `failed`).
    #[serde(skip_serializing_if = "is_zero")]
    pub retrying: u64,
    /// Of `failed`, those whose task's `continue_on_failure` ignores the failure.
    #[serde(skip_serializing_if = "is_zero")]
    pub ignored: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Counts {
    /// The instances of each group of `graph` (in group order) by the
    /// state of the last attempt `latest` holds; an instance without one
    /// is waiting. A group whose instances were never known has none.
    pub fn per_group(graph: &Graph, latest: &Latest) -> Vec<Counts> {
        let groups = graph.groups.iter().enumerate();
        groups
            .map(|(g, group)| {
                let mut c = Counts { total: group.count, waiting: group.count, ..Counts::default() };
                for last in latest.of(g) {
                    c.waiting -= 1;
                    *match last.status {
                        State::Running => &mut c.running,
                        State::Succeeded => &mut c.succeeded,
                        State::Cached => &mut c.cached,
                        State::Failed if last.retrying => &mut c.retrying,
                        State::Retrying => &mut c.retrying,
                        State::Failed => &mut c.failed,
                        State::Cancelled => &mut c.cancelled,
                        State::Lost => &mut c.lost,
                        State::Skipped => &mut c.skipped,
                        // Words for what a journal never records.
                        State::Waiting | State::NotRun => &mut c.waiting,
                    } += 1;
                }
                if group.continue_on_failure {
                    c.ignored = c.failed;
                }
                c
            })
            .collect()
    }

    /// The sum of `counts`: the run's.
    pub fn sum(counts: &[Counts]) -> Counts {
        counts.iter().fold(Counts::default(), |t, c| Counts {
            total: t.total + c.total,
            succeeded: t.succeeded + c.succeeded,
            cached: t.cached + c.cached,
            failed: t.failed + c.failed,
            cancelled: t.cancelled + c.cancelled,
            lost: t.lost + c.lost,
            skipped: t.skipped + c.skipped,
            running: t.running + c.running,
            waiting: t.waiting + c.waiting,
            retrying: t.retrying + c.retrying,
            ignored: t.ignored + c.ignored,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{GroupId, TaskId};
    use crate::log::{JournalEvent, JournalRecord, Wrote};

    /// Issue 27: one count of the instances of a run with every kind of
    /// end — skipped, cancelled one by one and together, failed, retrying,
    /// ignored — a task a false `when` dropped and a dynamic stage never known.
    #[test]
    fn every_kind_of_instance_is_counted_once() {
        let text = r#"
[[tasks]]
name = "a"
range = "1-6"
command = "echo {{ index }} >> hits.txt"
outputs = ["out/{{ index }}"]

[[tasks]]
name = "later"
each_line = "out/1"
command = "true"

[[tasks]]
name = "dropped"
when = "{{ false }}"
command = "true"

[[tasks]]
name = "lenient"
range = "1-2"
continue_on_failure = true
command = "false"
"#;
        let graph = crate::compile::compile_toml(text);
        assert_eq!(graph.dropped.len(), 1, "`dropped` is no group");
        let at = |g: u32, i: u64, attempt: u32, event: JournalEvent| {
            JournalRecord::new(1, TaskId::new(GroupId(g), i), attempt, event)
        };
        let failed = || JournalEvent::Failed { exit_code: Some(1), signal: None, reason: "exit code 1".into() };
        let records = [
            at(0, 0, 0, JournalEvent::Succeeded { fingerprint: [0; 32], wrote: Wrote::default() }),
            at(0, 1, 0, JournalEvent::Cached { fingerprint: [0; 32], wrote: Wrote::default() }),
            at(0, 2, 0, JournalEvent::Skipped { reason: "when".into() }),
            at(0, 3, 0, failed()),
            at(0, 3, 0, JournalEvent::RetryAt { until_us: 9 }),
            at(0, 4, 0, JournalEvent::Started { worker: 0, ready_us: None }),
            JournalRecord::new(2, TaskId::whole(GroupId(0)), 0, JournalEvent::CancelledRest { reason: "x".into() }),
            at(2, 0, 0, failed()),
        ];
        let mut latest = Latest::new(&graph);
        records.iter().for_each(|r| latest.apply(r));
        let counts = Counts::per_group(&graph, &latest);
        let a = Counts {
            total: 6,
            succeeded: 1,
            cached: 1,
            skipped: 1,
            retrying: 1,
            running: 1,
            cancelled: 1,
            ..Counts::default()
        };
        let later = Counts::default();
        let lenient = Counts { total: 2, failed: 1, ignored: 1, waiting: 1, ..Counts::default() };
        assert_eq!(counts, [a, later, lenient]);
        let run = Counts::sum(&counts);
        assert_eq!((run.total, run.failed, run.cancelled, run.waiting), (8, 1, 1, 1));
    }
}
