//! `flow status` (one run, live or finished) and `flow runs` (all runs).

use std::io::{self, Write};
use std::path::PathBuf;

use clap::Args;
use flow_engine::log::Latest;
use flow_engine::rundir::{AllocState, AllocsFile, RunDir, RunDirError, RunView, WorkerInfo, locate, state_dir};
use flow_engine::units::{DurationStyle, duration};

use crate::failure::Failure;
use crate::json::{self, Counts, QueueSummary, RunList, RunStanding, RunState, StatusReport};
use crate::stdout::say;
use crate::stdout::to_stdout;
use crate::table::Table;

/// `flow status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub run: crate::args::RunName,
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

/// Where a run stands, from its summary or, while it runs, its journal.
struct Standing {
    /// The state in words: a dry run says so.
    state: &'static str,
    /// The state in the output's vocabulary.
    run_state: RunState,
    dry_exec: bool,
    counts: Counts,
    seconds: Option<f64>,
    /// The exit code `flow run` ended with, once it ended.
    exit_code: Option<u8>,
    /// Why its run files could not be written, if they could not.
    io_errors: Vec<String>,
    /// Damaged stretches of its journal, skipped when it was read.
    journal_damage: usize,
}

impl Standing {
    /// Where `run` stands: its summary says, once it ended, else its journal.
    fn of(run: &RunView) -> Result<Standing, RunDirError> {
        let (state, run_state) = (RunState::words(run), RunState::of_view(run));
        if let Some(s) = &run.summary {
            // The journal of a run that ended can hold millions of records:
            // it is read through for its damage only, holding none.
            let health = run.each_journal_record(|_| ())?;
            return Ok(Standing {
                state,
                run_state,
                dry_exec: s.dry_exec,
                counts: Counts::of_summary(s),
                seconds: Some(s.seconds),
                exit_code: Some(s.exit_code()),
                io_errors: s.io_errors.clone(),
                journal_damage: health.lost_stretches(),
            });
        }
        let mut latest = Latest::new(&run.graph);
        let health = run.each_journal_record(|r| latest.apply(&r))?;
        Ok(Standing {
            state,
            run_state,
            dry_exec: run.is_dry(),
            counts: Counts::of_latest(&run.graph, &latest),
            seconds: None,
            exit_code: None,
            io_errors: Vec::new(),
            journal_damage: health.lost_stretches(),
        })
    }

    /// The state in words, saying when the journal is damaged.
    fn state_words(&self) -> String {
        match self.journal_damage {
            0 => self.state.to_owned(),
            _ => format!("{}, journal damaged", self.state),
        }
    }
}

impl RunStanding {
    /// Run `id`, which stands at `standing`, or whose files cannot be read.
    fn new(id: &str, standing: Result<&Standing, &str>) -> Self {
        match standing {
            Ok(s) => RunStanding {
                run_id: id.to_owned(),
                state: s.run_state,
                dry_exec: s.dry_exec,
                counts: Some(s.counts.clone()),
                duration_us: s.seconds.map(json::micros),
                exit_code: s.exit_code,
                journal_damage: Some(s.journal_damage),
                error: None,
            },
            Err(why) => RunStanding {
                run_id: id.to_owned(),
                state: RunState::Damaged,
                dry_exec: false,
                counts: None,
                duration_us: None,
                exit_code: None,
                journal_damage: None,
                error: Some(why.to_owned()),
            },
        }
    }
}

