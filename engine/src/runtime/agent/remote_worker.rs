//! `flow worker`: a generic worker that joins a run over the network, runs
//! the jobs it is sent with the same code as the embedded worker, and
//! streams their output and results back.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use thiserror::Error;
use tokio::sync::mpsc;

use super::local::{LocalWorker, Report};
use super::output_sink::OutputSink;
use crate::ir::TaskId;
use crate::log::OutputRecord;
use crate::net::{self, AccessFile, NetError};
use crate::resources::WorkerShape;
use crate::runtime::protocol::job::Job;
use crate::runtime::protocol::messages::{HEARTBEAT, Offer, REPORT_HOLD, ToCoordinator, ToWorker};
use crate::runtime::protocol::outcome::{Outcome, Status, WorkerEvent};

/// How a worker is set up.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// The run's access file (address and secret).
    pub access: AccessFile,
    /// Dial this address instead of the access file's.
    pub connect: Option<String>,
    /// What the worker owns.
    pub resources: WorkerShape,
    /// Leave after this long (tasks are only given if they fit before).
    pub time_limit: Option<Duration>,
    /// Leave after this long without any task.
    pub idle_timeout: Option<Duration>,
    /// Bind tasks to their CPU ids.
    pub bind_cpus: bool,
    /// Ends the worker's tasks if it dies without doing so.
    pub guard: Option<Arc<super::guard::Guard>>,
    /// How long to keep trying to join while the coordinator cannot be
    /// reached or turns the connection away (it is starting, or busy with a
    /// flood of connections).
    pub reconnect_for: Duration,
    /// Told once each time joining fails and the worker starts retrying.
    pub on_retry: Option<fn(&JoinRetry)>,
    /// A zero-execution worker: each job succeeds at once, no process is
    /// started. It joins only a `--dry-exec` run.
    pub dry_exec: bool,
}

/// Joining failed for a reason that may pass; the worker tries again.
#[derive(Debug, Clone)]
pub struct JoinRetry {
    /// The address it dials.
    pub address: String,
    /// What went wrong, for people.
    pub error: String,
    /// How much longer it keeps trying.
    pub retry_for: Duration,
}

/// Why a worker stopped with an error.
#[derive(Debug, Error)]
pub enum WorkerError {
    /// Could not reach or talk to the coordinator.
    #[error("{0}")]
    Net(#[from] NetError),
    /// Could not start the async runtime.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Why a worker left normally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leave {
    /// The run ended: the coordinator said so.
    RunEnded,
    /// The connection to the coordinator was lost without a word (it was
    /// killed, or its machine or the network went down).
    CoordinatorLost,
    /// `--time-limit` was reached.
    TimeLimit,
    /// `--idle-timeout` passed without work.
    Idle,
    /// A signal (SIGTERM from the resource manager at the end of the
    /// allocation, Ctrl-C): its jobs were killed and run again elsewhere.
    Signal(&'static str),
    /// The coordinator would not have it, for this reason (a zero-execution
    /// worker and a real run, or the other way round).
    Refused(String),
}

/// Runs a worker until the run ends or a limit is reached.
pub fn run(options: WorkerOptions) -> Result<Leave, WorkerError> {
    run_copies(options, 1)
}

/// Runs `copies` workers from this one process, each with its own
/// connection and the same offer, until they leave; the first to fail, or
/// else the last to leave, says why. Many zero-execution workers on one
/// machine stand in for many nodes when the coordinator is measured.
pub fn run_copies(options: WorkerOptions, copies: usize) -> Result<Leave, WorkerError> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..copies.max(1) {
            workers.spawn(serve(options.clone()));
        }
        let mut last = Ok(Leave::RunEnded);
        while let Some(left) = workers.join_next().await {
            match left {
                Ok(Err(e)) => return Err(e),
                Ok(leave) => last = leave,
                Err(e) => return Err(WorkerError::Io(std::io::Error::other(e))),
            }
        }
        last
    })
}

async fn serve(options: WorkerOptions) -> Result<Leave, WorkerError> {
    let (tx, mut rx) = hello(&options).await?;
    // One writer owns the connection: results and heartbeats, and output
    // with backpressure (a bounded channel) so a slow link slows the tasks.
    // It ends once both channels are drained and closed, which happens when
    // the worker leaves.
    let (control, control_rx) = mpsc::unbounded_channel::<ToCoordinator>();
    let (output, output_rx) = mpsc::channel::<OutputRecord>(1024);
    // Jobs sent ahead, by the task they start after; their count tells the
    // writer whether results may be held back (see `REPORT_HOLD`).
    let waiting = Line::default();
    let writer = tokio::spawn(write(tx, control_rx, output_rx, Arc::clone(&waiting.len)));
    let (ended_tx, mut ended) = mpsc::unbounded_channel::<TaskId>();
    let dry = options.dry_exec.then(|| reporter(control.clone(), ended_tx.clone()));
    let local = LocalWorker::new(
        options.resources.clone(),
        OutputSink::Channel(output),
        reporter(control.clone(), ended_tx),
        options.bind_cpus,
        options.guard.clone(),
    );
    let mut jobs = Jobs { local, dry, control, waiting, running: HashSet::new() };
    let leave = jobs.serve(&mut rx, &mut ended, &options).await;
    jobs.leave(&leave, writer).await;
    Ok(leave)
}

