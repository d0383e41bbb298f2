//! [`Job`]: one task instance rendered into what a worker executes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::container::{ContainerEngine, Image};
use crate::ir::TaskId;

/// A task instance ready to execute: every template rendered, every path absolute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Which instance.
    pub task: TaskId,
    /// Attempt number, 0 first (`FLOW_INSTANCE`).
    pub attempt: u32,
    /// `name[index]`, or `name` for a plain task.
    pub label: String,
    /// What to execute.
    pub command: JobCommand,
    /// Working directory.
    pub cwd: PathBuf,
    /// Environment added to flow's own (task `env` and `FLOW_*`).
    pub env: Vec<(String, String)>,
    /// Standard input: a file, or nothing.
    pub stdin: Option<PathBuf>,
    /// Where stdout goes.
    pub stdout: Sink,
    /// Where stderr goes.
    pub stderr: Sink,
    /// A file to write before starting: the chunk of an `each_chunk`
    /// instance, or an item too large for the environment.
    pub chunk: Option<(PathBuf, String)>,
    /// Declared inputs (absolute; may be globs).
    pub inputs: Vec<PathBuf>,
    /// Files the command names that are hashed like inputs: scripts and
    /// programs inside the workflow directory (absolute).
    pub implicit: Vec<PathBuf>,
    /// The workflow directory: fingerprints name files relative to it, so
    /// a moved or copied directory keeps its cache.
    pub base_dir: PathBuf,
    /// Declared outputs (absolute): each must exist after a successful exit.
    pub outputs: Vec<PathBuf>,
    /// Kill the task after this long.
    pub timeout: Option<Duration>,
    /// CPU ids the task was given (for binding).
    pub cpus: Vec<u32>,
    /// GPU ids the task was given (for a container's devices).
    pub gpus: Vec<u32>,
    /// Shell lines run before the command, if the task has any.
    pub setup: Option<Setup>,
    /// The container the task runs in, if any.
    pub container: Option<JobContainer>,
    /// Canonical text of everything that determines the result, for fingerprints.
    pub definition: String,
}

/// A job's setup lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    /// The lines, rendered.
    pub lines: Vec<String>,
    /// Where a failing line's exit status is written (`FLOW_SETUP_STATUS`),
    /// so that the failure is told apart from the command's.
    pub status_file: PathBuf,
}

/// The container a job runs in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobContainer {
    /// The engine chosen for the image.
    pub engine: ContainerEngine,
    /// The image.
    pub image: Image,
}

/// How a job is executed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobCommand {
    /// `sh -c TEXT`.
    Shell(String),
    /// Program and arguments.
    Argv(Vec<String>),
}

impl JobCommand {
    /// The command as text, to find the scripts it names.
    pub fn text(&self) -> crate::scripts::CommandText<'_> {
        match self {
            JobCommand::Shell(text) => crate::scripts::CommandText::Shell(text),
            JobCommand::Argv(args) => crate::scripts::CommandText::Argv(args),
        }
    }
}

/// Destination of an output stream of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sink {
    /// Into the run log.
    Log,
    /// Discarded.
    Null,
    /// Into this file.
    File(PathBuf),
}

/// `path` relative to `base` when it is inside it, else as it is.
pub fn relative<'p>(path: &'p Path, base: &Path) -> &'p Path {
    path.strip_prefix(base).unwrap_or(path)
}
