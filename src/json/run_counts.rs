//! [`Counts`]: how many instances of a run stand where.

use flow_engine::ir::Graph;
use flow_engine::log::Latest;
use flow_engine::runtime::Summary;
use schemars::JsonSchema;
use serde::Serialize;

/// A run's instances by state. `running` counts instances whose worker
/// was lost too (they run again); `queued` is what is left of `total`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Counts {
    /// Instances in the graph (known so far, for a run with dynamic stages).
    pub total: u64,
    /// Ran and succeeded.
    pub succeeded: u64,
    /// Skipped: an earlier run did the same work.
    pub cached: u64,
    /// Failed after their retries.
    pub failed: u64,
    /// Did not run or were stopped.
    pub cancelled: u64,
    /// Running now.
    pub running: u64,
    /// Not started yet.
    pub queued: u64,
    /// Failed, and waiting to run again after their `retry_delay`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retrying: u64,
    /// Did not run: their `when` was false, or they wait on a skipped instance.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: u64,
    /// Of `failed`, those whose task's `continue_on_failure` ignores the
    /// failure: they do not make the run fail.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ignored: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Counts {
    /// The counts of a finished run, from its summary.
    pub fn of_summary(s: &Summary) -> Self {
        Counts {
            total: s.total,
            succeeded: s.succeeded,
            cached: s.cached,
            failed: s.failed + s.ignored,
            cancelled: s.cancelled,
            skipped: s.skipped,
            ignored: s.ignored,
            ..Counts::default()
        }
        .with_queued()
    }

    /// The counts a report shows: instances whose worker was lost run
    /// again, those not started are queued.
    pub fn of_report(c: &flow_engine::report::Counts) -> Self {
        Counts {
            total: c.total,
            succeeded: c.succeeded,
            cached: c.cached,
            failed: c.failed,
            cancelled: c.cancelled,
            skipped: c.skipped,
            running: c.running + c.lost,
            queued: c.waiting,
            retrying: c.retrying,
            ignored: c.ignored,
        }
    }

    /// The counts of the instances of `graph` whose last attempts `latest`
    /// holds, counted as the report counts them.
    pub fn of_latest(graph: &Graph, latest: &Latest) -> Self {
        Self::of_report(&flow_engine::report::Counts::sum(&flow_engine::report::Counts::per_group(graph, latest)))
    }

    /// Instances that ended, however they ended.
    pub fn done(&self) -> u64 {
        self.succeeded + self.cached + self.failed + self.cancelled + self.skipped
    }

    fn with_queued(mut self) -> Self {
        self.queued = self.total.saturating_sub(self.done() + self.running + self.retrying);
        self
    }
}
