//! `flow alloc`: the allocations a run submitted (`list`, `log ID`), and the
//! submission script a profile's queue would use (`--dry-run`).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use flow_engine::log::{OutputRecord, OutputStream};
use flow_engine::rundir::{AllocRecord, AllocsFile, RunDir, RunDirError, RunView, locate};
use flow_engine::runtime::{Fit, ScriptContext, fits, script, submit_command};
use flow_engine::units::{DurationStyle, duration};

use crate::args::WorkflowArgs;
use crate::failure::Failure;
use crate::json::{AllocList, QueueLimits};
use crate::load_workflow;
use crate::stdout::say;
use crate::table::Table;

/// `flow alloc`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AllocArgs {
    /// What to show.
    #[command(subcommand)]
    pub action: Option<AllocAction>,
    /// Print the submission script (and submit command) the profile's queue would use, and submit nothing.
    #[arg(long, requires = "profile")]
    pub dry_run: bool,
    /// The profile whose queue to show (with `--dry-run`).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    #[command(flatten)]
    pub workflow: WorkflowArgs,
}

/// `flow alloc list|log`.
#[derive(Debug, Subcommand)]
pub enum AllocAction {
    /// List a run's allocations and their states.
    List {
        #[command(flatten)]
        run: RunArgs,
        /// One JSON document: the queue and every allocation (times in µs).
        #[arg(long)]
        json: bool,
    },
    /// Print the output (stdout and stderr) of one allocation's job.
    Log {
        /// The allocation's number (`flow alloc list`) or its job id.
        id: String,
        #[command(flatten)]
        run: RunArgs,
    },
}

/// Which run.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The run: its id or a unique prefix [default: the latest].
    #[arg(long)]
    pub run: Option<String>,
    /// The workflow whose runs to read [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
}

/// Runs `flow alloc`.
pub fn alloc(args: &AllocArgs) -> Result<(), Failure> {
    match &args.action {
        Some(AllocAction::List { run, json }) => list(run, *json),
        Some(AllocAction::Log { id, run }) => log(id, run),
        None if args.dry_run => dry_run(args),
        None => Err(Failure::Usage(
            "say what to show: `flow alloc list`, `flow alloc log ID` or `flow alloc --dry-run --profile NAME`".into(),
        )),
    }
}

/// Prints the script and submit command of the profile's queue.
fn dry_run(args: &AllocArgs) -> Result<(), Failure> {
    let name = args.profile.as_deref().unwrap_or_default();
    let loaded = load_workflow::load(&args.workflow, None)?;
    let base = loaded.dir()?;
    let profile = crate::profile_arg::load(&base, name)?;
    let queue = profile.queue.ok_or_else(|| Failure::Usage(format!("profile `{name}` has no `queue` table")))?;
    let run = RunDir { id: "RUN_ID".to_owned(), path: base.join(".flow/runs/RUN_ID") };
    let flow = queue.flow_command();
    let cx =
        ScriptContext { run_id: &run.id, access: &run.access(), output: &run.path.join("allocs/N.out"), flow: &flow };
    let (program, submit) = submit_command(&queue, &run.path.join("allocs/N.sh"));
    let mut out = format!("# submitted with: {program} {}\n", submit.join(" "));
    for (group, fit) in loaded.graph.groups.iter().zip(fits(&loaded.graph, &queue)) {
        if let Fit::Never(why) = fit {
            out.push_str(&format!("# never runs on this queue: {}: {why}\n", group.name));
        }
    }
    crate::stdout::print(format_args!("{out}{}", script(&queue, &cx)))
}

/// The allocations file of `view`'s run, which must have a queue.
fn queued(view: &RunView) -> Result<&AllocsFile, Failure> {
    view.allocs.as_ref().ok_or_else(|| Failure::Usage(format!("run {} has no allocation queue", view.dir.id)))
}

fn run_dir(args: &RunArgs) -> Result<RunDir, Failure> {
    let cwd = std::env::current_dir().map_err(|e| Failure::Io(format!("cannot read the current directory: {e}")))?;
    Ok(locate(args.workflow.as_deref(), args.run.as_deref(), &cwd)?)
}