/// Connects to the coordinator and says what this worker offers, trying
/// again with back-off while the failure may pass (see [`may_pass`]) and
/// `reconnect_for` has not run out.
async fn hello(options: &WorkerOptions) -> Result<(net::Sender, net::Receiver), WorkerError> {
    let address = options.connect.clone().unwrap_or_else(|| options.access.address.clone());
    let give_up = Instant::now() + options.reconnect_for;
    let mut pause = FIRST_PAUSE;
    let mut told = false;
    loop {
        let error = match join(options, &address).await {
            Ok(connection) => return Ok(connection),
            Err(e) => e,
        };
        let left = give_up.saturating_duration_since(Instant::now());
        if !may_pass(&error) || left.is_zero() {
            return Err(error.into());
        }
        if !told && let Some(tell) = &options.on_retry {
            tell(&JoinRetry { address: address.clone(), error: error.to_string(), retry_for: left });
        }
        told = true;
        tokio::time::sleep(pause.min(left)).await;
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// The first pause before joining again; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between two tries to join.
const MAX_PAUSE: Duration = Duration::from_secs(5);

/// One try to join: connect, authenticate, say hello.
async fn join(options: &WorkerOptions, address: &str) -> Result<(net::Sender, net::Receiver), NetError> {
    let (mut tx, rx) = net::connect(address, &options.access.secret).await?;
    let offer = Offer {
        hostname: crate::host::hostname(),
        shape: options.resources.clone(),
        time_limit: options.time_limit,
        allocation: crate::host::cluster_job(),
        dry_exec: options.dry_exec,
    };
    tx.send(&ToCoordinator::Hello(offer)).await?;
    Ok((tx, rx))
}

/// Whether a failure to join may pass if the worker tries again: the
/// coordinator is not listening (yet, or any more), is busy, or the
/// connection broke or stalled. A hang-up after the worker's first message
/// (its secret is wrong), a reply that does not authenticate, or a peer that
/// is not flow will not change.
fn may_pass(error: &NetError) -> bool {
    use crate::net::HandshakeError as H;
    match error {
        NetError::Connect { .. } => true,
        NetError::Refused { reason, .. } => matches!(reason, H::Busy | H::Io(_) | H::TimedOut),
        _ => false,
    }
}

/// The connection's writer: sends results, output and heartbeats to the
/// coordinator, in batches, until both channels are closed and drained;
/// holds a result back briefly while jobs wait `in_line`.
async fn write(
    mut tx: net::Sender,
    mut control_rx: mpsc::UnboundedReceiver<ToCoordinator>,
    mut output_rx: mpsc::Receiver<OutputRecord>,
    in_line: Arc<AtomicUsize>,
) {
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    let (mut control_open, mut output_open) = (true, true);
    while control_open || output_open {
        let msg = tokio::select! {
            msg = control_rx.recv(), if control_open => match msg {
                Some(msg) => msg,
                None => { control_open = false; continue; }
            },
            record = output_rx.recv(), if output_open => match record {
                Some(record) => ToCoordinator::Output(record),
                None => { output_open = false; continue; }
            },
            _ = heartbeat.tick() => ToCoordinator::Heartbeat,
        };
        if matches!(msg, ToCoordinator::Finished { .. }) && in_line.load(Ordering::Relaxed) > 0 {
            tokio::time::sleep(REPORT_HOLD).await;
        }
        // Results and output that queued up meanwhile travel with it.
        let more = || match control_rx.try_recv() {
            Ok(msg) => Some(msg),
            Err(_) => output_rx.try_recv().ok().map(ToCoordinator::Output),
        };
        if tx.send_batch(&msg, more).await.is_err() {
            break;
        }
    }
}

/// Where the embedded worker reports a finished job: `ended` first, so
/// what waits for it starts before the report travels, then `control`.
fn reporter(control: mpsc::UnboundedSender<ToCoordinator>, ended: mpsc::UnboundedSender<TaskId>) -> Report {
    Arc::new(move |event| match event {
        WorkerEvent::Finished { task, attempt, outcome } => {
            // Start what waits for this task before the report travels.
            let _ = ended.send(task);
            let _ = control.send(ToCoordinator::Finished { task, attempt, outcome });
        }
    })
}

/// The jobs this worker was given.
struct Jobs {
    local: LocalWorker,
    /// For a zero-execution worker, where a job is reported done at once.
    dry: Option<Report>,
    /// Where results and goodbyes go.
    control: mpsc::UnboundedSender<ToCoordinator>,
    /// Jobs sent ahead, waiting for the task they start after.
    waiting: Line,
    /// Tasks accepted and not yet ended: running here, or waiting in line.
    running: HashSet<TaskId>,
}

impl Jobs {
    /// Runs the jobs the coordinator sends (from `rx`) until the run ends or
    /// a limit is reached; `ended` says which tasks ended.
    async fn serve(
        &mut self,
        rx: &mut net::Receiver,
        ended: &mut mpsc::UnboundedReceiver<TaskId>,
        options: &WorkerOptions,
    ) -> Leave {
        let started = Instant::now();
        let mut last_busy = Instant::now();
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        let mut signals = std::pin::pin!(signalled());
        loop {
            tokio::select! {
                // Ends first: a job sent after one that just ended then starts at once.
                biased;
                Some(task) = ended.recv() => self.ended(task),
                name = &mut signals => return Leave::Signal(name),
                msg = rx.recv::<ToWorker>() => match msg {
                    Ok(Some(ToWorker::Start { job, after })) => {
                        last_busy = Instant::now();
                        self.start(*job, after);
                    }
                    Ok(Some(ToWorker::StopAll)) => self.stop_all(),
                    Ok(Some(ToWorker::Shutdown)) => return Leave::RunEnded,
                    Ok(Some(ToWorker::Refuse(reason))) => return Leave::Refused(reason),
                    Ok(None) | Err(_) => return Leave::CoordinatorLost,
                },
                _ = tick.tick() => {
                    if self.local.running() > 0 {
                        last_busy = Instant::now();
                    }
                    if options.time_limit.is_some_and(|t| started.elapsed() >= t) {
                        return Leave::TimeLimit;
                    }
                    if options.idle_timeout.is_some_and(|t| last_busy.elapsed() >= t) {
                        return Leave::Idle;
                    }
                }
            }
        }
    }

    /// Starts `job`, or puts it in line when the task it comes `after` has not ended.
    fn start(&mut self, job: Job, after: Option<TaskId>) {
        // Its predecessor may itself still wait in line: it has not ended either.
        self.running.insert(job.task);
        match after.filter(|a| self.running.contains(a)) {
            Some(after) => self.waiting.insert(after, job),
            None => self.run(job),
        }
    }

    /// `task` ended: the job waiting for it starts.
    fn ended(&mut self, task: TaskId) {
        self.running.remove(&task);
        if let Some(job) = self.waiting.remove(&task) {
            self.run(job);
        }
    }

    /// Starts `job`'s process, or for a zero-execution worker reports it
    /// done at once.
    fn run(&self, job: Job) {
        match &self.dry {
            Some(report) => {
                let (task, attempt) = (job.task, job.attempt);
                report(WorkerEvent::Finished { task, attempt, outcome: Outcome::instant(Status::Succeeded) });
            }
            None => self.local.start(job),
        }
    }

    /// Stops every job; those that never started end as stopped too.
    fn stop_all(&mut self) {
        for job in self.waiting.drain() {
            self.running.remove(&job.task);
            let outcome = Outcome::instant(Status::Stopped);
            let _ = self.control.send(ToCoordinator::Finished { task: job.task, attempt: job.attempt, outcome });
        }
        self.local.stop_all();
    }

    /// Says why the worker leaves (unless the coordinator knows), stops its
    /// jobs, lets them report, and closes the connection once `writer` is done.
    async fn leave(self, leave: &Leave, writer: tokio::task::JoinHandle<()>) {
        let leaving = match leave {
            Leave::RunEnded | Leave::CoordinatorLost | Leave::Refused(_) => None,
            Leave::TimeLimit => Some(("it reached its time limit".to_owned(), true)),
            Leave::Idle => Some(("it had no work for its idle timeout".to_owned(), true)),
            Leave::Signal(name) => Some((format!("it was stopped by {name}"), false)),
        };
        if let Some((reason, planned)) = leaving {
            let _ = self.control.send(ToCoordinator::Leaving { reason, planned });
        }
        self.local.stop_all();
        // Let stopped tasks report, then close the connection.
        let deadline = Instant::now() + Duration::from_secs(3);
        while self.local.running() > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        drop(self);
        let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    }
}

/// Jobs sent ahead, by the task each starts after, with their count shared
/// with the connection's writer.
#[derive(Default)]
struct Line {
    jobs: HashMap<TaskId, Job>,
    len: Arc<AtomicUsize>,
}

impl Line {
    fn insert(&mut self, after: TaskId, job: Job) {
        self.jobs.insert(after, job);
        self.len.store(self.jobs.len(), Ordering::Relaxed);
    }

    /// The job waiting for `task` to end, taken out of line.
    fn remove(&mut self, task: &TaskId) -> Option<Job> {
        let job = self.jobs.remove(task);
        self.len.store(self.jobs.len(), Ordering::Relaxed);
        job
    }

    fn drain(&mut self) -> impl Iterator<Item = Job> + '_ {
        self.len.store(0, Ordering::Relaxed);
        self.jobs.drain().map(|(_, job)| job)
    }
}

/// Resolves on SIGTERM (the manager ends the allocation) or SIGINT, with the signal's name.
async fn signalled() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}
