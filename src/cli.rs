//! The command line, declared with clap: [`Cli`] and its [`Command`]s,
//! each taking the arguments its command file declares.

use clap::{Parser, Subcommand, ValueEnum};

use crate::args::{CheckArgs, GraphArgs, PlanArgs, SchemaKind};

/// flow: describe a task graph in one file, check it, plan it, run it anywhere.
#[derive(Debug, Parser)]
#[command(name = "flow", version, about, propagate_version = true)]
pub struct Cli {
    /// When to use colors (`NO_COLOR` is respected by `auto`).
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Color choice.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Color {
    /// Colors on a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a workflow: compile it, execute its tasks, log their output.
    Run(crate::run_cmd::RunArgs),
    /// Show where a run stands: counts of done, failed, running and queued tasks.
    Status(crate::status_cmd::StatusArgs),
    /// List the runs of a workflow.
    Runs(crate::status_cmd::RunsArgs),
    /// Remove old runs' directories, keeping those a new run still reads to decide what to skip.
    Clean(crate::clean_cmd::CleanArgs),
    /// Join a run as a worker: `flow worker --access .flow/runs/<id>/access.json`.
    Worker(crate::worker_cmd::WorkerCmdArgs),
    /// Ends the tasks of the flow process that started it if that process dies (internal).
    #[command(hide = true)]
    Guard,
    /// List the workers of a run.
    Workers(crate::worker_cmd::WorkersArgs),
    /// Show a run's cluster allocations (`list`, `log ID`), or a queue's script (`--dry-run`).
    Alloc(crate::alloc_cmd::AllocArgs),
    /// Say why a task is still waiting, or what happened to it: `flow explain score[3]`.
    Explain(crate::explain_cmd::ExplainArgs),
    /// Validate a workflow and report every problem at once.
    Check(CheckArgs),
    /// Summarise the compiled graph, or print it as JSON.
    Plan(PlanArgs),
    /// Draw the task graph as dot, mermaid or JSON.
    Graph(GraphArgs),
    /// Read a run's log: list its tasks, print, follow, summarise, grep or export their output.
    Log(crate::log_cmd::LogArgs),
    /// Write one self-contained HTML page about a run: summary, tasks, failures, timeline, graph.
    Report(crate::report_cmd::ReportArgs),
    /// Print a JSON Schema: of the workflow file, or of the `--json` output.
    Schema {
        /// Which schema.
        #[arg(value_enum, default_value_t = SchemaKind::Workflow)]
        kind: SchemaKind,
    },
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}
