//! The `flow` command line: a thin shell over `flow_engine`. Errors are
//! printed here, in one place, and turned into exit codes.

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
mod plan;
mod plan_commands;
mod profile_arg;
mod report_cmd;
mod run_cmd;
mod run_display;
mod status_cmd;
mod stdout;
mod worker_cmd;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use flow_engine::diag::MAX_SHOWN;
use miette::{GraphicalReportHandler, GraphicalTheme};

use args::SchemaKind;
use cli::{Cli, Color, Command};
use failure::Failure;
use load_workflow::Loaded;

/// mimalloc frees memory across threads without the arena locks of the
/// system allocator: a job is rendered on the driver's thread and dropped
/// on a connection's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A run keeps going when its `--json` reader goes away; other commands
    // just end, like any Unix tool, when their output pipe closes.
    if !matches!(cli.command, Command::Run(_) | Command::Worker(_)) {
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
            report(failure, color);
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
                print!("{}", plan_commands::commands(&loaded, &args.commands)?);
                Ok(exit_codes::SUCCESS)
            })
        }
        Command::Plan(args) if args.why => load_workflow::load(&args.workflow, None).and_then(|loaded| {
            plan::why(&loaded, args.json, args.instances)?;
            Ok(exit_codes::SUCCESS)
        }),
        Command::Plan(args) => load_workflow::load(&args.workflow, None).map(|loaded| {
            for (at, message) in container_note::missing_images(&loaded, None) {
                let at = at.map(|at| format!("{}: ", loaded.source.position(at))).unwrap_or_default();
                eprintln!("warning: {at}{message}");
            }
            if args.json {
                print_json(&loaded.graph);
            } else {
                print!("{}", plan::summary(&loaded.graph));
            }
            exit_codes::SUCCESS
        }),
        Command::Graph(args) => load_workflow::load(&args.workflow, None).map(|Loaded { graph, .. }| {
            print!("{}", graph_cmd::render(&graph, args.format, args.instances));
            exit_codes::SUCCESS
        }),
        Command::Log(args) => log_cmd::run(args).map(|()| exit_codes::SUCCESS),
        Command::Report(args) => report_cmd::report(args).map(|()| exit_codes::SUCCESS),
        Command::Schema { kind } => {
            let schema = match kind {
                SchemaKind::Workflow => flow_engine::spec::json_schema(),
                SchemaKind::Output => json::schema(),
            };
            println!("{schema:#}");
            Ok(exit_codes::SUCCESS)
        }
        Command::Completions { shell } => {
            clap_complete::generate(*shell, &mut Cli::command(), "flow", &mut std::io::stdout());
            Ok(exit_codes::SUCCESS)
        }
    }
}

fn print_json(graph: &flow_engine::ir::Graph) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`flow plan --json | head`) is not an error worth reporting.
    if serde_json::to_writer_pretty(&mut out, graph).is_ok() {
        let _ = writeln!(out);
    }
}

/// Prints a failure to stderr: the first [`MAX_SHOWN`] diagnostics with their
/// snippets, how many more there are, then a summary line.
fn report(failure: Failure, color: bool) {
    match failure {
        Failure::Usage(message) | Failure::Io(message) => eprintln!("error: {message}"),
        Failure::Internal(message) => {
            eprintln!("error: {message}; this is a bug in flow, please report it");
        }
        Failure::Invalid { source, diagnostics } => {
            let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
            let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
            let mut out = String::new();
            for d in diagnostics.iter().take(MAX_SHOWN) {
                let _ = handler.render_report(&mut out, &d.report(&source));
            }
            let n = diagnostics.len();
            if n > MAX_SHOWN {
                out.push_str(&format!("… and {} more\n", n - MAX_SHOWN));
            }
            let problems = flow_engine::units::plural(n as u64, "problem");
            eprint!("{out}");
            eprintln!("error: {problems} in {}", source.name);
        }
    }
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
