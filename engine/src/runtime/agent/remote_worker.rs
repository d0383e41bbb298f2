//! `flow worker`: a generic worker that joins a run over the network, runs
//! the jobs it is sent with the same code as the embedded worker, and
//! streams their output and results back.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hashbrown::{HashMap, HashSet};
use thiserror::Error;
use tokio::sync::mpsc;

use super::heard::Heard;
use super::local::{LocalWorker, Report};
use super::outbox::{Outbox, SharedOutbox, lock};
use super::outbox_writer::{Writer, write};
use super::output_budget::OutputBudget;
use super::output_sink::OutputSink;
use crate::ir::TaskId;
use crate::log::OutputRecord;
use crate::net::{self, AccessFile, NetError};
use crate::resources::WorkerShape;
use crate::rundir::RunDir;
use crate::runtime::protocol::job::Job;
use crate::runtime::protocol::messages::{
    CarriedTask, HEARTBEAT_TIMEOUT, Offer, StoredOutput, ToCoordinator, ToWorker,
};
use crate::runtime::protocol::outcome::{Outcome, Status, WorkerEvent};

/// How a worker is set up.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// The run's access file (address and secret).
    pub access: AccessFile,
    /// Where it was read from: read again at each try to rejoin, since a
    /// resumed run rewrites it with its own address and secret.
    pub access_file: Option<PathBuf>,
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
    /// flood of connections), and to keep trying to rejoin, tasks running,
    /// once the connection to it dropped.
    pub reconnect_for: Duration,
    /// Told once each time joining fails and the worker starts retrying.
    pub on_retry: Option<fn(&JoinRetry)>,
    /// Told each time the worker is in the run: it joined, or rejoined.
    pub on_join: Option<fn(&JoinedRun)>,
    /// A zero-execution worker: each job succeeds at once, no process is
    /// started. It joins only a `--dry-exec` run.
    pub dry_exec: bool,
    /// Bytes of its tasks' output the worker holds at most before it stops
    /// reading their pipes (they wait to write) until the coordinator has
    /// them: what a slow or lost connection leaves in memory.
    pub output_buffer: u64,
}

/// The worker is in the run: the run accepted it.
#[derive(Debug, Clone)]
pub struct JoinedRun {
    /// The address it joined.
    pub address: String,
    /// It joined again after its connection dropped.
    pub rejoining: bool,
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
    /// Whether it lost the coordinator it had joined and tries to rejoin,
    /// its tasks running on.
    pub rejoining: bool,
    /// Whether it rejoins after hearing nothing from its coordinator for
    /// the heartbeat timeout: it stopped its tasks (fencing).
    pub fenced: bool,
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
    let (tx, rx) = match hello(&options, Vec::new, false, false).await? {
        Joined::Connected(tx, rx, ..) => (tx, rx),
        Joined::Left(leave) => return Ok(leave),
    };
    // One writer owns the connection: results and heartbeats, and output
    // with backpressure (a bounded channel) so a slow link slows the tasks.
    // It keeps what it could not send while the worker rejoins, and ends
    // once both channels are drained and closed, when the worker leaves.
    let (control, control_rx) = mpsc::unbounded_channel::<ToCoordinator>();
    let (output, output_rx) = mpsc::channel::<OutputRecord>(1024);
    let (connections, connections_rx) = mpsc::unbounded_channel();
    let (lost, lost_rx) = mpsc::unbounded_channel();
    // Jobs sent ahead, by the task they start after; their count tells the
    // writer whether results may be held back (see `REPORT_HOLD`).
    let waiting = Line::default();
    let budget = Arc::new(OutputBudget::new(options.output_buffer));
    let outbox: SharedOutbox = Arc::new(Mutex::new(Outbox::new(budget.clone())));
    let in_line = Arc::clone(&waiting.len);
    let writer = Writer { tx: Some(tx), connections: connections_rx, lost, outbox: outbox.clone(), in_line };
    let writer = tokio::spawn(write(writer, control_rx, output_rx));
    let (ended_tx, mut ended) = mpsc::unbounded_channel::<TaskId>();
    let dry = options.dry_exec.then(|| reporter(control.clone(), ended_tx.clone()));
    let local = LocalWorker::new(
        options.resources.clone(),
        OutputSink::Channel(output, budget.clone()),
        reporter(control.clone(), ended_tx),
        options.bind_cpus,
        options.guard.clone(),
    );
    let mut jobs = Jobs {
        local,
        dry,
        control,
        waiting,
        running: HashSet::new(),
        outbox,
        budget,
        connections,
        dying: HashSet::new(),
        guard: options.guard.clone(),
    };
    let leave = jobs.serve(rx, &mut ended, lost_rx, &options).await;
    jobs.leave(&leave, writer).await;
    Ok(leave)
}

