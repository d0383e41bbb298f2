//! `flow status` (one run, live or finished) and `flow runs` (all runs).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use flow_engine::log::{JournalState, JournalStatus, read_journal};
use flow_engine::runtime::{AllocState, AllocsFile, RunDir, WorkerInfo, locate, state_dir};

use crate::stdout::to_stdout;

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

/// What `flow status` shows of one run.
struct RunStatus {
    id: String,
    path: PathBuf,
    standing: Standing,
    /// The connected workers of a live run, when `workers.json` reads.
    workers: Option<Vec<WorkerInfo>>,
    /// The run's allocations, when it has a queue.
    allocs: Option<AllocsFile>,
}

/// Prints one run's state and counts.
pub fn status(args: &StatusArgs) -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let run = locate(args.workflow.as_deref(), args.run.as_deref(), &cwd)?;
    let status = RunStatus {
        standing: Standing::of(&run)?,
        workers: if run.is_live() { run.read_workers().ok() } else { None },
        allocs: run.read_allocs().ok().filter(|file| file.queue.is_some()),
        id: run.id,
        path: run.path,
    };
    to_stdout(|out| write_status(out, &status))
}

/// Writes `flow status`'s lines.
fn write_status(out: &mut impl Write, run: &RunStatus) -> io::Result<()> {
    let s = &run.standing;
    let done = s.succeeded + s.cached + s.failed + s.cancelled;
    writeln!(out, "run {}: {}", run.id, s.state)?;
    writeln!(
        out,
        "  {done}/{} done: {} succeeded, {} unchanged, {} failed, {} cancelled; {} running, {} queued",
        s.total,
        s.succeeded,
        s.cached,
        s.failed,
        s.cancelled,
        s.running,
        s.queued()
    )?;
    if let Some(secs) = s.seconds {
        writeln!(out, "  took {secs:.1}s")?;
    }
    if let Some(workers) = &run.workers {
        write_workers(out, workers)?;
    }
    if let Some(allocs) = &run.allocs {
        write_allocations(out, allocs)?;
    }
    writeln!(out, "  {}", run.path.display())
}

/// The workers of a live run, one line each.
fn write_workers(out: &mut impl Write, workers: &[WorkerInfo]) -> io::Result<()> {
    if workers.is_empty() {
        return writeln!(out, "  no worker connected");
    }
    writeln!(out, "  {} connected:", crate::plan::plural(workers.len() as u64, "worker"))?;
    for w in workers {
        let job = w.allocation.as_ref().map(|j| format!(", job {j}")).unwrap_or_default();
        let (cpus, gpus) = (crate::plan::plural(w.cpus as u64, "cpu"), crate::plan::plural(w.gpus as u64, "gpu"));
        writeln!(out, "    {} {} ({cpus}, {gpus}{job}): {} running", w.id, w.hostname, w.running)?;
    }
    Ok(())
}

/// A line about the run's allocations, if it has a queue.
fn write_allocations(out: &mut impl Write, file: &AllocsFile) -> io::Result<()> {
    let Some(queue) = &file.queue else { return Ok(()) };
    let count = |state: AllocState| file.allocations.iter().filter(|a| a.state == state).count();
    writeln!(
        out,
        "  {} queue (profile `{}`): {}, {} queued, {} running, {} failed",
        queue.manager.name(),
        queue.profile,
        crate::plan::plural(file.allocations.len() as u64, "allocation"),
        count(AllocState::Queued),
        count(AllocState::Running),
        count(AllocState::Failed)
    )?;
    if let Some(paused) = &queue.paused {
        writeln!(out, "  {paused}")?;
    }
    Ok(())
}

/// Lists every run, oldest first.
pub fn runs(args: &RunsArgs) -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let state = state_dir(args.workflow.as_deref(), &cwd)?;
    let mut runs = Vec::new();
    for run in RunDir::list(&state) {
        let standing = Standing::of(&run)
            // A run whose files are damaged is listed, not hidden.
            .inspect_err(|why| eprintln!("warning: run {}: {why}", run.id))
            .ok();
        runs.push((run.id, standing));
    }
    if runs.is_empty() {
        return Err(format!("no runs in `{}`", display(&state)));
    }
    to_stdout(|out| write_runs(out, &runs))
}

