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
    /// Environment added to flow's own: the task's `env`, and variables
    /// of the run's making; [`Job::environment`] adds the `FLOW_*` ones.
    pub env: Vec<(String, String)>,
    /// What the instance's `FLOW_*` variables say (none for `[finally]`,
    /// whose variables are in `env`).
    pub flow: Option<FlowVars>,
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

/// What a task instance's `FLOW_*` variables are made of. The worker that
/// runs the job writes the variables ([`Job::environment`]), so the
/// coordinator sends a few values, not a few dozen strings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowVars {
    /// `FLOW_TASK`: the task's name.
    pub task: String,
    /// `FLOW_INDEX`.
    pub index: i64,
    /// `FLOW_SUBINDEX`, for a part of a nested expansion.
    pub subindex: Option<u64>,
    /// `FLOW_ITEM`; empty when the item is in a file.
    pub item: String,
    /// Whether `FLOW_ITEM_FILE` names the job's chunk file, which then
    /// holds an item too large for the environment.
    pub item_in_file: bool,
    /// Whether `FLOW_CHUNK` names the job's chunk file.
    pub chunk: bool,
    /// `FLOW_RUN_DIR`.
    pub run_dir: PathBuf,
    /// `FLOW_VARIANT`.
    pub variant: u32,
}

impl Job {
    /// A job in `base` running `true`, reading `inputs` and `stdin` and
    /// writing `outputs` (each relative to `base`).
    #[cfg(test)]
    pub(crate) fn reading(base: &Path, inputs: &[&str], stdin: Option<&str>, outputs: &[&str]) -> Job {
        Job {
            task: TaskId::new(crate::ir::GroupId(0), 0),
            attempt: 0,
            label: "a".into(),
            command: JobCommand::Shell("true".into()),
            cwd: base.to_path_buf(),
            env: Vec::new(),
            flow: None,
            stdin: stdin.map(|s| base.join(s)),
            stdout: Sink::Log,
            stderr: Sink::Log,
            chunk: None,
            inputs: inputs.iter().map(|i| base.join(i)).collect(),
            implicit: Vec::new(),
            base_dir: base.to_path_buf(),
            outputs: outputs.iter().map(|o| base.join(o)).collect(),
            timeout: None,
            cpus: Vec::new(),
            gpus: Vec::new(),
            setup: None,
            container: None,
            definition: String::new(),
        }
    }

    /// The variables added to flow's own environment for the job's
    /// process: its `env`, then the `FLOW_*` ones (`FLOW_INSTANCE`,
    /// `FLOW_CPUS`, `FLOW_GPUS` and `CUDA_VISIBLE_DEVICES` — a task without
    /// GPUs must not see, and grab, the worker's devices — and
    /// `FLOW_SETUP_STATUS` for a job with setup lines).
    pub fn environment(&self) -> Vec<(String, String)> {
        let mut env = self.env.clone();
        let path = |p: &Path| p.display().to_string();
        if let Some(flow) = &self.flow {
            let ids = |ids: &[u32]| ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
            let gpus = ids(&self.gpus);
            env.extend([
                ("FLOW_TASK".to_owned(), flow.task.clone()),
                ("FLOW_INDEX".to_owned(), flow.index.to_string()),
                ("FLOW_ITEM".to_owned(), flow.item.clone()),
                ("FLOW_INSTANCE".to_owned(), self.attempt.to_string()),
                ("FLOW_RUN_DIR".to_owned(), path(&flow.run_dir)),
                ("FLOW_VARIANT".to_owned(), flow.variant.to_string()),
                ("FLOW_CPUS".to_owned(), ids(&self.cpus)),
                ("FLOW_GPUS".to_owned(), gpus.clone()),
                ("CUDA_VISIBLE_DEVICES".to_owned(), gpus),
            ]);
            if let Some(sub) = flow.subindex {
                env.push(("FLOW_SUBINDEX".to_owned(), sub.to_string()));
            }
            let file = self.chunk.as_ref().map(|(file, _)| path(file));
            if let Some(file) = file.clone().filter(|_| flow.chunk) {
                env.push(("FLOW_CHUNK".to_owned(), file));
            }
            if let Some(file) = file.filter(|_| flow.item_in_file) {
                env.push(("FLOW_ITEM_FILE".to_owned(), file));
            }
        }
        if let Some(setup) = &self.setup {
            env.push(("FLOW_SETUP_STATUS".to_owned(), path(&setup.status_file)));
        }
        env
    }
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

impl Sink {
    /// The file the stream goes to, if it goes to one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Sink::File(path) => Some(path),
            Sink::Log | Sink::Null => None,
        }
    }
}

/// `path` relative to `base` when it is inside it, else as it is.
pub fn relative<'p>(path: &'p Path, base: &Path) -> &'p Path {
    path.strip_prefix(base).unwrap_or(path)
}
