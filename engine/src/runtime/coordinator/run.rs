//! [`start`]: begin a run in the background and hand back its events.
//!
//! Three threads: the driver (a single-threaded tokio runtime: scheduling,
//! processes, pipes), the journal writer (batches state changes to disk),
//! and the output-log writer (batches task output); the caller's thread
//! consumes [`Event`]s. Dispatch never waits on the other two.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use thiserror::Error;
use tokio::sync::mpsc;

use super::alloc::queue::AllocQueue;
use super::alloc::queue_side::ManagerAnswer;
use super::alloc::queue_side::QueueSide;
use super::books::recorder::Recorder;
use super::dispatch::finally_runner::FinallyCommand;
use super::dispatch::images::check_images;
use super::dispatch::job_factory::JobFactory;
use super::driver::{Driver, Setup};
use super::driver_event::DriverEvent;
use super::earlier::cache_checks::CacheChecks;
use super::earlier::cache_lookup::Lookup;
use super::earlier::resume::Previous;
use super::earlier::stale::StaleOutputs;
use super::earlier::unfinished::unfinished;
use super::killed::stranded::{REATTACH_WINDOW, Stranded};
use super::loop_sender::LoopSender;
use super::workers::links::{Link, Links};
use crate::diag::{Code, Diagnostic, Source};
use crate::ir::{Graph, GroupId, MaxFails, TaskId};
use crate::log::{
    JournalEvent, JournalRecord, JournalState, JournalWriter, OutputLog, OutputLogHandle, OutputLogSender, State,
    read_journal,
};
use crate::net::{AccessFile, Secret};
use crate::rundir::Meta;
use crate::rundir::Summary;
use crate::rundir::{RunDir, RunLock, STATE_DIR};
use crate::runtime::agent::local::LocalWorker;
use crate::runtime::agent::output_sink::OutputSink;
use crate::runtime::core::{Core, CoreOptions, WorkerId};
use crate::runtime::event::Event;
use crate::runtime::run_options::RunOptions;

/// Why a run could not start.
#[derive(Debug, Error)]
pub enum RunError {
    /// Reading or writing the run directory failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Some tasks can never run on the available workers: one diagnostic
    /// each, at the key that asks too much (else at the task's name).
    #[error("{}", .diagnostics.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("\n"))]
    Unschedulable {
        /// The workflow, for snippets.
        workflow: Arc<Source>,
        /// One per task.
        diagnostics: Vec<Diagnostic>,
    },
    /// Task images that cannot run: a missing engine or image, one line each.
    #[error("{}", .0.join("\n"))]
    Images(Vec<String>),
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
    /// Batches of [`RunHandle::events`] handed back, for the run to fill again.
    spare_events: std_mpsc::Sender<Vec<Event>>,
    thread: JoinHandle<Result<Summary, RunError>>,
}

impl RunHandle {
    /// Hands back a batch of events once they are seen: the run fills it
    /// again, so a busy run writes its events to memory already in use
    /// rather than to fresh pages. Optional: a batch not handed back is freed.
    pub fn recycle(&self, mut batch: Vec<Event>) {
        batch.clear();
        let _ = self.spare_events.send(batch);
    }

    /// Waits for the run to end.
    pub fn join(self) -> Result<Summary, RunError> {
        self.thread.join().map_err(|_| RunError::Crashed("the driver thread panicked".into()))?
    }
}

