//! The workflow's `[finally]` command: run once when the run's loop is
//! over, whatever happened, on this machine (an agent of its own, so it
//! runs with `--no-local-worker` too), with the run's outcome in its
//! environment and its output in the run log under the label `finally`.
//! A second Ctrl-C (or SIGTERM) stops it.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::container::ResolvedImage;
use crate::ir::{Command, Finally, Graph};
use crate::log::OutputLogSender;
use crate::rundir::{FinallyOutcome, RunDir, Summary};
use crate::runtime::agent::local::LocalWorker;
use crate::runtime::agent::output_sink::OutputSink;
use crate::runtime::protocol::job::{Job, JobCommand, JobContainer, Setup, Sink};
use crate::runtime::protocol::outcome::{Status, WorkerEvent};
use crate::runtime::run_options::RunOptions;

/// The workflow's `[finally]` command, as the run starts it once its loop is over.
pub(in crate::runtime::coordinator) struct FinallyCommand {
    finally: Finally,
    /// The run's check of its container, if it has one.
    image: Option<ResolvedImage>,
    log: OutputSink,
}

impl FinallyCommand {
    /// What `graph` runs at the end, its output going to `log`; nothing under `--dry-exec`.
    pub(in crate::runtime::coordinator) fn new(
        graph: &Graph,
        options: &RunOptions,
        log: &OutputLogSender,
    ) -> Option<Self> {
        let finally = graph.finally.clone().filter(|_| !options.dry_exec)?;
        let image = finally.container.as_deref().and_then(|c| graph.images.get(c).cloned());
        Some(Self { finally, image, log: OutputSink::Log(log.clone()) })
    }

    /// Runs it after the run `summary` sums up, and notes how it went there.
    /// `summary.json` is written first, so the command can read it (the run
    /// rewrites it as it ends).
    pub(in crate::runtime::coordinator) async fn run(
        self,
        summary: &mut Summary,
        run_dir: &RunDir,
        options: &RunOptions,
    ) {
        if let Err(e) = run_dir.write_summary(summary) {
            summary.io_errors.push(format!("cannot write summary.json: {e}"));
        }
        let outcome = run_finally(&self.finally, self.image.as_ref(), summary, run_dir, options, self.log).await;
        summary.finally = Some(outcome);
    }
}

/// Runs `finally` (in `image`, if it has one) after the run `summary` sums
/// up, writing its output to `log`.
async fn run_finally(
    finally: &Finally,
    image: Option<&ResolvedImage>,
    summary: &Summary,
    run: &RunDir,
    options: &RunOptions,
    log: OutputSink,
) -> FinallyOutcome {
    let (tx, mut reports) = mpsc::unbounded_channel();
    let report = Arc::new(move |event: WorkerEvent| {
        let _ = tx.send(event);
    });
    let worker = LocalWorker::new(options.worker.clone(), log, report, false, options.guard.clone());
    let started = Instant::now();
    worker.start(job(finally, image, summary, run, &options.base_dir));
    let ended = tokio::select! {
        ended = reports.recv() => ended,
        () = crate::runtime::coordinator::signals::interrupted() => {
            worker.stop_all();
            reports.recv().await
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    match ended.map(|WorkerEvent::Finished { outcome, .. }| outcome.status) {
        Some(Status::Succeeded | Status::Cached) => {
            FinallyOutcome { succeeded: true, exit_code: Some(0), signal: None, reason: None, seconds }
        }
        Some(Status::Failed { exit_code, signal, reason }) => {
            FinallyOutcome { succeeded: false, exit_code, signal, reason: Some(reason), seconds }
        }
        Some(Status::Stopped) => failed("interrupted", seconds),
        None => failed("its worker ended without a report", seconds),
    }
}

fn failed(reason: &str, seconds: f64) -> FinallyOutcome {
    FinallyOutcome { succeeded: false, exit_code: None, signal: None, reason: Some(reason.to_owned()), seconds }
}

/// `succeeded`, `failed` or `interrupted`: how the run ended, for `FLOW_OUTCOME`.
fn outcome_word(summary: &Summary) -> &'static str {
    match summary.exit_code() {
        0 => "succeeded",
        130 => "interrupted",
        _ => "failed",
    }
}

/// The job that runs `finally`: its command, `cwd`, `env`, setup lines and
/// image, and the run's outcome.
fn job(finally: &Finally, image: Option<&ResolvedImage>, summary: &Summary, run: &RunDir, base_dir: &Path) -> Job {
    let command = match &finally.command {
        Command::Shell(text) => JobCommand::Shell(text.clone()),
        Command::Argv(words) => JobCommand::Argv(words.clone()),
    };
    let mut env: Vec<(String, String)> = finally.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let count = |name: &str, n: u64| (format!("FLOW_{name}"), n.to_string());
    env.extend([
        ("FLOW_RUN_ID".to_owned(), summary.run_id.clone()),
        ("FLOW_RUN_DIR".to_owned(), run.path.display().to_string()),
        ("FLOW_OUTCOME".to_owned(), outcome_word(summary).to_owned()),
        ("FLOW_SUMMARY_JSON".to_owned(), run.summary().display().to_string()),
        count("TOTAL", summary.total),
        count("SUCCEEDED", summary.succeeded),
        count("CACHED", summary.cached),
        count("FAILED", summary.failed),
        count("IGNORED", summary.ignored),
        count("CANCELLED", summary.cancelled),
    ]);
    let setup = (!finally.setup.is_empty())
        .then(|| Setup { lines: finally.setup.clone(), status_file: run.path.join("setup").join(Finally::LABEL) });
    Job {
        task: Finally::TASK,
        attempt: 0,
        label: Finally::LABEL.to_owned(),
        command,
        cwd: finally.cwd.as_ref().map_or_else(|| base_dir.to_path_buf(), |c| base_dir.join(c)),
        env,
        flow: None,
        stdin: None,
        stdout: Sink::Log,
        stderr: Sink::Log,
        chunk: None,
        inputs: Vec::new(),
        implicit: Vec::new(),
        base_dir: base_dir.to_path_buf(),
        outputs: Vec::new(),
        timeout: finally.timeout.map(Duration::from_secs),
        cpus: Vec::new(),
        gpus: Vec::new(),
        setup,
        container: image.map(|i| JobContainer { engine: i.engine, image: i.image.clone() }),
        definition: String::new(),
    }
}
