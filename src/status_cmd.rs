//! `flow status` (one run, live or finished) and `flow runs` (all runs).

use std::io;
use std::path::{Path, PathBuf};

use clap::Args;
use flow_engine::log::{JournalState, read_journal};
use flow_engine::runtime::alloc::AllocState;
use flow_engine::runtime::links::WorkerInfo;
use flow_engine::runtime::run_dir::{RunDir, locate, state_dir};
use schemars::JsonSchema;
use serde::Serialize;

use crate::json::{self, Counts, RunState};

/// `flow status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The run: its id or a unique prefix [default: the latest].
    pub run: Option<String>,
    /// The workflow whose runs to read [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
    /// One JSON document: the run's state, counts, workers and queue.
    #[arg(long)]
    pub json: bool,
}

/// `flow runs`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    /// The workflow whose runs to list [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
    /// One JSON document: `{"runs": [...]}`, oldest first.
    #[arg(long)]
    pub json: bool,
}

/// Where a run stands, from its summary or, while it runs, its journal:
/// what `flow status --json` prints, and each run of `flow runs --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunStanding {
    /// The run's id.
    pub run_id: String,
    /// Where it stands.
    pub state: RunState,
    /// A `--dry-exec` run: nothing was executed.
    pub dry_exec: bool,
    /// Its instances by state (absent for a damaged run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// Its wall time in µs, once it ended.
    pub duration_us: Option<u64>,
    /// Why its files cannot be read (a damaged run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A run's standing, for its text: the state in words and the counts.
struct Standing {
    state: &'static str,
    counts: Counts,
    seconds: Option<f64>,
    standing: RunStanding,
}

impl Standing {
    fn of(run: &RunDir) -> Result<Standing, String> {
        match run.read_summary() {
            Err(e) if e.kind() == io::ErrorKind::InvalidData => return Err(e.to_string()),
            Err(_) => {}
            Ok(s) => {
                let state = match (s.exit_code(), s.dry_exec) {
                    (0, false) => "succeeded",
                    (0, true) => "dry (nothing ran)",
                    (130, _) => "interrupted",
                    (_, false) => "failed",
                    (_, true) => "dry, failed",
                };
                let counts = Counts::of_summary(&s);
                let standing = RunStanding {
                    run_id: run.id.clone(),
                    state: RunState::of_summary(&s),
                    dry_exec: s.dry_exec,
                    counts: Some(counts.clone()),
                    duration_us: Some((s.seconds * 1e6).round() as u64),
                    error: None,
                };
                return Ok(Standing { state, counts, seconds: Some(s.seconds), standing });
            }
        }
        let graph = run.read_graph().map_err(|e| e.to_string())?;
        let journal = read_journal(&run.journal()).map_err(|e| e.to_string())?;
        let counts = Counts::of_journal(graph.instance_count(), &JournalState::from_records(&journal.records));
        let live = run.is_live();
        let standing = RunStanding {
            run_id: run.id.clone(),
            state: if live { RunState::Running } else { RunState::Crashed },
            dry_exec: run.read_meta().is_ok_and(|meta| meta.dry_exec),
            counts: Some(counts.clone()),
            duration_us: None,
            error: None,
        };
        Ok(Standing { state: if live { "running" } else { "crashed" }, counts, seconds: None, standing })
    }
}

/// `flow status --json`: the run's standing, its workers and its queue.
#[derive(Serialize)]
struct StatusReport {
    #[serde(flatten)]
    standing: RunStanding,
    /// The workers of a live run.
    workers: Vec<WorkerInfo>,
    /// The run's allocation queue, if it has one.
    queue: Option<QueueSummary>,
    /// The run directory.
    dir: PathBuf,
}

/// `flow runs --json`: every run, oldest first.
#[derive(Serialize)]
struct RunList {
    runs: Vec<RunStanding>,
}

/// A run's queue in `flow status --json`.
#[derive(Serialize)]
struct QueueSummary {
    manager: &'static str,
    profile: String,
    allocations: usize,
    queued: usize,
    running: usize,
    failed: usize,
    paused: Option<String>,
}