/// Starts running `graph` (compiled from `source`) with `options`.
pub fn start(mut graph: Graph, source: Arc<Source>, options: RunOptions) -> Result<RunHandle, RunError> {
    let state = options.base_dir.join(STATE_DIR);
    refuse_if_live(&state)?;
    // Before anything runs: every image, with the engine that will run it.
    let path = std::env::var_os("PATH");
    check_images(&mut graph, options.container_engine, &options.base_dir, path.as_deref()).map_err(RunError::Images)?;
    let graph = Arc::new(graph);
    // Remote workers can rejoin only a run that listens: otherwise their
    // tasks of a killed run are killed with the embedded worker's.
    let listens = options.listen.is_some();
    let stranded = if listens { Stranded::find(&state, &options.workflow) } else { Stranded::default() };
    let reaped = super::killed::orphans::reap(&state, listens);
    let (mut previous, mut stale) = read_previous(&state, &graph, &options)?;
    let (mut core, local) = build_core(&graph, &previous, &options, &source)?;
    let ended = stranded.ended_allocations();
    let until_us = crate::host::now_us() + REATTACH_WINDOW.as_micros() as u64;
    let (held, let_go) = stranded.hold(&graph, &mut core, until_us, &ended);
    stale.add_unfinished(unfinished(&state, &options.base_dir, &previous, |label| held.holds(label)));
    let run = RunDir::create(&state, options.share_with_group)?;
    let lock = run.lock()?;
    write_run_files(&run, &graph, &options)?;
    let listener = options.listen.as_deref().map(|address| listen(address, &run)).transpose()?;
    // Workers of killed runs read their run's access file as they try to rejoin.
    let redirected = AccessFile::read(&run.access()).map(|access| stranded.redirect(&access)).unwrap_or_default();
    let mut factory = JobFactory::new(graph.clone(), &options.base_dir, &run.path).map_err(RunError::Options)?;
    if options.dry_exec {
        factory.run_unread_conditions();
    }
    let (log, log_thread) = OutputLog::create(&run.output_log())?;
    let (journal, journal_thread) = super::books::journal_thread::start(JournalWriter::create(&run.journal())?);
    run.protect(&run.output_log())?;
    run.protect(&run.journal())?;
    let (events, events_rx) = std_mpsc::channel();
    let (spare_events, spare_events_rx) = std_mpsc::channel();
    let holding = (!held.is_empty()).then(|| {
        format!(
            "{} instance(s) that remote workers ran when the last run was killed are held for up to {}s for those workers to rejoin",
            held.len(),
            REATTACH_WINDOW.as_secs()
        )
    });
    let gone = (let_go > 0).then(|| {
        let mut jobs: Vec<String> = ended.into_iter().collect();
        jobs.sort();
        format!(
            "{let_go} instance(s) that remote workers ran when the last run was killed run again now: \
             the cluster job(s) they ran in ({}) no longer run",
            jobs.join(", ")
        )
    });
    let warnings = reaped
        .into_iter()
        .chain(redirected)
        .chain(gone)
        .chain(holding)
        .chain(std::mem::take(&mut previous.warnings))
        .collect();
    let summary = announce(&run, &graph, &options, listener.is_some(), warnings, &events);
    let (driver_tx, driver_events) = mpsc::unbounded_channel();
    let mut links = Links::default();
    if let Some(id) = local {
        links.insert(id, local_worker(id, &options, &log, &driver_tx));
    }
    let listening = listener.map(|(listener, secret)| listen_for_workers(listener, secret, &log, &options, &driver_tx));
    let listening = listening.transpose()?;
    let finally = FinallyCommand::new(&graph, &options, &log);
    let queue = options.queue.clone().map(|(profile, queue)| {
        let fits = super::alloc::planner::fits(&graph, &queue);
        AllocQueue::new(&profile, queue, fits, &run)
    });
    let alloc_log = queue.is_some().then(|| OutputSink::Log(log.clone()));
    // The killed runs' output of the instances adopted is copied in.
    let earlier_log = (!held.is_empty()).then(|| log.clone());
    // Only the workers, the queue and `[finally]` write the log from here on.
    drop(log);
    let setup = Setup {
        core,
        factory,
        links,
        driver_events,
        recorder: Recorder::new(journal, log_thread.health(), events.clone(), spare_events_rx),
        checks: CacheChecks::new(Arc::new(previous), options.dry_exec, checked_sender(&driver_tx)),
        queue: QueueSide::new(queue, alloc_log, options.local, options.base_dir.clone(), manager_sender(driver_tx)),
        stale,
        options,
        run_dir: run.clone(),
        source,
        summary,
        earlier_log,
        held,
    };
    let ending = Ending { run: run.clone(), log_thread, journal_thread, events, lock };
    let thread = std::thread::Builder::new()
        .name("flow-driver".into())
        .spawn(move || drive(setup, listening, finally, ending))?;
    Ok(RunHandle { run, events: events_rx, spare_events, thread })
}