impl<'a> QueueSummary<'a> {
    /// The queue of `file`, if it has one.
    fn of(file: &'a AllocsFile) -> Option<Self> {
        let queue = file.queue.as_ref()?;
        let count = |state: AllocState| file.allocations.iter().filter(|a| a.state == state).count();
        Some(QueueSummary {
            manager: queue.manager,
            profile: &queue.profile,
            allocations: file.allocations.len(),
            queued: count(AllocState::Queued),
            running: count(AllocState::Running),
            failed: count(AllocState::Failed),
            paused: queue.paused.as_deref(),
        })
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
pub fn status(args: &StatusArgs) -> Result<(), Failure> {
    let cwd = current_dir()?;
    let run = RunView::read(&locate(args.workflow.as_deref(), args.run.id(), &cwd)?)?;
    let status = RunStatus {
        standing: Standing::of(&run)?,
        workers: run.live.then(|| run.workers.clone()),
        allocs: run.allocs.clone().filter(|file| file.queue.is_some()),
        id: run.dir.id,
        path: run.dir.path,
    };
    if args.json {
        let report = StatusReport {
            standing: RunStanding::new(&status.id, Ok(&status.standing)),
            workers: json::Worker::all(status.workers.as_deref().unwrap_or_default()),
            queue: status.allocs.as_ref().and_then(QueueSummary::of),
            dir: &status.path,
        };
        return to_stdout(|out| json::write_document(out, &report));
    }
    to_stdout(|out| write_status(out, &status))
}

/// Writes `flow status`'s lines.
fn write_status(out: &mut impl Write, run: &RunStatus) -> io::Result<()> {
    let (s, c) = (&run.standing, &run.standing.counts);
    writeln!(out, "run {}: {}", run.id, s.state_words())?;
    // Said only when there are some, so runs without these read as before.
    let ignored = if c.ignored > 0 { format!(" ({} ignored)", c.ignored) } else { String::new() };
    let skipped = if c.skipped > 0 { format!(", {} skipped by a condition", c.skipped) } else { String::new() };
    let retrying = if c.retrying > 0 { format!(", {} waiting to retry", c.retrying) } else { String::new() };
    writeln!(
        out,
        "  {}/{} done: {} succeeded, {} unchanged, {} failed{ignored}, {} cancelled{skipped}; {} running{retrying}, {} queued",
        c.done(),
        c.total,
        c.succeeded,
        c.cached,
        c.failed,
        c.cancelled,
        c.running,
        c.queued
    )?;
    if let Some(secs) = s.seconds {
        writeln!(out, "  took {}", duration(json::micros(secs), DurationStyle::Tenths))?;
    }
    for error in &s.io_errors {
        writeln!(out, "  {error}")?;
    }
    match s.journal_damage {
        0 => {}
        1 => writeln!(out, "  journal damaged: 1 stretch could not be read; the instances it recorded may run again")?,
        n => writeln!(
            out,
            "  journal damaged: {n} stretches could not be read; the instances they recorded may run again"
        )?,
    }
    if let Some(workers) = &run.workers {
        write_workers(out, workers)?;
    }
    if let Some(queue) = run.allocs.as_ref().and_then(QueueSummary::of) {
        write_allocations(out, &queue)?;
    }
    writeln!(out, "  {}", run.path.display())
}

/// The workers of a live run, one line each.
fn write_workers(out: &mut impl Write, workers: &[WorkerInfo]) -> io::Result<()> {
    if workers.is_empty() {
        return writeln!(out, "  no worker connected");
    }
    writeln!(out, "  {} connected:", flow_engine::units::plural(workers.len() as u64, "worker"))?;
    for w in workers {
        let job = w.allocation.as_ref().map(|j| format!(", job {j}")).unwrap_or_default();
        let (cpus, gpus) = (w.shape.cpus.len() as u64, w.shape.gpus.len() as u64);
        let (cpus, gpus) = (flow_engine::units::plural(cpus, "cpu"), flow_engine::units::plural(gpus, "gpu"));
        writeln!(out, "    {} {} ({cpus}, {gpus}{job}): {} running", w.id, w.hostname, w.running)?;
    }
    Ok(())
}

/// A line about the run's allocations (and why its queue is paused).
fn write_allocations(out: &mut impl Write, queue: &QueueSummary) -> io::Result<()> {
    writeln!(
        out,
        "  {} queue (profile `{}`): {}, {} queued, {} running, {} failed",
        queue.manager.name(),
        queue.profile,
        flow_engine::units::plural(queue.allocations as u64, "allocation"),
        queue.queued,
        queue.running,
        queue.failed
    )?;
    if let Some(paused) = queue.paused {
        writeln!(out, "  {paused}")?;
    }
    Ok(())
}

/// Lists every run, oldest first.
pub fn runs(args: &RunsArgs) -> Result<(), Failure> {
    let cwd = current_dir()?;
    let state = state_dir(args.workflow.as_deref(), &cwd)?;
    let mut runs = Vec::new();
    for run in RunDir::list(&state) {
        // A run whose files are damaged is listed, not hidden.
        let standing = RunView::read(&run)
            .and_then(|view| Standing::of(&view))
            .map_err(|e| e.to_string())
            .inspect_err(|why| say!("warning: run {}: {why}", run.id));
        runs.push((run.id, standing));
    }
    if runs.is_empty() {
        return Err(RunDirError::NoRuns { state }.into());
    }
    if args.json {
        let runs = runs.iter().map(|(id, s)| RunStanding::new(id, s.as_ref().map_err(String::as_str))).collect();
        return to_stdout(|out| json::write_document(out, &RunList { runs }));
    }
    to_stdout(|out| write_runs(out, &runs))
}

/// Writes `flow runs`'s table: one row per run, `damaged` for a run
/// without a standing.
fn write_runs(out: &mut impl Write, runs: &[(String, Result<Standing, String>)]) -> io::Result<()> {
    let mut rows = vec![
        ["RUN", "STATE", "INSTANCES", "SUCCEEDED", "UNCHANGED", "FAILED", "CANCELLED", "SKIPPED", "TIME"]
            .map(String::from),
    ];
    for (id, standing) in runs {
        let Ok(s) = standing else {
            let mut row = ["-"; 9].map(String::from);
            row[0].clone_from(id);
            row[1] = "damaged".to_owned();
            rows.push(row);
            continue;
        };
        rows.push([
            id.clone(),
            s.state_words(),
            s.counts.total.to_string(),
            s.counts.succeeded.to_string(),
            s.counts.cached.to_string(),
            s.counts.failed.to_string(),
            s.counts.cancelled.to_string(),
            s.counts.skipped.to_string(),
            s.seconds.map_or_else(|| "-".to_owned(), |t| duration(json::micros(t), DurationStyle::Tenths)),
        ]);
    }
    out.write_all(Table::new().render(&rows).as_bytes())
}

/// The current directory, where runs are looked for.
fn current_dir() -> Result<PathBuf, Failure> {
    std::env::current_dir().map_err(|e| Failure::Io(format!("cannot read the current directory: {e}")))
}

#[cfg(test)]
mod tests {
    use flow_engine::profile::Manager;
    use flow_engine::rundir::{AllocRecord, IO_FAILURE, QueueRecord};

    use super::*;

    fn standing(state: &'static str, seconds: Option<f64>) -> Standing {
        let counts = Counts {
            total: 12,
            succeeded: 6,
            cached: 2,
            failed: 1,
            cancelled: 1,
            running: 1,
            queued: 1,
            ..Counts::default()
        };
        Standing {
            state,
            run_state: RunState::Running,
            dry_exec: false,
            counts,
            seconds,
            exit_code: None,
            io_errors: Vec::new(),
            journal_damage: 0,
        }
    }

    /// `standing` of a run that ended: nothing running.
    fn ended(state: &'static str, seconds: f64) -> Standing {
        let s = standing(state, Some(seconds));
        Standing { counts: Counts { running: 0, queued: 2, ..s.counts }, ..s }
    }

    fn worker(id: u32, hostname: &str, allocation: Option<&str>, running: u64) -> WorkerInfo {
        WorkerInfo {
            id,
            hostname: hostname.into(),
            peer: String::new(),
            shape: flow_engine::resources::WorkerShape::counted(4, 1, 0, Default::default()),
            deadline: None,
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
            standing: ended("failed", 12.25),
            workers: None,
            allocs: None,
        };
        let finished_text = render(&finished);
        let waiting = RunStatus { workers: Some(Vec::new()), standing: standing("running", None), ..finished };
        insta::assert_snapshot!(format!("{finished_text}{}", render(&waiting)));
    }

    /// Issue 18: what could not be written, and a damaged journal, are said.
    #[test]
    fn a_run_that_filled_the_disk_and_whose_journal_is_damaged() {
        let io_errors = vec!["cannot write the journal: No space left on device (os error 28)".to_owned()];
        let s = Standing { exit_code: Some(IO_FAILURE), io_errors, journal_damage: 2, ..ended("failed: storage", 2.0) };
        let run = RunStatus {
            id: "20261125-010203-004".into(),
            path: PathBuf::from(".flow/runs/20261125-010203-004"),
            standing: s,
            workers: None,
            allocs: None,
        };
        assert_eq!(
            render(&run),
            "run 20261125-010203-004: failed: storage, journal damaged
  10/12 done: 6 succeeded, 2 unchanged, 1 failed, 1 cancelled; 0 running, 2 queued
  took 2.0s
  cannot write the journal: No space left on device (os error 28)
  journal damaged: 2 stretches could not be read; the instances they recorded may run again
  .flow/runs/20261125-010203-004
"
        );
    }

    #[test]
    fn runs_are_a_table_with_damaged_ones_listed() {
        let runs = vec![
            ("20261124-235959-001".to_owned(), Ok(ended("succeeded", 3.5))),
            ("20261125-000000-002".to_owned(), Err("damaged".to_owned())),
            ("20261125-010203-004".to_owned(), Ok(standing("running", None))),
        ];
        let mut out = Vec::new();
        write_runs(&mut out, &runs).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }
}
