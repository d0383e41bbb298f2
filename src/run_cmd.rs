//! `flow run`: compile, start the run, and show its events — a progress bar
//! on a terminal, plain lines otherwise, NDJSON with `--json`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use flow_engine::ir::Selector;
use flow_engine::runtime::alloc::AllocState;
use flow_engine::runtime::run_dir::RunDir;
use flow_engine::runtime::worker::Status;
use flow_engine::runtime::{Event, RunOptions, Summary};
use indicatif::{ProgressBar, ProgressStyle};

use crate::args::{WorkerArgs, WorkflowArgs};
use crate::failure::Failure;
use crate::load;

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
    /// Accept remote workers on this address, e.g. `0.0.0.0:0` (port 0 picks a free port);
    /// they join with `flow worker --access .flow/runs/<id>/access.json`.
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: Option<String>,
    /// Run no tasks in this process: only on remote workers (needs `--listen` or a profile that listens).
    #[arg(long)]
    pub no_local_worker: bool,
    /// Use the cluster settings of this profile (`flow.profiles.toml` next to the workflow,
    /// or `~/.config/flow/profiles.toml`): an allocation queue, a listen address.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Let the workflow owner's group read the run's files (`.flow` and run
    /// directories 0750 instead of 0700).
    #[arg(long, env = "FLOW_SHARE_WITH_GROUP")]
    pub share_with_group: bool,
    /// When the run ends, however it ends, write its HTML report (see `flow report`)
    /// to FILE [default: `flow-report-<run id>.html` here].
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "")]
    pub report: Option<PathBuf>,
}

/// Runs the workflow; returns the process exit code.
pub fn run(args: &RunArgs) -> Result<u8, Failure> {
    let loaded = load::load(&args.workflow, None)?;
    let (workflow, base_dir) = (loaded.absolute()?, loaded.dir()?);
    let profile = args.profile.as_deref().map(|name| crate::profile::load(&base_dir, name)).transpose()?;
    let listen = args.listen.clone().or_else(|| profile.as_ref().and_then(|p| p.listen.clone()));
    if args.no_local_worker && listen.is_none() {
        return Err(Failure::Usage(
            "`--no-local-worker` needs `--listen` (or a profile with a queue): otherwise nothing runs the tasks".into(),
        ));
    }
    let local = !args.no_local_worker && profile.as_ref().is_none_or(|p| p.local_worker);
    let queue = profile.and_then(|p| p.queue.map(|q| (p.name, q)));
    let only = args.only.iter().map(|s| Selector::parse(s).map_err(Failure::Usage)).collect::<Result<_, _>>()?;
    let options = RunOptions {
        base_dir,
        workflow,
        worker: crate::resources::local(&args.worker)?,
        max_fails: args.max_fails,
        force: args.force,
        only,
        dry_exec: args.dry_exec,
        bind_cpus: args.bind_cpus,
        guard: if args.dry_exec || !local { None } else { crate::guard::start() },
        listen,
        local,
        queue,
        share_with_group: args.share_with_group,
        command_line: std::env::args().collect(),
    };
    let handle = flow_engine::runtime::start(loaded.graph, loaded.source, options)?;
    let mut display = Display::new(args.json);
    let mut run_dir = None;
    for batch in &handle.events {
        for event in &batch {
            if let Event::RunStarted { run_id, run_dir: path, .. } = event {
                run_dir = Some(RunDir { id: run_id.clone(), path: path.clone() });
            }
            display.show(event);
        }
    }
    let summary = handle.join();
    if let Ok(summary) = &summary {
        display.finish(summary);
    }
    let report = match (&args.report, &run_dir) {
        (Some(file), Some(run)) => crate::report_cmd::write(run, Some(file)),
        _ => Ok(()),
    };
    let code = summary?.exit_code();
    match report {
        // The run's own exit code says more than a report that could not be written,
        // unless the run succeeded.
        Err(failure) if code == crate::exit_codes::SUCCESS => Err(failure),
        Err(failure) => {
            crate::report(failure, false);
            Ok(code)
        }
        Ok(()) => Ok(code),
    }
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
                    Event::RunStarted { total, .. } => {
                        bar.set_length(*total);
                        if let Some(text) = notice(event) {
                            bar.println(text);
                        }
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
                    Event::Expanded { count, .. } => {
                        bar.inc_length(*count);
                        if let Some(text) = notice(event) {
                            bar.println(text);
                        }
                    }
                    Event::RunFinished { .. } => bar.finish_and_clear(),
                    other => {
                        if let Some(text) = notice(other) {
                            bar.println(text);
                        }
                    }
                }
                bar.set_message(format!("{running} running · {failed} failed"));
            }
            Display::Plain => {
                if let Some(text) = notice(event).or_else(|| failure_text(event)) {
                    eprintln!("{text}");
                }
            }
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
        let dry = if summary.dry_exec { " (--dry-exec: nothing was executed)" } else { "" };
        eprintln!("run {}: {}{how} {:.1}s{dry}", summary.run_id, parts.join(", "), summary.seconds);
        if summary.failed > 0 {
            eprintln!("see the output of failed tasks with `flow log cat --failed`");
        }
        for error in &summary.io_errors {
            eprintln!("error: {error}");
        }
    }
}

