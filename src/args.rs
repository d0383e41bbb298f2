//! The arguments several commands share, declared with clap: which
//! workflow, how to check, plan and draw it, and the worker options.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Which workflow, and how to set its variables.
#[derive(Debug, Args)]
pub struct WorkflowArgs {
    /// The workflow file [default: workflow.toml, workflow.yaml or workflow.yml].
    pub workflow: Option<PathBuf>,
    /// Override a variable: `-v chunk=500` (repeatable).
    #[arg(short = 'v', long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Read variables from a TOML, YAML or JSON file (before `-v`).
    #[arg(long = "vars", value_name = "FILE")]
    pub vars_file: Option<PathBuf>,
    /// The most instances one task may expand to; a larger `range`, file or
    /// `matrix` is an error at its key.
    #[arg(long, value_name = "N", env = "FLOW_MAX_INSTANCES", default_value_t = flow_engine::compile::MAX_INSTANCES)]
    pub max_instances: u64,
}

/// `flow check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub workflow: WorkflowArgs,
    #[command(flatten)]
    pub worker: WorkerArgs,
    /// Also check this profile, and that its queue's workers can run every task.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// One JSON document on stdout: every problem (or note) with its code,
    /// file, line and column; the exit code is the same.
    #[arg(long)]
    pub json: bool,
}

/// A worker's resources: for `check`, the largest worker tasks must fit on;
/// for `run` and `worker`, what the worker owns (default: detected).
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// CPUs of the worker (a whole number for `run` and `worker`).
    #[arg(long)]
    pub cpus: Option<f64>,
    /// GPUs of the worker (a whole number for `run` and `worker`).
    #[arg(long)]
    pub gpus: Option<f64>,
    /// Memory of the worker, e.g. "64 GiB".
    #[arg(long)]
    pub memory: Option<String>,
    /// A custom resource of the worker: `fpga=2` (repeatable).
    #[arg(long = "resource", value_name = "NAME=AMOUNT")]
    pub resources: Vec<String>,
}

impl WorkerArgs {
    /// `--memory` in bytes, if given, or what is wrong with it.
    pub fn memory_bytes(&self) -> Result<Option<u64>, String> {
        let parse = |m: &String| flow_engine::units::parse_size(m).map_err(|e| format!("`--memory {m}`: {e}"));
        self.memory.as_ref().map(parse).transpose()
    }
}

/// `flow plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub workflow: WorkflowArgs,
    /// Print the graph IR as JSON (with --why: the plan, one task per line,
    /// in the versioned output vocabulary).
    #[arg(long)]
    pub json: bool,
    /// For every task, how many instances a run would run and why, compared
    /// with the earlier runs as `flow run` compares them.
    #[arg(long)]
    pub why: bool,
    /// With --why: name every instance that would run, with its reason.
    #[arg(long, requires = "why")]
    pub instances: bool,
    /// Print the command a worker would start for these instances, as the
    /// shell gets it: environment, setup lines, container (repeatable:
    /// `--command 'score[3]' --command combine`).
    #[arg(long = "command", alias = "commands", value_name = "SELECTOR", conflicts_with_all = ["json", "why"])]
    pub commands: Vec<String>,
}

/// `flow graph`.
#[derive(Debug, Args)]
pub struct GraphArgs {
    #[command(flatten)]
    pub workflow: WorkflowArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
    pub format: GraphFormat,
    /// Draw every instance instead of one node per task.
    #[arg(long)]
    pub instances: bool,
}

/// `flow graph --format`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GraphFormat {
    /// Graphviz dot.
    Dot,
    /// Mermaid flowchart.
    Mermaid,
    /// JSON nodes and edges.
    Json,
}

/// `flow schema KIND`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SchemaKind {
    /// The workflow file (`schema/workflow.schema.json`).
    Workflow,
    /// The shared objects of every `--json` output (`schema/output.schema.json`).
    Output,
}

/// The run a command reads, named as every command names it: `--run ID`.
/// The positional `RUN` of earlier versions still works, as an alias.
#[derive(Debug, Args)]
pub struct RunName {
    /// The run: its id or a unique prefix of it [default: the latest].
    #[allow(rustdoc::broken_intra_doc_links, reason = "`[default: …]` is help text, not a link")]
    #[arg(long = "run", value_name = "ID")]
    run: Option<String>,
    /// The run, as with `--run`.
    #[arg(value_name = "RUN", conflicts_with = "run", hide = true)]
    positional: Option<String>,
}

impl RunName {
    /// The id or prefix given, by `--run` or positionally.
    pub fn id(&self) -> Option<&str> {
        self.run.as_deref().or(self.positional.as_deref())
    }
}