/// The embedded worker, as worker `id`, writing to `log` and reporting to `driver`.
fn local_worker(
    id: WorkerId,
    options: &RunOptions,
    log: &OutputLogSender,
    driver: &mpsc::UnboundedSender<DriverEvent>,
) -> Link {
    let tx = driver.clone();
    let report = Arc::new(move |event| {
        let _ = tx.send(DriverEvent::Worker { worker: id, event });
    });
    let sink = OutputSink::Log(log.clone());
    Link::Local(LocalWorker::new(options.worker.clone(), sink, report, options.bind_cpus, options.guard.clone()))
}

/// Remote workers being accepted: the runtime their connections run on
/// (encoding, encryption, decoding, beside the driver's thread) and the
/// listener's task there.
struct Listening {
    runtime: tokio::runtime::Runtime,
    accepting: tokio::task::JoinHandle<()>,
}

/// Starts accepting workers on `listener`; what they send goes to `driver`
/// and their tasks' output to `log`.
fn listen_for_workers(
    listener: std::net::TcpListener,
    secret: Secret,
    log: &OutputLogSender,
    options: &RunOptions,
    driver: &mpsc::UnboundedSender<DriverEvent>,
) -> Result<Listening, RunError> {
    let runtime = net_runtime()?;
    let listener = {
        let _inside = runtime.enter();
        tokio::net::TcpListener::from_std(listener)?
    };
    let (sink, driver) = (OutputSink::Log(log.clone()), driver.clone());
    let accepting = runtime.spawn(super::workers::remote::listen(listener, secret, driver, sink, options.dry_exec));
    Ok(Listening { runtime, accepting })
}

/// Refuses to start while another `flow run` runs in `state`.
fn refuse_if_live(state: &Path) -> Result<(), RunError> {
    match RunDir::list(state).into_iter().find(RunDir::is_live) {
        Some(live) => Err(RunError::Options(format!(
            "another `flow run` is running this workflow's directory (run {}); wait for it or stop it",
            live.id
        ))),
        None => Ok(()),
    }
}

/// What earlier runs in `state` left: their successes (forced to run again
/// as `options` say), and the outputs that may have gone stale.
fn read_previous(state: &Path, graph: &Graph, options: &RunOptions) -> Result<(Previous, StaleOutputs), RunError> {
    let mut previous = Previous::load(state, &options.workflow);
    previous.force(graph, options.force, &options.only).map_err(RunError::Options)?;
    let stale = StaleOutputs::new(graph, &previous);
    Ok((previous, stale))
}

/// The scheduler core, with the embedded worker's id if there is one;
/// refuses tasks that can never run on the workers there will be.
fn build_core(
    graph: &Graph,
    previous: &Previous,
    options: &RunOptions,
    source: &Arc<Source>,
) -> Result<(Core, Option<WorkerId>), RunError> {
    // The command line's `--max-fails` or `--keep-going` overrides the workflow's.
    let workflow = if options.keep_going { None } else { graph.max_fails };
    let max_fails = options.max_fails.map(MaxFails::Count).or(workflow);
    let mut core = Core::new(graph, CoreOptions { max_fails });
    for group in previous.finished_groups(graph) {
        core.set_precheck(group);
    }
    keep_retry_schedule(&mut core, graph, previous);
    let local = options.local.then(|| core.add_worker(options.worker.clone(), None));
    // With remote workers still to come, nothing is impossible yet.
    let impossible = if options.listen.is_some() { Vec::new() } else { core.unschedulable() };
    if !impossible.is_empty() {
        let diagnostics = impossible
            .into_iter()
            .map(|(g, why)| {
                let group = graph.group(g);
                let span = why.key(&group.keys).unwrap_or(&group.span).clone();
                let message = format!("task `{}` can never run here: {why}", group.name);
                Diagnostic::new(Code::CompileImpossibleResources, message).at(span, why.label()).help(why.help())
            })
            .collect();
        return Err(RunError::Unschedulable { workflow: Arc::clone(source), diagnostics });
    }
    Ok((core, local))
}