/// A line about the run or its workers, if the event deserves one.
fn notice(event: &Event) -> Option<String> {
    match event {
        Event::RunStarted { run_id, total, run_dir } => {
            let mut text = format!("run {run_id}: {}", crate::plan::plural(*total, "task"));
            let access = run_dir.join("access.json");
            if access.exists() {
                text.push_str(&format!("\nworkers join with: flow worker --access {}", access.display()));
            }
            Some(text)
        }
        Event::Expanded { name, file, count, .. } => {
            Some(format!("+ {name}: {} from {file}", crate::plan::plural(*count, "instance")))
        }
        Event::WorkerJoined { worker, hostname, peer, cpus, gpus } => {
            let (cpus, gpus) = (crate::plan::plural(*cpus as u64, "cpu"), crate::plan::plural(*gpus as u64, "gpu"));
            Some(format!("+ worker {worker} joined: {hostname} ({peer}), {cpus}, {gpus}"))
        }
        Event::WorkerLost { worker, hostname, reason, tasks } => {
            let again = match tasks {
                0 => String::new(),
                1 => "; 1 task runs again elsewhere".to_owned(),
                n => format!("; {n} tasks run again elsewhere"),
            };
            Some(format!("- worker {worker} ({hostname}) left: {reason}{again}"))
        }
        Event::WorkerRefused { peer, reason, more } => Some(match more {
            0 => format!("! refused a connection from {peer}: {reason}"),
            n => format!("! refused a connection from {peer}: {reason} ({n} more from this address before it)"),
        }),
        Event::RefusedQuietly { address, count } => {
            Some(format!("! refused {count} more connections from {address} (said once a minute per address)"))
        }
        Event::Allocation { id, job_id, state, reason } => allocation_text(*id, job_id, *state, reason.as_deref()),
        Event::QueuePaused { reason } => Some(format!("✗ {reason}")),
        Event::Warning { message } => Some(format!("warning: {message}")),
        Event::QueueUnschedulable { task, reason } => Some(format!("! the queue can never run `{task}`: {reason}")),
        _ => None,
    }
}

/// One line about an allocation's new state (none while it is being submitted).
fn allocation_text(id: u32, job_id: &str, state: AllocState, reason: Option<&str>) -> Option<String> {
    let job = if job_id.is_empty() { String::new() } else { format!(" (job {job_id})") };
    let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
    Some(match state {
        AllocState::Queued if job_id.is_empty() => return None,
        AllocState::Queued => format!("+ allocation {id}{job} queued"),
        AllocState::Running => format!("+ allocation {id}{job} started"),
        AllocState::Finished => format!("- allocation {id}{job} finished{why}"),
        AllocState::Failed => format!("✗ allocation {id}{job} failed{why}"),
        AllocState::Cancelled => format!("- allocation {id}{job} cancelled"),
    })
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
