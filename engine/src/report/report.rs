//! [`Report`]: what `flow report` shows of one run, aggregated so that its
//! size depends on the number of tasks and workers, never on the number of
//! instances.

use serde::Serialize;

use super::counts::Counts;
use super::graph_view::GraphView;
use super::stats::Stats;
use super::timeline::Timeline;

/// Everything a run's report shows; serialisable, rendered by [`super::render()`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The run as a whole.
    pub run: RunInfo,
    /// Instances by state, over the whole run.
    pub counts: Counts,
    /// One entry per task (group), in graph order.
    pub tasks: Vec<TaskReport>,
    /// The first [`super::MAX_FAILURES`] instances whose last attempt failed, in graph order.
    pub failures: Vec<FailureReport>,
    /// How many instances failed in all.
    pub failures_total: u64,
    /// The [`super::MAX_SLOWEST`] longest attempts, longest first.
    pub slowest: Vec<SlowAttempt>,
    /// Attempts over time, by worker, and the CPUs they used.
    pub timeline: Timeline,
    /// The task graph: groups and the edges between them.
    pub graph: GraphView,
    /// The cluster allocations of the run, oldest first (empty without a queue).
    pub allocations: Vec<AllocationSpan>,
    /// What could not be read completely (a torn journal, a damaged file).
    pub warnings: Vec<String>,
}

/// The run as a whole.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    /// The run's id.
    pub id: String,
    /// The workflow's name.
    pub workflow: String,
    /// The workflow file, as recorded when the run started.
    pub workflow_file: Option<String>,
    /// The command line that started the run, quoted for a POSIX shell, if recorded.
    pub command_line: Option<String>,
    /// A `--dry-exec` run: no process was started, its successes are not results.
    pub dry_exec: bool,
    /// The flow version that wrote the report.
    pub flow_version: String,
    /// When the run started, µs since the Unix epoch.
    pub started_us: Option<u64>,
    /// When it ended, or the last thing its journal recorded if it never ended.
    pub ended_us: Option<u64>,
    /// `succeeded`, `failed`, `interrupted` or `unfinished` (no summary: it
    /// was killed, or it is still running).
    pub status: String,
    /// The exit code `flow run` returned, if the run ended.
    pub exit_code: Option<u8>,
}

/// One task (group) of the graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskReport {
    /// The task's name.
    pub name: String,
    /// `file:line:col` of its table in the workflow, if the file could be read.
    pub location: Option<String>,
    /// Its instances by state.
    pub counts: Counts,
    /// Attempts that started, retries included.
    pub attempts: u64,
    /// Wall time of its ended attempts, µs.
    pub wall_us: Option<Stats>,
    /// CPU time (user and system) of its attempts that reported it, µs.
    pub cpu_us: Option<Stats>,
    /// Peak resident memory of its attempts that reported it, bytes.
    pub max_rss: Option<Stats>,
    /// What each variant asked for and what its attempts used.
    pub usage: Vec<VariantUse>,
}

/// What a variant of a task asked for, and the most its attempts used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantUse {
    /// The variant's position in the task's `variants`.
    pub variant: u32,
    /// Attempts that ran with it and reported their usage.
    pub attempts: u64,
    /// CPUs asked for.
    pub cpus: f64,
    /// Memory asked for, bytes (0: none asked).
    pub memory: u64,
    /// The most CPUs one attempt kept busy on average (CPU time / wall time).
    pub max_cpus_used: f64,
    /// The largest peak resident memory of one attempt, bytes.
    pub max_rss: u64,
    /// In words: "asked for 8 GiB, used at most 1.3 GiB; asked for 4 cpus, kept at most 1.2 busy".
    pub summary: String,
}

/// An instance whose last attempt failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureReport {
    /// `name[index]`.
    pub task: String,
    /// Its last attempt (0 for the first).
    pub attempt: u32,
    /// Why it failed, as the run said it.
    pub reason: String,
    /// `file:line:col` of the task in the workflow.
    pub location: Option<String>,
    /// The host it ran on, if it reported one.
    pub host: Option<String>,
    /// The last lines of its standard error (of its last attempt).
    pub stderr_tail: Vec<String>,
    /// The instance and attempt, to find its standard error.
    #[serde(skip)]
    pub(super) key: Option<(crate::ir::TaskId, u32)>,
}

/// One of the longest attempts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlowAttempt {
    /// `name[index]`.
    pub task: String,
    /// Which attempt.
    pub attempt: u32,
    /// Its wall time, µs.
    pub wall_us: u64,
    /// Where it ran.
    pub lane: String,
}

/// One cluster allocation's life.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllocationSpan {
    /// flow's number for it.
    pub id: u32,
    /// The manager's job id.
    pub job_id: String,
    /// Its last state.
    pub state: String,
    /// Workers it was asked to start.
    pub workers: u32,
    /// When it was submitted, µs since the Unix epoch.
    pub submitted_us: u64,
    /// When its first worker started, if one did.
    pub started_us: Option<u64>,
    /// When it ended, if it did.
    pub ended_us: Option<u64>,
    /// Why it ended, if it says.
    pub reason: Option<String>,
}
