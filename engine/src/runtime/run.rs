//! [`start`]: begin a run in the background and hand back its events.
//!
//! Three threads: the driver (a single-threaded tokio runtime: scheduling,
//! processes, pipes), the journal writer (batches state changes to disk),
//! and the output-log writer (batches task output); the caller's thread
//! consumes [`Event`]s. Dispatch never waits on the other two.

use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::thread::JoinHandle;

use thiserror::Error;
use tokio::sync::mpsc;

use super::core::{Core, CoreOptions};
use super::driver::Driver;
use super::event::{Event, Summary};
use super::job::JobFactory;
use super::local::LocalWorker;
use super::options::RunOptions;
use super::output_sink::OutputSink;
use super::resume::Previous;
use super::run_dir::{RunDir, STATE_DIR};
use crate::diag::Source;
use crate::ir::Graph;
use crate::log::{JournalRecord, JournalWriter, OutputLog};

/// Why a run could not start.
#[derive(Debug, Error)]
pub enum RunError {
    /// Reading or writing the run directory failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Some tasks can never run on the available workers.
    #[error("{}", .0.join("\n"))]
    Unschedulable(Vec<String>),
    /// An option does not fit the workflow (e.g. `--only` names no task).
    #[error("{0}")]
    Options(String),
    /// The run's thread ended abnormally.
    #[error("the run stopped unexpectedly: {0}")]
    Crashed(String),
}

/// A run in progress.
pub struct RunHandle {
    /// The run's directory.
    pub run: RunDir,
    /// Everything that happens, in order, in batches; ends when the run ends.
    pub events: std_mpsc::Receiver<Vec<Event>>,
    thread: JoinHandle<Result<Summary, RunError>>,
}

impl RunHandle {
    /// Waits for the run to end.
    pub fn join(self) -> Result<Summary, RunError> {
        self.thread.join().map_err(|_| RunError::Crashed("the driver thread panicked".into()))?
    }
}

/// Starts running `graph` (compiled from `source`) with `options`.
pub fn start(graph: Graph, source: Arc<Source>, options: RunOptions) -> Result<RunHandle, RunError> {
    let graph = Arc::new(graph);
    let state = options.base_dir.join(STATE_DIR);
    if let Some(live) = RunDir::list(&state).into_iter().find(RunDir::is_live) {
        return Err(RunError::Options(format!(
            "another `flow run` is running this workflow's directory (run {}); wait for it or stop it",
            live.id
        )));
    }
    super::orphans::reap(&state);
    let mut previous = Previous::load(&state, &options.workflow, options.force);
    previous.force(&graph, &options.only).map_err(RunError::Options)?;

    let mut core = Core::new(&graph, CoreOptions { max_fails: options.max_fails });
    core.add_worker(options.worker.clone());
    let impossible = core.unschedulable();
    if !impossible.is_empty() {
        let lines = impossible
            .into_iter()
            .map(|(g, why)| {
                let (line, col) = source.line_col(graph.group(g).span.start);
                format!("task `{}` ({}:{line}:{col}) can never run here: {why}", graph.group(g).name, source.name)
            })
            .collect();
        return Err(RunError::Unschedulable(lines));
    }

    let run = RunDir::create(&state)?;
    let lock = run.lock()?;
    write_run_files(&run, &graph, &options)?;
    let factory = JobFactory::new(graph.clone(), &options.base_dir, &run.path).map_err(RunError::Options)?;
    let (log, log_thread) = OutputLog::create(&run.output_log())?;
    let (journal, journal_thread) = journal_thread(JournalWriter::create(&run.journal())?);
    let (events, events_rx) = std_mpsc::channel();
    let summary = Summary { run_id: run.id.clone(), total: graph.instance_count(), ..Summary::default() };
    let _ = events.send(vec![Event::RunStarted {
        run_id: run.id.clone(),
        run_dir: run.path.clone(),
        total: summary.total,
    }]);

    let run_for_thread = run.clone();
    let thread = std::thread::Builder::new().name("flow-driver".into()).spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (worker_tx, worker_events) = mpsc::unbounded_channel();
        let summary = runtime.block_on(async {
            let worker = LocalWorker::new(OutputSink::Log(log), worker_tx, options.bind_cpus);
            let driver = Driver {
                core,
                factory,
                worker,
                worker_events,
                journal,
                events: events.clone(),
                previous,
                options,
                source,
                summary,
                running: Default::default(),
                journal_batch: Vec::new(),
                event_batch: Vec::new(),
                stopped: Default::default(),
            };
            driver.run().await
        });
        drop(runtime);
        log_thread.finish()?;
        journal_thread.join().map_err(|_| RunError::Crashed("the journal thread panicked".into()))??;
        let text = serde_json::to_string_pretty(&summary).map_err(std::io::Error::other)?;
        fs_err::write(run_for_thread.summary(), text + "\n")?;
        let _ = events.send(vec![Event::RunFinished { summary: summary.clone() }]);
        drop(lock);
        Ok(summary)
    })?;
    Ok(RunHandle { run, events: events_rx, thread })
}

/// The journal's thread: takes every record sent, writes them in batches.
fn journal_thread(
    mut writer: JournalWriter,
) -> (std_mpsc::Sender<Vec<JournalRecord>>, JoinHandle<std::io::Result<()>>) {
    let (tx, rx) = std_mpsc::channel::<Vec<JournalRecord>>();
    let handle = std::thread::spawn(move || {
        while let Ok(mut batch) = rx.recv() {
            for more in rx.try_iter() {
                batch.extend(more);
            }
            writer.append_batch(&batch)?;
        }
        Ok(())
    });
    (tx, handle)
}

fn write_run_files(run: &RunDir, graph: &Graph, options: &RunOptions) -> std::io::Result<()> {
    let meta = serde_json::json!({ "workflow": options.workflow, "started_us": super::local::now_us() });
    fs_err::write(run.meta(), format!("{meta:#}\n"))?;
    let mut file = std::io::BufWriter::new(fs_err::File::create(run.graph())?);
    serde_json::to_writer(&mut file, graph).map_err(std::io::Error::other)?;
    std::io::Write::flush(&mut file)
}
