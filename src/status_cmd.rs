//! `flow status` (one run, live or finished) and `flow runs` (all runs).

use std::io;
use std::path::{Path, PathBuf};

use clap::Args;
use flow_engine::log::{JournalState, JournalStatus, read_journal};
use flow_engine::runtime::alloc::AllocState;
use flow_engine::runtime::run_dir::{RunDir, locate, state_dir};

/// `flow status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The run: its id or a unique prefix [default: the latest].
    pub run: Option<String>,
    /// The workflow whose runs to read [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
}

/// `flow runs`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    /// The workflow whose runs to list [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
}

/// Where a run stands, from its summary or, while it runs, its journal.
struct Standing {
    state: &'static str,
    total: u64,
    succeeded: u64,
    cached: u64,
    failed: u64,
    cancelled: u64,
    running: u64,
    seconds: Option<f64>,
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
                return Ok(Standing {
                    state,
                    total: s.total,
                    succeeded: s.succeeded,
                    cached: s.cached,
                    failed: s.failed,
                    cancelled: s.cancelled,
                    running: 0,
                    seconds: Some(s.seconds),
                });
            }
        }
        let graph = run.read_graph().map_err(|e| e.to_string())?;
        let journal = read_journal(&run.journal()).map_err(|e| e.to_string())?;
        let journal = JournalState::from_records(&journal.records);
        let mut standing = Standing {
            state: if run.is_live() { "running" } else { "crashed" },
            total: graph.instance_count(),
            succeeded: 0,
            cached: 0,
            failed: 0,
            cancelled: 0,
            running: 0,
            seconds: None,
        };
        for (_, entry) in journal.iter() {
            match entry.status {
                JournalStatus::Succeeded => standing.succeeded += 1,
                JournalStatus::Cached => standing.cached += 1,
                JournalStatus::Failed => standing.failed += 1,
                JournalStatus::Cancelled => standing.cancelled += 1,
                JournalStatus::Running | JournalStatus::Lost => standing.running += 1,
            }
        }
        Ok(standing)
    }

    fn queued(&self) -> u64 {
        self.total.saturating_sub(self.succeeded + self.cached + self.failed + self.cancelled + self.running)
    }
}

/// Prints one run's state and counts.
pub fn status(args: &StatusArgs) -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let run = locate(args.workflow.as_deref(), args.run.as_deref(), &cwd)?;
    let s = Standing::of(&run)?;
    let done = s.succeeded + s.cached + s.failed + s.cancelled;
    println!("run {}: {}", run.id, s.state);
    println!(
        "  {done}/{} done: {} succeeded, {} unchanged, {} failed, {} cancelled; {} running, {} queued",
        s.total,
        s.succeeded,
        s.cached,
        s.failed,
        s.cancelled,
        s.running,
        s.queued()
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
    let Ok(file) = run.read_allocs() else { return };
    let Some(queue) = file.queue else { return };
    let count = |state: AllocState| file.allocations.iter().filter(|a| a.state == state).count();
    println!(
        "  {} queue (profile `{}`): {}, {} queued, {} running, {} failed",
        queue.manager.name(),
        queue.profile,
        crate::plan::plural(file.allocations.len() as u64, "allocation"),
        count(AllocState::Queued),
        count(AllocState::Running),
        count(AllocState::Failed)
    );
    if let Some(paused) = queue.paused {
        println!("  {paused}");
    }
}

/// Lists every run, oldest first.
pub fn runs(args: &RunsArgs) -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let state = state_dir(args.workflow.as_deref(), &cwd)?;
    let mut rows =
        vec![["RUN", "STATE", "TASKS", "SUCCEEDED", "UNCHANGED", "FAILED", "CANCELLED", "TIME"].map(String::from)];
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
                continue;
            }
        };
        rows.push([
            run.id.clone(),
            s.state.to_owned(),
            s.total.to_string(),
            s.succeeded.to_string(),
            s.cached.to_string(),
            s.failed.to_string(),
            s.cancelled.to_string(),
            s.seconds.map_or_else(|| "-".to_owned(), |t| format!("{t:.1}s")),
        ]);
    }
    if rows.len() == 1 {
        return Err(format!("no runs in `{}`", display(&state)));
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
