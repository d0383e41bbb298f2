//! `flow run`: compile, start the run, and show its events — a progress bar
//! on a terminal, plain lines otherwise, NDJSON with `--json`.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use clap::Args;
use flow_engine::compile::Selector;
use flow_engine::runtime::core::WorkerResources;
use flow_engine::runtime::detect::detect;
use flow_engine::runtime::worker::Status;
use flow_engine::runtime::{Event, RunOptions, Summary};
use indicatif::{ProgressBar, ProgressStyle};

use crate::args::{WorkerArgs, WorkflowArgs};
use crate::load::{self, Failure};

/// `flow run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub workflow: WorkflowArgs,
    /// Resources of the embedded worker (default: this machine's).
    #[command(flatten)]
    pub worker: WorkerArgs,
    /// Stop starting new tasks after this many instances failed.
    #[arg(long, value_name = "N")]
    pub max_fails: Option<u64>,
    /// Keep running independent tasks after a failure (the default; see `--max-fails`).
    #[arg(long)]
    pub keep_going: bool,
    /// Rerun every instance, even those an earlier run finished unchanged.
    #[arg(long)]
    pub force: bool,
    /// Rerun these instances and everything downstream: `score[3]`, `expand` (repeatable).
    #[arg(long, value_name = "SELECTOR")]
    pub only: Vec<String>,
    /// Print events as JSON lines on stdout instead of a progress display.
    #[arg(long)]
    pub json: bool,
    /// Complete every task instantly without starting processes (measures the engine).
    #[arg(long)]
    pub dry_exec: bool,
    /// Bind each task to the CPU ids it was given.
    #[arg(long)]
    pub bind_cpus: bool,
}

/// Runs the workflow; returns the process exit code.
pub fn run(args: &RunArgs) -> Result<u8, Failure> {
    let loaded = load::load(&args.workflow, None)?;
    let workflow = loaded.path.canonicalize().map_err(|e| Failure::Usage(format!("{}: {e}", loaded.path.display())))?;
    let base_dir = workflow.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
    let only = args.only.iter().map(|s| Selector::parse(s).map_err(Failure::Usage)).collect::<Result<_, _>>()?;
    let options = RunOptions {
        base_dir,
        workflow,
        worker: worker(&args.worker)?,
        max_fails: args.max_fails,
        force: args.force,
        only,
        dry_exec: args.dry_exec,
        bind_cpus: args.bind_cpus,
    };
    let handle = flow_engine::runtime::start(loaded.graph, loaded.source, options).map_err(|e| match e {
        flow_engine::runtime::RunError::Unschedulable(lines) => Failure::Usage(lines.join("\nerror: ")),
        other => Failure::Usage(other.to_string()),
    })?;
    let mut display = Display::new(args.json);
    for batch in &handle.events {
        for event in &batch {
            display.show(event);
        }
    }
    let summary = handle.join().map_err(|e| Failure::Usage(e.to_string()))?;
    display.finish(&summary);
    Ok(summary.exit_code())
}

/// The embedded worker's resources: detected, then narrowed by the flags.
fn worker(args: &WorkerArgs) -> Result<WorkerResources, Failure> {
    let found = detect();
    let whole = |flag: &str, v: f64| {
        if v.fract() == 0.0 && v >= 0.0 {
            Ok(v as usize)
        } else {
            Err(Failure::Usage(format!("`--{flag}` takes a whole number")))
        }
    };
    let cpus = match args.cpus {
        Some(n) => {
            let n = whole("cpus", n)?;
            // More CPUs than the machine has are allowed (oversubscription by choice).
            let next = found.cpus.iter().max().map_or(0, |m| m + 1);
            found.cpus.iter().copied().chain(next..).take(n).collect()
        }
        None => found.cpus,
    };
    let gpus = match args.gpus {
        Some(n) => {
            let next = found.gpus.iter().max().map_or(0, |m| m + 1);
            found.gpus.iter().copied().chain(next..).take(whole("gpus", n)?).collect()
        }
        None => found.gpus,
    };
    let memory = match &args.memory {
        Some(m) => flow_engine::compile::parse_size(m).map_err(|e| Failure::Usage(format!("`--memory {m}`: {e}")))?,
        None => found.memory,
    };
    let custom = load::custom_resources(&args.resources)?;
    Ok(WorkerResources { cpus, gpus, memory, custom, deadline: None })
}

/// How events are shown.
enum Display {
    Json,
    Bar { bar: ProgressBar, running: u64, failed: u64 },
    Plain,
}

impl Display {
    fn new(json: bool) -> Self {
        if json {
            Display::Json
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} · {msg} · {per_sec} · ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            Display::Bar { bar, running: 0, failed: 0 }
        } else {
            Display::Plain
        }
    }

    fn show(&mut self, event: &Event) {
        match self {
            Display::Json => {
                let mut out = std::io::stdout().lock();
                if serde_json::to_writer(&mut out, event).is_ok() {
                    let _ = writeln!(out);
                }
            }
            Display::Bar { bar, running, failed } => {
                match event {
                    Event::RunStarted { total, run_id, .. } => {
                        bar.set_length(*total);
                        bar.println(format!("run {run_id}"));
                    }
                    Event::TaskStarted { .. } => *running += 1,
                    Event::TaskFinished { retrying, status, .. } => {
                        *running = running.saturating_sub(1);
                        if !retrying {
                            bar.inc(1);
                        }
                        if matches!(status, Status::Failed { .. }) && !retrying {
                            *failed += 1;
                        }
                        if let Some(text) = failure_text(event) {
                            bar.println(text);
                        }
                    }
                    Event::TaskCancelled { .. } => bar.inc(1),
                    Event::RunFinished { .. } => bar.finish_and_clear(),
                }
                bar.set_message(format!("{running} running · {failed} failed"));
            }
            Display::Plain => match event {
                Event::RunStarted { run_id, total, .. } => {
                    eprintln!("run {run_id}: {}", crate::plan::plural(*total, "task"))
                }
                _ => {
                    if let Some(text) = failure_text(event) {
                        eprintln!("{text}");
                    }
                }
            },
        }
    }

    fn finish(&self, summary: &Summary) {
        if matches!(self, Display::Json) {
            return;
        }
        let mut parts = vec![format!("{} succeeded", summary.succeeded)];
        for (n, what) in
            [(summary.cached, "unchanged (skipped)"), (summary.failed, "failed"), (summary.cancelled, "cancelled")]
        {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        let how = if summary.interrupted { "; interrupted after" } else { " in" };
        eprintln!("run {}: {}{how} {:.1}s", summary.run_id, parts.join(", "), summary.seconds);
        if summary.failed > 0 {
            eprintln!("see the output of failed tasks with `flow log cat --failed`");
        }
    }
}

/// The report of a failed attempt: name, reason, source line, stderr tail.
fn failure_text(event: &Event) -> Option<String> {
    let Event::TaskFinished {
        label,
        status: Status::Failed { reason, .. },
        retrying,
        stderr_tail,
        location,
        attempt,
        ..
    } = event
    else {
        return None;
    };
    let mut text = if *retrying {
        format!("! {label} failed ({reason}), retrying (attempt {})", attempt + 1)
    } else {
        format!("✗ {label} failed: {reason} ({location})")
    };
    if !*retrying {
        let lines: Vec<&str> = stderr_tail.lines().collect();
        for line in &lines[lines.len().saturating_sub(10)..] {
            text.push_str("\n  │ ");
            text.push_str(line);
        }
    }
    Some(text)
}
