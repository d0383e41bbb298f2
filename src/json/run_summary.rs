//! [`RunSummary`]: what `flow log summary --json` prints.

use schemars::JsonSchema;
use serde::Serialize;

use super::{Counts, RunState, TaskRef};

/// What `flow log summary` says of a run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunSummary {
    /// The run's id.
    pub run_id: String,
    /// Whether the run wrote its summary (ended, however it ended).
    pub finished: bool,
    /// Where the run stands, as `flow runs` says.
    pub state: RunState,
    /// The same in words, as `flow status` prints it.
    #[serde(skip)]
    pub state_words: &'static str,
    /// Its instances by the state of their last attempt.
    pub counts: Counts,
    /// What its tasks wrote.
    pub output: OutputSizes,
    /// Per task with timed instances or measured attempts, in graph order.
    pub tasks: Vec<TaskUse>,
    /// The instances whose last attempt took longest, longest first.
    pub slowest: Vec<Slow>,
}

/// Bytes written per stream, and the records of the output log.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct OutputSizes {
    /// To stdout.
    pub stdout_bytes: u64,
    /// To stderr.
    pub stderr_bytes: u64,
    /// flow's own messages about tasks.
    pub system_bytes: u64,
    /// Records in the output log.
    pub records: u64,
}

/// One task's durations and what its attempts used.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskUse {
    /// The task's name.
    pub task: String,
    /// Instances whose last attempt has a duration.
    pub timed: u64,
    /// Their durations added up, µs.
    pub total_us: u64,
    /// Their mean, µs.
    pub mean_us: u64,
    /// The longest, µs.
    pub max_us: u64,
    /// Attempts (all of them, retries too) whose worker measured them.
    pub measured: u64,
    /// Their wall times, µs.
    pub wall_us: Option<Spread>,
    /// Their CPU times (user plus system), µs.
    pub cpu_us: Option<Spread>,
    /// Their peak resident set sizes, bytes.
    pub rss_bytes: Option<Spread>,
    /// How long its attempts (all of them) waited between becoming ready
    /// and being started, µs; `null` in runs recorded before flow kept it.
    pub queue_wait_us: Option<Spread>,
}

/// The median and the largest of some measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Spread {
    /// The middle value (the lower of the two middle ones for an even count).
    pub median: u64,
    /// The largest.
    pub max: u64,
}

impl Spread {
    /// The spread of `values`, if there are any.
    pub fn of(mut values: Vec<u64>) -> Option<Spread> {
        values.sort_unstable();
        let max = *values.last()?;
        Some(Spread { median: values[(values.len() - 1) / 2], max })
    }
}

/// A slow instance.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Slow {
    /// Which instance.
    #[serde(flatten)]
    pub task: TaskRef,
    /// How long its last attempt took, µs.
    pub duration_us: u64,
}
