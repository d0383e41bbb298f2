//! The `flow` command line: a thin shell over `flow_engine`. Errors are
//! turned into exit codes here, and printed by [`Failure::print`].

mod alloc_cmd;
mod args;
mod check_cmd;
mod clean_cmd;
mod cli;
mod container_note;
mod exit_codes;
mod explain_cmd;
mod explain_display;
mod failure;
mod graph_cmd;
mod guard_cmd;
mod json;
mod load_workflow;
mod local_resources;
mod log_cmd;
mod memory;
mod plan;
mod plan_commands;
mod profile_arg;
mod report_cmd;
mod run_cmd;
mod run_display;
mod status_cmd;
mod stdout;
mod table;
mod worker_cmd;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::stdout::say;
use args::SchemaKind;
use cli::{Cli, Color, Command};
use failure::Failure;
use load_workflow::Loaded;

/// mimalloc frees memory across threads without the arena locks of the
/// system allocator: a job is rendered on the driver's thread and dropped
/// on a connection's. Built without transparent huge pages (`no_thp`): its
/// arenas asked for them, and each first touch of a 2 MiB page (again after
/// every purge) cost the kernel a 2 MiB clear, often a compaction — with 64
/// workers on one machine, their kernel time doubled their CPU per task.
/// It is told to return freed pages sooner ([`memory`]).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runs = matches!(cli.command, Command::Run(_) | Command::Worker(_));
    memory::return_freed_memory(if runs { memory::PURGE_DELAY_MS } else { 0 });
    // A run keeps going when its `--json` reader goes away; other commands
    // just end, like any Unix tool, when their output pipe closes.
    if !runs {
        restore_sigpipe();
    }
    let color = match cli.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal(),
    };
    // A panic is a bug: its message is printed by the default hook, and
    // the exit code says so instead of Rust's 101.
    let result = std::panic::catch_unwind(|| dispatch(&cli))
        .unwrap_or_else(|_| Err(Failure::Internal("flow panicked".to_owned())));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            let code = failure.exit_code();
            failure.print(color);
            ExitCode::from(code)
        }
    }
}

/// Runs the command `cli` names; returns its exit code.
fn dispatch(cli: &Cli) -> Result<u8, Failure> {
    match &cli.command {
        Command::Run(args) => run_cmd::run(args),
        Command::Status(args) => status_cmd::status(args).map(|()| exit_codes::SUCCESS),
        Command::Runs(args) => status_cmd::runs(args).map(|()| exit_codes::SUCCESS),
        Command::Clean(args) => clean_cmd::clean(args).map(|()| exit_codes::SUCCESS),
        Command::Worker(args) => worker_cmd::worker(args),
        Command::Guard => {
            guard_cmd::serve();
            Ok(exit_codes::SUCCESS)
        }
        Command::Alloc(args) => alloc_cmd::alloc(args).map(|()| exit_codes::SUCCESS),
        Command::Workers(args) => worker_cmd::workers(args).map(|()| exit_codes::SUCCESS),
        Command::Explain(args) => explain_cmd::run(args).map(|()| exit_codes::SUCCESS),
        Command::Check(args) => check_cmd::check(args),
        Command::Plan(args) if !args.commands.is_empty() => {
            load_workflow::load(&args.workflow, None).and_then(|loaded| {
                stdout::print(plan_commands::commands(&loaded, &args.commands)?)?;
                Ok(exit_codes::SUCCESS)
            })
        }
        Command::Plan(args) if args.why => load_workflow::load(&args.workflow, None).and_then(|loaded| {
            plan::why(&loaded, args.json, args.instances)?;
            Ok(exit_codes::SUCCESS)
        }),
        Command::Plan(args) => load_workflow::load(&args.workflow, None).and_then(|loaded| {
            for (at, message) in container_note::missing_images(&loaded, None) {
                let at = at.map(|at| format!("{}: ", loaded.source.position(at))).unwrap_or_default();
                say!("warning: {at}{message}");
            }
            if args.json {
                print_json(&loaded.graph)?;
            } else {
                stdout::print(plan::summary(&loaded.graph))?;
            }
            Ok(exit_codes::SUCCESS)
        }),
        Command::Graph(args) => load_workflow::load(&args.workflow, None).and_then(|Loaded { graph, .. }| {
            stdout::print(graph_cmd::render(&graph, args.format, args.instances))?;
            Ok(exit_codes::SUCCESS)
        }),
        Command::Log(args) => log_cmd::run(args).map(|()| exit_codes::SUCCESS),
        Command::Report(args) => report_cmd::report(args).map(|()| exit_codes::SUCCESS),
        Command::Schema { kind } => {
            let schema = match kind {
                SchemaKind::Workflow => flow_engine::spec::json_schema(),
                SchemaKind::Output => json::schema(),
            };
            stdout::print(format_args!("{schema:#}\n"))?;
            Ok(exit_codes::SUCCESS)
        }
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "flow", &mut script);
            stdout::print(String::from_utf8_lossy(&script))?;
            Ok(exit_codes::SUCCESS)
        }
    }
}

fn print_json(graph: &flow_engine::ir::Graph) -> Result<(), Failure> {
    stdout::to_stdout(|out| {
        serde_json::to_writer_pretty(&mut *out, graph)?;
        writeln!(out)
    })
}

/// Lets `flow … | head` end flow quietly, as it ends other Unix tools,
/// instead of turning the closed pipe into a write error.
#[allow(unsafe_code)]
fn restore_sigpipe() {
    use nix::sys::signal::{SigHandler, Signal, signal};
    // SAFETY: called at the start of `main`, before any other thread exists;
    // restoring the default action installs no handler code.
    unsafe {
        let _ = signal(Signal::SIGPIPE, SigHandler::SigDfl);
    }
}