/// Prints a run's allocations.
fn list(args: &RunArgs, json: bool) -> Result<(), Failure> {
    let run = run_dir(args)?;
    let view = RunView::read(&run)?;
    if json {
        // A run without a queue has no `allocs.json`: its document says so.
        let none = AllocsFile::default();
        let file = view.allocs.as_ref().unwrap_or(&none);
        let queue = file.queue.as_ref().map(|q| QueueLimits {
            profile: &q.profile,
            manager: q.manager,
            time_limit_us: q.time_limit_s * 1_000_000,
            workers_per_allocation: q.workers_per_allocation,
            max_workers: q.max_workers,
            backlog: q.backlog,
            paused: q.paused.as_deref(),
            unschedulable: &q.unschedulable,
        });
        let list = AllocList { run_id: &run.id, queue, allocations: &file.allocations };
        return crate::stdout::to_stdout(|out| crate::json::write_document(out, &list));
    }
    let file = queued(&view)?;
    let mut out = String::new();
    if let Some(q) = &file.queue {
        let paused = q.paused.as_deref().map(|p| format!("; {p}")).unwrap_or_default();
        out = format!(
            "run {}: profile `{}`, {} queue, {}{paused}\n",
            run.id,
            q.profile,
            q.manager.name(),
            flow_engine::units::plural(file.allocations.len() as u64, "allocation")
        );
        for line in &q.unschedulable {
            out.push_str(&format!("  never runs on this queue: {line}\n"));
        }
    }
    let header = ["ID", "JOB", "STATE", "WORKERS", "WAITED", "RAN", "REASON"].map(String::from);
    let rows = file.allocations.iter().map(|a| {
        [
            a.id.to_string(),
            if a.job_id.is_empty() { "-".to_owned() } else { a.job_id.clone() },
            format!("{:?}", a.state).to_lowercase(),
            format!("{}/{}", a.connected, a.workers),
            waited(a),
            ran(a),
            a.reason.clone().unwrap_or_default(),
        ]
    });
    let table = Table::new().indent("  ").right(&[3, 4, 5]).min_widths(&[3, 13, 9, 7, 8, 8]);
    let rows: Vec<_> = std::iter::once(header).chain(rows).collect();
    crate::stdout::print(format_args!("{out}{}", table.render(&rows)))
}

/// Prints one allocation's output file.
fn log(id: &str, args: &RunArgs) -> Result<(), Failure> {
    let run = run_dir(args)?;
    let view = RunView::read(&run)?;
    let file = queued(&view)?;
    let found = file.allocations.iter().find(|a| a.id.to_string() == id || a.job_id == id).ok_or_else(|| {
        let n = file.allocations.len();
        Failure::Usage(format!("run {} has no allocation `{id}` (it has {n}; see `flow alloc list`)", run.id))
    })?;
    // The job's own file while it lives; the copy in the run log once the
    // run ended (the file may be gone, e.g. cleaned from scratch space).
    let bytes = match fs_err::read(run.path.join(&found.output)) {
        Ok(bytes) => bytes,
        Err(_) => from_run_log(&view, found.id)?,
    };
    if bytes.is_empty() {
        let state = format!("{:?}", found.state).to_lowercase();
        // Only an allocation that may still run can have output to come.
        let when = if found.state.is_active() { " yet" } else { "" };
        say!("allocation {} ({state}) has no output{when}", found.id);
        return Ok(());
    }
    use std::io::Write;
    std::io::stdout().write_all(&bytes).map_err(|e| Failure::Io(e.to_string()))
}

/// Allocation `id`'s output as copied into the run log.
fn from_run_log(view: &RunView, id: u32) -> Result<Vec<u8>, RunDirError> {
    let Some(output) = view.output()? else { return Ok(Vec::new()) };
    let path = view.dir.output_log();
    let task = OutputRecord::allocation(id);
    let mut bytes = Vec::new();
    for record in output {
        let record = record.map_err(|e| RunDirError::reading(&path, e))?;
        if record.stream == OutputStream::Allocation && record.task == task {
            bytes.extend(record.data);
        }
    }
    Ok(bytes)
}

/// How long the allocation waited in the manager's queue.
fn waited(a: &AllocRecord) -> String {
    let end = a.started_us.or(a.ended_us);
    end.map(|e| seconds(e.saturating_sub(a.submitted_us))).unwrap_or_else(|| "-".to_owned())
}

/// How long its workers ran.
fn ran(a: &AllocRecord) -> String {
    match (a.started_us, a.ended_us) {
        (Some(s), Some(e)) => seconds(e.saturating_sub(s)),
        (Some(_), None) => "running".to_owned(),
        _ => "-".to_owned(),
    }
}

fn seconds(us: u64) -> String {
    duration(us, DurationStyle::Tenths)
}