/// Prints one run's state and counts.
pub fn status(args: &StatusArgs) -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let run = locate(args.workflow.as_deref(), args.run.as_deref(), &cwd)?;
    let s = Standing::of(&run)?;
    if args.json {
        let report = StatusReport {
            standing: s.standing,
            workers: if run.is_live() { run.read_workers().unwrap_or_default() } else { Vec::new() },
            queue: queue_summary(&run),
            dir: run.path.clone(),
        };
        return json::write_document(&mut io::stdout().lock(), &report).map_err(|e| e.to_string());
    }
    let c = &s.counts;
    println!("run {}: {}", run.id, s.state);
    println!(
        "  {}/{} done: {} succeeded, {} unchanged, {} failed, {} cancelled; {} running, {} queued",
        c.done(),
        c.total,
        c.succeeded,
        c.cached,
        c.failed,
        c.cancelled,
        c.running,
        c.queued
    );
    if let Some(secs) = s.seconds {
        println!("  took {secs:.1}s");
    }
    if run.is_live() {
        workers(&run);
    }
    allocations(&run);
    println!("  {}", run.path.display());
    Ok(())
}

/// The workers of a live run, one line each.
fn workers(run: &RunDir) {
    let Ok(workers) = run.read_workers() else { return };
    if workers.is_empty() {
        println!("  no worker connected");
        return;
    }
    println!("  {} connected:", crate::plan::plural(workers.len() as u64, "worker"));
    for w in workers {
        let job = w.allocation.map(|j| format!(", job {j}")).unwrap_or_default();
        let (cpus, gpus) = (crate::plan::plural(w.cpus as u64, "cpu"), crate::plan::plural(w.gpus as u64, "gpu"));
        println!("    {} {} ({cpus}, {gpus}{job}): {} running", w.id, w.hostname, w.running);
    }
}

/// A line about the run's allocations, if it has a queue.
fn allocations(run: &RunDir) {
    let Some(q) = queue_summary(run) else { return };
    println!(
        "  {} queue (profile `{}`): {}, {} queued, {} running, {} failed",
        q.manager,
        q.profile,
        crate::plan::plural(q.allocations as u64, "allocation"),
        q.queued,
        q.running,
        q.failed
    );
    if let Some(paused) = q.paused {
        println!("  {paused}");
    }
}

/// The run's queue and its allocations by state, if it has a queue.
fn queue_summary(run: &RunDir) -> Option<QueueSummary> {
    let file = run.read_allocs().ok()?;
    let queue = file.queue?;
    let count = |state: AllocState| file.allocations.iter().filter(|a| a.state == state).count();
    Some(QueueSummary {
        manager: queue.manager.name(),
        profile: queue.profile,
        allocations: file.allocations.len(),
        queued: count(AllocState::Queued),
        running: count(AllocState::Running),
        failed: count(AllocState::Failed),
        paused: queue.paused,
    })
}

/// Lists every run, oldest first.
pub fn runs(args: &RunsArgs) -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let state = state_dir(args.workflow.as_deref(), &cwd)?;
    let mut rows =
        vec![["RUN", "STATE", "TASKS", "SUCCEEDED", "UNCHANGED", "FAILED", "CANCELLED", "TIME"].map(String::from)];
    let mut standings = Vec::new();
    for run in RunDir::list(&state) {
        let s = match Standing::of(&run) {
            Ok(s) => s,
            Err(why) => {
                // A run whose files are damaged is listed, not hidden.
                eprintln!("warning: run {}: {why}", run.id);
                let mut row = ["-"; 8].map(String::from);
                row[0].clone_from(&run.id);
                row[1] = "damaged".to_owned();
                rows.push(row);
                standings.push(RunStanding {
                    run_id: run.id.clone(),
                    state: RunState::Damaged,
                    dry_exec: false,
                    counts: None,
                    duration_us: None,
                    error: Some(why),
                });
                continue;
            }
        };
        let c = &s.counts;
        rows.push([
            run.id.clone(),
            s.state.to_owned(),
            c.total.to_string(),
            c.succeeded.to_string(),
            c.cached.to_string(),
            c.failed.to_string(),
            c.cancelled.to_string(),
            s.seconds.map_or_else(|| "-".to_owned(), |t| format!("{t:.1}s")),
        ]);
        standings.push(s.standing);
    }
    if rows.len() == 1 {
        return Err(format!("no runs in `{}`", display(&state)));
    }
    if args.json {
        return json::write_document(&mut io::stdout().lock(), &RunList { runs: standings }).map_err(|e| e.to_string());
    }
    let widths: Vec<usize> = (0..8).map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0)).collect();
    for row in &rows {
        let line: Vec<String> = row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
        println!("{}", line.join("  ").trim_end());
    }
    Ok(())
}

fn display(path: &Path) -> String {
    path.display().to_string()
}