/// Writes `flow runs`'s table: one row per run, `damaged` for a run
/// without a standing.
fn write_runs(out: &mut impl Write, runs: &[(String, Option<Standing>)]) -> io::Result<()> {
    let mut rows =
        vec![["RUN", "STATE", "TASKS", "SUCCEEDED", "UNCHANGED", "FAILED", "CANCELLED", "TIME"].map(String::from)];
    for (id, standing) in runs {
        let Some(s) = standing else {
            let mut row = ["-"; 8].map(String::from);
            row[0].clone_from(id);
            row[1] = "damaged".to_owned();
            rows.push(row);
            continue;
        };
        rows.push([
            id.clone(),
            s.state.to_owned(),
            s.total.to_string(),
            s.succeeded.to_string(),
            s.cached.to_string(),
            s.failed.to_string(),
            s.cancelled.to_string(),
            s.seconds.map_or_else(|| "-".to_owned(), |t| format!("{t:.1}s")),
        ]);
    }
    let widths: Vec<usize> = (0..8).map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0)).collect();
    for row in &rows {
        let line: Vec<String> = row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
        writeln!(out, "{}", line.join("  ").trim_end())?;
    }
    Ok(())
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use flow_engine::profile::Manager;
    use flow_engine::runtime::{AllocRecord, QueueRecord};

    use super::*;

    fn standing(state: &'static str, seconds: Option<f64>) -> Standing {
        Standing { state, total: 12, succeeded: 6, cached: 2, failed: 1, cancelled: 1, running: 1, seconds }
    }

    fn worker(id: u32, hostname: &str, allocation: Option<&str>, running: u64) -> WorkerInfo {
        WorkerInfo {
            id,
            hostname: hostname.into(),
            peer: String::new(),
            cpus: 4,
            gpus: 1,
            memory: 0,
            custom: Default::default(),
            deadline_us: None,
            allocation: allocation.map(str::to_owned),
            running,
        }
    }

    fn allocation(id: u32, state: AllocState) -> AllocRecord {
        AllocRecord {
            id,
            job_id: format!("47{id}"),
            state,
            workers: 1,
            connected: 0,
            joined: 0,
            submitted_us: 0,
            started_us: None,
            ended_us: None,
            reason: None,
            script: format!("allocs/{id}.sh"),
            output: format!("allocs/{id}.out"),
        }
    }

    fn render(run: &RunStatus) -> String {
        let mut out = Vec::new();
        write_status(&mut out, run).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_live_run_with_workers_and_a_queue() {
        let queue = QueueRecord {
            profile: "hpc".into(),
            manager: Manager::Slurm,
            time_limit_s: 3600,
            workers_per_allocation: 1,
            max_workers: 4,
            backlog: 1,
            paused: Some("the queue is paused: sbatch failed 3 times in a row".into()),
            unschedulable: Vec::new(),
        };
        let allocations = vec![
            allocation(1, AllocState::Running),
            allocation(2, AllocState::Queued),
            allocation(3, AllocState::Failed),
        ];
        let run = RunStatus {
            id: "20261125-010203-004".into(),
            path: PathBuf::from(".flow/runs/20261125-010203-004"),
            standing: standing("running", None),
            workers: Some(vec![worker(0, "local", None, 1), worker(1, "node7", Some("4711"), 0)]),
            allocs: Some(AllocsFile { queue: Some(queue), allocations }),
        };
        insta::assert_snapshot!(render(&run));
    }

    #[test]
    fn a_finished_run_and_a_live_one_without_workers() {
        let finished = RunStatus {
            id: "20261125-010203-004".into(),
            path: PathBuf::from(".flow/runs/20261125-010203-004"),
            standing: Standing { running: 0, ..standing("failed", Some(12.25)) },
            workers: None,
            allocs: None,
        };
        let finished_text = render(&finished);
        let waiting = RunStatus { workers: Some(Vec::new()), standing: standing("running", None), ..finished };
        insta::assert_snapshot!(format!("{finished_text}{}", render(&waiting)));
    }

    #[test]
    fn runs_are_a_table_with_damaged_ones_listed() {
        let runs = vec![
            ("20261124-235959-001".to_owned(), Some(Standing { running: 0, ..standing("succeeded", Some(3.5)) })),
            ("20261125-000000-002".to_owned(), None),
            ("20261125-010203-004".to_owned(), Some(standing("running", None))),
        ];
        let mut out = Vec::new();
        write_runs(&mut out, &runs).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }
}