/// How a try to join ended.
enum Joined {
    /// Connected, with the tasks the run said to forget and how much of
    /// the output of the others it has (for a worker that carried some).
    Connected(net::Sender, net::Receiver, Vec<TaskId>, Vec<StoredOutput>),
    /// The run answered a rejoining worker that it must leave.
    Left(Leave),
}

/// Connects to the coordinator and says what this worker offers and which
/// tasks it carries (`carried`, asked anew at each try), trying again with
/// back-off while the failure may pass (see [`may_pass`]; when `rejoining`,
/// any failure may: a resumed run is starting and rewrites the access file)
/// and `reconnect_for` has not run out. A worker that carries tasks waits
/// for the run's answer about them.
async fn hello(
    options: &WorkerOptions,
    carried: impl Fn() -> Vec<CarriedTask>,
    rejoining: bool,
    fenced: bool,
) -> Result<Joined, WorkerError> {
    let give_up = Instant::now() + options.reconnect_for;
    let mut pause = FIRST_PAUSE;
    let mut told = false;
    let mut access = options.access.clone();
    if fenced && let Some(tell) = &options.on_retry {
        // Said at once, rejoined at once or not: its tasks were stopped.
        let address = options.connect.clone().unwrap_or_else(|| access.address.clone());
        tell(&JoinRetry { address, error: String::new(), retry_for: options.reconnect_for, rejoining, fenced });
        told = true;
    }
    loop {
        if rejoining && let Some(file) = &options.access_file {
            // A resumed run rewrites the file with its address and secret.
            access = AccessFile::read(file).unwrap_or(access);
        }
        let address = options.connect.clone().unwrap_or_else(|| access.address.clone());
        let error = match join(options, &access, &address, carried()).await {
            Ok(joined) => {
                if let (Joined::Connected(..), Some(tell)) = (&joined, &options.on_join) {
                    tell(&JoinedRun { address, rejoining });
                }
                return Ok(joined);
            }
            Err(e) => e,
        };
        if options.access_file.as_deref().and_then(RunDir::of_access_file).is_some_and(|run| run.is_finished()) {
            // Started late, or away while the run ended: nothing to join.
            return Ok(Joined::Left(Leave::RunEnded));
        }
        let left = give_up.saturating_duration_since(Instant::now());
        if !(rejoining || may_pass(&error)) || left.is_zero() {
            return Err(error.into());
        }
        if !told && let Some(tell) = &options.on_retry {
            tell(&JoinRetry { address: address.clone(), error: error.to_string(), retry_for: left, rejoining, fenced });
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

/// One try to join: connect, authenticate, say hello; with `carried`
/// tasks, wait for the run's answer about them.
async fn join(
    options: &WorkerOptions,
    access: &AccessFile,
    address: &str,
    carried: Vec<CarriedTask>,
) -> Result<Joined, NetError> {
    let (mut tx, mut rx) = net::connect(address, &access.secret).await?;
    let carries = !carried.is_empty();
    let offer = Offer {
        hostname: crate::host::hostname(),
        shape: options.resources.clone(),
        time_limit: options.time_limit,
        allocation: crate::host::cluster_job(),
        dry_exec: options.dry_exec,
        carried,
    };
    tx.send(&ToCoordinator::Hello(offer)).await?;
    if !carries {
        return Ok(Joined::Connected(tx, rx, Vec::new(), Vec::new()));
    }
    let mut stored = Vec::new();
    loop {
        match tokio::time::timeout(HEARTBEAT_TIMEOUT, rx.recv::<ToWorker>()).await {
            Ok(Ok(Some(ToWorker::Stored(s)))) => stored = s,
            Ok(Ok(Some(ToWorker::Heartbeat))) => {}
            Ok(Ok(Some(ToWorker::Forget(forget)))) => return Ok(Joined::Connected(tx, rx, forget, stored)),
            Ok(Ok(Some(ToWorker::Refuse(reason)))) => return Ok(Joined::Left(Leave::Refused(reason))),
            Ok(Ok(Some(ToWorker::Shutdown))) => return Ok(Joined::Left(Leave::RunEnded)),
            Ok(Err(e)) => return Err(e),
            Ok(Ok(_)) | Err(_) => {
                let reason = crate::net::HandshakeError::TimedOut;
                return Err(NetError::Refused { peer: address.to_owned(), reason });
            }
        }
    }
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
    /// What the writer has yet to send, and the jobs carried until their results are.
    outbox: SharedOutbox,
    /// The output held, and its limit.
    budget: Arc<OutputBudget>,
    /// Where a new connection goes to the writer once the worker rejoins.
    connections: mpsc::UnboundedSender<net::Sender>,
    /// Forgotten tasks being killed: their end is no end of a later attempt.
    dying: HashSet<TaskId>,
    /// Ends the tasks if the worker dies, or stops hearing its coordinator while paused.
    guard: Option<Arc<super::guard::Guard>>,
}

/// A try to rejoin a coordinator, running beside the jobs.
type Rejoin<'a> = Pin<Box<dyn Future<Output = Result<Joined, WorkerError>> + Send + 'a>>;

impl Jobs {
    /// Runs the jobs the coordinator sends (from `rx`) until the run ends or
    /// a limit is reached; `ended` says which tasks ended. When the
    /// connection drops without a goodbye (the writer says so on `lost`,
    /// or `rx` ends), the tasks run on while the worker tries to rejoin for
    /// `--reconnect-for`; it leaves when that runs out.
    async fn serve(
        &mut self,
        rx: net::Receiver,
        ended: &mut mpsc::UnboundedReceiver<TaskId>,
        mut lost: mpsc::UnboundedReceiver<()>,
        options: &WorkerOptions,
    ) -> Leave {
        let started = Instant::now();
        let mut last_busy = Instant::now();
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        let mut signals = std::pin::pin!(signalled());
        let mut rx = Some(rx);
        let mut rejoin: Option<Rejoin<'_>> = None;
        let mut heard = Heard::new(self.guard.clone());
        loop {
            let lost_now = tokio::select! {
                // Ends first: a job sent after one that just ended then starts at once.
                biased;
                Some(task) = ended.recv() => {
                    self.ended(task);
                    false
                }
                name = &mut signals => return Leave::Signal(name),
                msg = receive(&mut rx) => match msg.inspect(|msg| if msg.is_some() { heard.now() }) {
                    Ok(Some(ToWorker::Heartbeat)) => false,
                    Ok(Some(ToWorker::Start { job, after })) => {
                        last_busy = Instant::now();
                        self.start(*job, after);
                        false
                    }
                    Ok(Some(ToWorker::StopAll)) => {
                        self.stop_all();
                        false
                    }
                    Ok(Some(ToWorker::Forget(tasks))) => {
                        self.forget(&tasks);
                        false
                    }
                    Ok(Some(ToWorker::Stored(stored))) => {
                        lock(&self.outbox).resume(&stored);
                        false
                    }
                    Ok(Some(ToWorker::Shutdown)) => return Leave::RunEnded,
                    Ok(Some(ToWorker::Refuse(reason))) => return Leave::Refused(reason),
                    Ok(None) | Err(_) => true,
                },
                Some(()) = lost.recv() => true,
                joined = async { rejoin.as_mut()?.await.ok() }, if rejoin.is_some() => {
                    rejoin = None;
                    match joined {
                        Some(Joined::Connected(tx, new_rx, forget, stored)) => {
                            heard.now();
                            self.forget(&forget);
                            lock(&self.outbox).resume(&stored);
                            let _ = self.connections.send(tx);
                            rx = Some(new_rx);
                        }
                        Some(Joined::Left(leave)) => return leave,
                        // `--reconnect-for` ran out.
                        None => return Leave::CoordinatorLost,
                    }
                    false
                }
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
                    // Silent for the timeout: the coordinator declares it lost.
                    rx.is_some() && heard.is_stale()
                }
            };
            if lost_now && rejoin.is_none() {
                rx = None;
                self.drop_line();
                lock(&self.outbox).lost(Instant::now());
                let fenced = heard.is_stale();
                if fenced {
                    self.fence();
                } else {
                    // Closed while it heard its coordinator: that was killed; a resumed run takes the tasks over.
                    heard.keep_tasks();
                }
                let outbox = self.outbox.clone();
                rejoin = Some(Box::pin(hello(options, move || lock(&outbox).carried(), true, fenced)));
            }
        }
    }

    /// Starts `job`, or puts it in line when the task it comes `after` has not ended.
    fn start(&mut self, job: Job, after: Option<TaskId>) {
        // Its predecessor may itself still wait in line: it has not ended either.
        self.running.insert(job.task);
        lock(&self.outbox).start(&job);
        match after.filter(|a| self.running.contains(a)) {
            Some(after) => self.waiting.insert(after, job),
            None => self.run(job),
        }
    }

    /// `task` ended: the job waiting for it starts.
    fn ended(&mut self, task: TaskId) {
        if self.dying.remove(&task) {
            return;
        }
        self.running.remove(&task);
        if let Some(job) = self.waiting.remove(&task) {
            self.run(job);
        }
    }

    /// The connection dropped: jobs waiting in line never start (the run
    /// that sent them did not know them started; the resumed one runs them).
    fn drop_line(&mut self) {
        let mut outbox = lock(&self.outbox);
        for job in self.waiting.drain() {
            self.running.remove(&job.task);
            outbox.drop_job(job.task);
        }
    }

    /// The run did not hold `tasks` for this worker: each is killed if it
    /// runs, and nothing more of it is said.
    fn forget(&mut self, tasks: &[TaskId]) {
        for &task in tasks {
            if lock(&self.outbox).forget(task).is_some() && self.running.remove(&task) {
                self.dying.insert(task);
                self.local.kill(task);
            }
        }
    }

    /// Fencing: the worker has not heard its coordinator for
    /// [`HEARTBEAT_TIMEOUT`], so the coordinator may have declared it lost
    /// and may start its tasks elsewhere once [`FENCE_MARGIN`] more has
    /// passed: it stops every task now, and nothing of them is said — but
    /// for those that ended on their own (a late result, which a
    /// coordinator that has not started the instance again records).
    ///
    /// [`FENCE_MARGIN`]: crate::runtime::protocol::messages::FENCE_MARGIN
    fn fence(&mut self) {
        let tasks = lock(&self.outbox).without_result();
        self.forget(&tasks);
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
        // Their output readers no longer wait for room.
        self.budget.close();
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

/// The next message on the connection, if there is one; never, while there is none.
async fn receive(rx: &mut Option<net::Receiver>) -> Result<Option<ToWorker>, NetError> {
    match rx {
        Some(rx) => rx.recv::<ToWorker>().await,
        None => std::future::pending().await,
    }
}
