//! `flow worker` (join a run over the network) and `flow workers` (list the
//! workers of a run).

use std::path::PathBuf;

use clap::Args;
use flow_engine::net::AccessFile;
use flow_engine::rundir::{RunView, locate};
use flow_engine::runtime::{JoinRetry, JoinedRun, Leave, WorkerError, WorkerOptions, run_workers};
use flow_engine::units::{self, BytesStyle, DurationStyle, bytes, parse_duration};

use crate::args::WorkerArgs;
use crate::failure::Failure;
use crate::json::{LeftReason, WorkerEvent, WorkerList};
use crate::stdout::say;
use crate::table::Table;

/// `flow worker`.
#[derive(Debug, Args)]
pub struct WorkerCmdArgs {
    /// The run's access file (`.flow/runs/<id>/access.json`): address and secret.
    #[arg(long, value_name = "FILE")]
    pub access: PathBuf,
    /// Dial this address instead of the one in the access file.
    #[arg(long, value_name = "HOST:PORT")]
    pub connect: Option<String>,
    /// Resources this worker offers (default: this machine's).
    #[command(flatten)]
    pub resources: WorkerArgs,
    /// Leave after this long; tasks whose `time_request` does not fit are not sent here.
    #[arg(long, value_name = "DURATION")]
    pub time_limit: Option<String>,
    /// Leave after this long without any task.
    #[arg(long, value_name = "DURATION")]
    pub idle_timeout: Option<String>,
    /// Bind each task to the CPU ids it was given.
    #[arg(long)]
    pub bind_cpus: bool,
    /// Keep trying to join this long while the coordinator cannot be reached
    /// or turns the connection away (it is starting, or busy); and, once the
    /// connection drops, keep the tasks running and try to rejoin this long
    /// (a resumed run takes them over) before stopping them and leaving.
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub reconnect_for: String,
    /// Hold at most this much of the tasks' output in memory while the
    /// coordinator does not have it yet (the connection is slow, or down
    /// while the worker rejoins); past it the worker stops reading their
    /// output until it drains, and the tasks wait to write.
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub output_buffer: String,
    /// Complete each job at once without starting a process: a
    /// zero-execution worker, to measure a coordinator. Joins only a
    /// `flow run --dry-exec`.
    #[arg(long)]
    pub dry_exec: bool,
    /// Join as this many zero-execution workers from this one process, each
    /// with its own connection and the resources given.
    #[arg(long, value_name = "N", requires = "dry_exec", default_value_t = 1)]
    pub copies: usize,
    /// Say what happens as JSON lines on stdout: `started`, `retrying` when
    /// joining fails and it tries again, then `left` with the reason.
    #[arg(long)]
    pub json: bool,
}

/// `flow workers`.
#[derive(Debug, Args)]
pub struct WorkersArgs {
    #[command(flatten)]
    pub run: crate::args::RunName,
    /// The workflow whose runs to read [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
    /// One JSON document: the run, whether it is live, and its workers.
    #[arg(long)]
    pub json: bool,
}

/// Runs a worker until its run ends.
pub fn worker(args: &WorkerCmdArgs) -> Result<u8, Failure> {
    let access = AccessFile::read(&args.access).map_err(|e| Failure::Usage(e.to_string()))?;
    let duration = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|t| parse_duration(t).map(std::time::Duration::from_secs))
            .transpose()
            .map_err(|e| Failure::Usage(format!("`--{flag}`: {e}")))
    };
    let options = WorkerOptions {
        access,
        access_file: Some(args.access.clone()),
        connect: args.connect.clone(),
        resources: crate::local_resources::local(&args.resources)?,
        time_limit: duration("time-limit", &args.time_limit)?,
        idle_timeout: duration("idle-timeout", &args.idle_timeout)?,
        bind_cpus: args.bind_cpus,
        // A zero-execution worker starts no process: nothing to guard.
        guard: if args.dry_exec { None } else { crate::guard_cmd::start() },
        reconnect_for: duration("reconnect-for", &Some(args.reconnect_for.clone()))?.unwrap_or_default(),
        on_retry: Some(if args.json { retrying_json } else { retrying_text }),
        on_join: args.json.then_some(joined_json as fn(&JoinedRun)),
        dry_exec: args.dry_exec,
        output_buffer: units::parse_size(&args.output_buffer)
            .map_err(|e| Failure::Usage(format!("`--output-buffer {}`: {e}", args.output_buffer)))?,
    };
    if args.json {
        let started = WorkerEvent::Started {
            address: options.connect.clone().unwrap_or_else(|| options.access.address.clone()),
            host: flow_engine::host::hostname(),
            cpus: options.resources.cpus.len(),
            gpus: options.resources.gpus.len(),
            memory_bytes: options.resources.memory,
            time_limit_us: options.time_limit.map(|t| t.as_micros() as u64),
        };
        crate::stdout::to_stdout(|out| crate::json::write_line(out, &started))?;
    }
    let leave = run_workers(options, args.copies).map_err(|e| match e {
        WorkerError::Net(e) => Failure::Usage(format!("worker: {e}")),
        WorkerError::Io(e) => Failure::Io(format!("worker: {e}")),
    })?;
    let (reason, signal, why) = match leave {
        Leave::RunEnded => (LeftReason::RunEnded, None, "the run ended".to_owned()),
        Leave::CoordinatorLost => {
            (LeftReason::CoordinatorLost, None, "the coordinator was lost (killed, or unreachable)".to_owned())
        }
        Leave::TimeLimit => (LeftReason::TimeLimit, None, "its time limit was reached".to_owned()),
        Leave::Idle => (LeftReason::Idle, None, "it had no work for its idle timeout".to_owned()),
        Leave::Signal(name) => (
            LeftReason::Signal,
            Some(name.to_owned()),
            format!("it was stopped by {name}; its tasks run again elsewhere"),
        ),
        Leave::Refused(reason) => (LeftReason::Refused, None, format!("the run refused it: {reason}")),
    };
    let code = match reason {
        LeftReason::Refused => crate::exit_codes::INVALID_INPUT,
        _ => crate::exit_codes::SUCCESS,
    };
    match args.json {
        true => {
            let left = WorkerEvent::Left { reason, signal, message: why };
            crate::stdout::to_stdout(|out| crate::json::write_line(out, &left))?;
        }
        false => say!("worker left: {why}"),
    }
    Ok(code)
}