/// Makes each instance an earlier run failed and meant to retry after a
/// `retry_delay` wait until then: resuming keeps the schedule, but what
/// `--force` or `--only` asks for runs at once.
fn keep_retry_schedule(core: &mut Core, graph: &Graph, previous: &Previous) {
    if !previous.has_retries() {
        return;
    }
    let now = crate::host::now_us();
    for (g, group) in graph.groups.iter().enumerate().filter(|(_, group)| group.retry_delay.is_some()) {
        for i in 0..group.count {
            let task = TaskId::new(GroupId(g as u32), i);
            if previous.is_forced(task) {
                continue;
            }
            if let Some(at) = previous.retry_at(&graph.label(task)).filter(|&at| at > now) {
                core.wait_until(task, at);
            }
        }
    }
}

/// Sends the run's first events (that it started, and `warnings`) and
/// returns its summary so far.
fn announce(
    run: &RunDir,
    graph: &Graph,
    options: &RunOptions,
    listening: bool,
    warnings: Vec<String>,
    events: &std_mpsc::Sender<Vec<Event>>,
) -> Summary {
    let summary = Summary {
        run_id: run.id.clone(),
        total: graph.instance_count(),
        dry_exec: options.dry_exec,
        ..Summary::default()
    };
    let mut first = vec![Event::RunStarted {
        run_id: run.id.clone(),
        run_dir: run.path.clone(),
        total: summary.total,
        tasks: graph.groups.len() as u64,
        dynamic: (0..graph.groups.len() as u32)
            .map(GroupId)
            .filter(|&g| graph.is_dynamic(g))
            .map(|g| graph.group(g).name.clone())
            .collect(),
        dropped: graph.dropped.iter().map(|d| d.name.clone()).collect(),
        access: listening.then(|| run.access()),
    }];
    first.extend(warnings.into_iter().map(|message| Event::Warning { message }));
    let _ = events.send(first);
    summary
}

/// The driver's thread: runs the loop on a single-threaded tokio runtime,
/// then `finally`, then ends the run.
fn drive(
    setup: Setup,
    listening: Option<Listening>,
    finally: Option<FinallyCommand>,
    ending: Ending,
) -> Result<Summary, RunError> {
    // Lets the CLI tests see how a crashed run is reported; debug builds only.
    #[cfg(debug_assertions)]
    if std::env::var_os("FLOW_DEBUG_PANIC").is_some_and(|v| v == "driver") {
        panic!("FLOW_DEBUG_PANIC=driver");
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (run_dir, options) = (setup.run_dir.clone(), setup.options.clone());
    let summary = runtime.block_on(async {
        let mut summary = Driver::new(setup).run().await;
        if let Some(listening) = &listening {
            listening.accepting.abort();
        }
        if let Some(finally) = finally {
            finally.run(&mut summary, &run_dir, &options).await;
        }
        summary
    });
    drop(runtime);
    if let Some(listening) = listening {
        listening.runtime.shutdown_timeout(Duration::from_secs(1));
    }
    ending.finish(summary)
}

/// The runtime of the remote workers' connections: a thread per core
/// beside the driver's, up to [`NET_THREADS`].
fn net_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.saturating_sub(1).clamp(1, NET_THREADS);
    tokio::runtime::Builder::new_multi_thread().worker_threads(threads).thread_name("flow-net").enable_all().build()
}

/// The most threads that serve remote workers' connections.
const NET_THREADS: usize = 4;

/// What ends a run once its loop is over: the writer threads, and the lock.
struct Ending {
    run: RunDir,
    log_thread: OutputLogHandle,
    journal_thread: JoinHandle<std::io::Result<()>>,
    events: std_mpsc::Sender<Vec<Event>>,
    lock: RunLock,
}

impl Ending {
    /// Waits for the writers, says what could not be stored, writes
    /// `summary.json`, and sends the last event.
    fn finish(self, mut summary: Summary) -> Result<Summary, RunError> {
        let health = self.log_thread.health();
        if let Err(e) = self.log_thread.finish() {
            summary.io_errors.push(format!("cannot write output.log: {e}"));
        }
        let journal =
            self.journal_thread.join().map_err(|_| RunError::Crashed("the journal thread panicked".into()))?;
        if let Err(e) = &journal {
            summary.io_errors.push(format!("cannot write the journal: {e}"));
        }
        record_lost_output(&self.run, &health.lost(), &mut summary);
        if journal.is_err() || !health.lost().is_empty() {
            count_what_was_recorded(&self.run, &mut summary);
        }
        if let Err(e) = self.run.write_summary(&summary) {
            summary.io_errors.push(format!("cannot write summary.json: {e}"));
        }
        let _ = self.events.send(vec![Event::RunFinished { summary: summary.clone() }]);
        drop(self.lock);
        Ok(summary)
    }
}

