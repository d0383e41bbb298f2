//! [`Summary`]: how a run ended, as `summary.json` in its run directory
//! holds it, and the exit code that follows from it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The exit code of a run that could not write its journal, its output log
/// or its summary (`EX_IOERR` of sysexits.h).
pub const IO_FAILURE: u8 = 74;

/// How a run ended, as written to `summary.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Summary {
    /// The run's id.
    pub run_id: String,
    /// Instances in the graph.
    pub total: u64,
    /// Instances that ran and succeeded.
    pub succeeded: u64,
    /// Instances skipped because an earlier run did the same work.
    pub cached: u64,
    /// Instances that failed (after their retries).
    pub failed: u64,
    /// Instances that did not run because of a failure, `--max-fails` or Ctrl-C.
    pub cancelled: u64,
    /// Instances that failed in a task with `continue_on_failure`: shown
    /// as failed, but they do not make the run fail.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ignored: u64,
    /// Instances that did not run: their `when` was false, or they wait on
    /// a skipped instance. A skip does not make the run fail.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: u64,
    /// Whether the run was interrupted.
    pub interrupted: bool,
    /// A `--dry-exec` run: nothing was executed, its successes are not results.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_exec: bool,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Run files that could not be written (a full disk): the run stopped,
    /// and these say what was not recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_errors: Vec<String>,
    /// How the workflow's `[finally]` command ended, if it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finally: Option<FinallyOutcome>,
    /// Where the results are: the first declared outputs (absolute) of the
    /// instances of final tasks (those no task depends on) that succeeded
    /// or were unchanged, in instance order. Not a run file: `flow run`
    /// names them as the run ends.
    #[serde(skip)]
    pub results: Vec<PathBuf>,
    /// How many more such outputs there are.
    #[serde(skip)]
    pub more_results: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Summary {
    /// The process exit code: 0 all succeeded, 1 some failed or were
    /// cancelled (or `[finally]` failed), 74 run files could not be
    /// written, 130 interrupted.
    pub fn exit_code(&self) -> u8 {
        if !self.io_errors.is_empty() {
            IO_FAILURE
        } else if self.interrupted {
            130
        } else if self.failed > 0 || self.cancelled > 0 || self.finally.as_ref().is_some_and(|f| !f.succeeded) {
            1
        } else {
            0
        }
    }
}

/// How the `[finally]` command ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinallyOutcome {
    /// Whether it exited 0.
    pub succeeded: bool,
    /// Its exit code, if it exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
    /// Why it failed, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long it ran, in seconds.
    pub seconds: f64,
}