/// Says in words that joining failed and the worker tries again.
fn retrying_text(retry: &JoinRetry) {
    let left = units::duration(retry.retry_for.as_micros() as u64, DurationStyle::Whole);
    match retry.rejoining {
        true if retry.fenced => say!(
            "worker: no word from the coordinator for {}s: it stopped its tasks (they run again elsewhere) \
             and tries to rejoin {} for up to {left}",
            flow_engine::runtime::HEARTBEAT_TIMEOUT.as_secs(),
            retry.address,
        ),
        true => say!(
            "worker: lost the coordinator; its tasks run on while it tries to rejoin {} ({}) for up to {left}",
            retry.address,
            retry.error
        ),
        false => say!("worker: cannot join {}: {}; trying again for up to {left}", retry.address, retry.error),
    }
}

/// Says as a JSON line that joining failed and the worker tries again.
fn retrying_json(retry: &JoinRetry) {
    let event = WorkerEvent::Retrying {
        address: retry.address.clone(),
        error: retry.error.clone(),
        retry_for_us: retry.retry_for.as_micros() as u64,
    };
    // A closed stdout is found again, and reported, by the `left` line.
    let _ = crate::stdout::to_stdout(|out| crate::json::write_line(out, &event));
}

/// Says as a JSON line that the worker is in the run: a script waiting for
/// workers can go on.
fn joined_json(joined: &JoinedRun) {
    let event = WorkerEvent::Joined { address: joined.address.clone(), rejoined: joined.rejoining };
    let _ = crate::stdout::to_stdout(|out| crate::json::write_line(out, &event));
}

/// Prints the workers of a run.
pub fn workers(args: &WorkersArgs) -> Result<(), Failure> {
    let cwd = std::env::current_dir().map_err(|e| Failure::Io(format!("cannot read the current directory: {e}")))?;
    let run = locate(args.workflow.as_deref(), args.run.id(), &cwd)?;
    let RunView { workers, live, .. } = RunView::read(&run)?;
    if args.json {
        let list = WorkerList { run_id: &run.id, live, workers: crate::json::Worker::all(&workers) };
        return crate::stdout::to_stdout(|out| crate::json::write_document(out, &list));
    }
    let state = if live { "running" } else { "ended" };
    let title = format!("run {} ({state}): {}\n", run.id, flow_engine::units::plural(workers.len() as u64, "worker"));
    let header = ["ID", "HOST", "ADDRESS", "CPUS", "GPUS", "MEMORY", "RUNNING"].map(String::from);
    let rows = workers.iter().map(|w| {
        [
            w.id.to_string(),
            w.hostname.clone(),
            w.peer.to_string(),
            w.shape.cpus.len().to_string(),
            w.shape.gpus.len().to_string(),
            bytes(w.shape.memory, BytesStyle::Trimmed),
            w.running.to_string(),
        ]
    });
    let table = Table::new().indent("  ").right(&[3, 4, 5, 6]).min_widths(&[3, 19, 21, 5, 4, 9, 7]);
    let rows: Vec<_> = std::iter::once(header).chain(rows).collect();
    crate::stdout::print(format_args!("{title}{}", table.render(&rows)))
}