/// Journals as failed every attempt whose output did not all reach
/// `output.log`, even one already journaled as succeeded: its output is gone,
/// so the next run must run it again.
fn record_lost_output(run: &RunDir, lost: &[(TaskId, u32)], summary: &mut Summary) {
    if lost.is_empty() {
        return;
    }
    let reason = "its output could not be stored: output.log cannot be written".to_owned();
    let records: Vec<JournalRecord> = lost
        .iter()
        .map(|&(task, attempt)| {
            let event = JournalEvent::Failed { exit_code: None, signal: None, reason: reason.clone() };
            JournalRecord::new(crate::host::now_us(), task, attempt, event)
        })
        .collect();
    if let Err(e) = JournalWriter::create(&run.journal()).and_then(|mut w| w.append_batch(&records)) {
        summary.io_errors.push(format!(
            "cannot record that the output of {} instance(s) was lost ({e}); rerun them with `--only`",
            lost.len()
        ));
    }
}

/// After a storage failure, makes the summary say what the journal holds:
/// a success that could not be recorded, or whose output was lost, is not
/// one the next run builds on, so it is not counted as one.
fn count_what_was_recorded(run: &RunDir, summary: &mut Summary) {
    let Ok(journal) = read_journal(&run.journal()) else { return };
    let state = JournalState::from_records(&journal.records);
    let count = |status| state.iter().filter(|(_, e)| e.status == status).count() as u64;
    let (succeeded, cached) = (count(State::Succeeded), count(State::Cached));
    let unrecorded = (summary.succeeded + summary.cached).saturating_sub(succeeded + cached);
    if unrecorded > 0 {
        summary.io_errors.push(format!(
            "{unrecorded} finished instance(s) could not be recorded as done: the next run runs them again"
        ));
    }
    (summary.succeeded, summary.cached) = (succeeded, cached);
    summary.failed = summary.failed.max(count(State::Failed));
}

/// Binds the coordinator's address and writes the access file workers read.
fn listen(address: &str, run: &RunDir) -> Result<(std::net::TcpListener, Secret), RunError> {
    let listener = std::net::TcpListener::bind(address)
        .map_err(|e| RunError::Options(format!("cannot listen on `{address}`: {e}")))?;
    listener.set_nonblocking(true)?;
    let bound = listener.local_addr()?;
    // A worker must dial a real address, not the wildcard one bound to.
    let host = if bound.ip().is_unspecified() { crate::host::hostname() } else { bound.ip().to_string() };
    let secret = Secret::generate().map_err(|e| RunError::Options(e.to_string()))?;
    let access =
        AccessFile { address: format!("{host}:{}", bound.port()), secret: secret.clone(), run_id: run.id.clone() };
    run.write_access(&access).map_err(|e| RunError::Options(e.to_string()))?;
    Ok((listener, secret))
}

fn write_run_files(run: &RunDir, graph: &Graph, options: &RunOptions) -> std::io::Result<()> {
    let meta = Meta {
        workflow: options.workflow.clone(),
        started_us: crate::host::now_us(),
        dry_exec: options.dry_exec,
        command: options.command_line.clone(),
    };
    run.write_meta(&meta)?;
    run.write_graph(graph)?;
    run.reserve_summary()
}

/// Sends what the hashing threads found to the run loop.
fn checked_sender(tx: &mpsc::UnboundedSender<DriverEvent>) -> LoopSender<(TaskId, Lookup)> {
    let tx = tx.clone();
    LoopSender::new(move |(task, found)| tx.send(DriverEvent::Checked { task, found }).is_ok())
}

/// Sends the manager's answers to the run loop.
fn manager_sender(tx: mpsc::UnboundedSender<DriverEvent>) -> LoopSender<ManagerAnswer> {
    LoopSender::new(move |answer| tx.send(DriverEvent::Manager(answer)).is_ok())
}
