//! [`LocalWorker`]: executes jobs as processes on this machine — the
//! embedded worker of `flow run`. Each job runs in its own tokio task: write
//! the chunk file, check the fingerprint, start the process, stream its
//! output into the run log, enforce the timeout, check declared outputs, and
//! report one [`WorkerEvent`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

use super::guard::{Guard, WATCH_AFTER};
use super::output_sink::OutputSink;
use super::process::{Exit, PipesClosed, Process};
use super::program::{failure_reason, missing_engine};
use super::spawn::{signal_group, spawn};
use crate::host::now_us;
use crate::ir::{TIMED_OUT, TaskId};
use crate::log::{FileHashes, OutputRecord, OutputStamp, OutputStream};
use crate::resources::WorkerShape;
use crate::rundir::create_dirs;
use crate::runtime::protocol::fingerprint::{
    Fingerprint, fingerprint, fingerprint_and_reads, reads_files, stamp_outputs,
};
use crate::runtime::protocol::job::Job;
use crate::runtime::protocol::outcome::{Outcome, Status, WorkerEvent};
use crate::runtime::protocol::read_stamps::ReadStamps;
use crate::units::{DurationStyle, duration};

/// Bytes of stderr kept per running task, to show when it fails.
const STDERR_TAIL: usize = 2048;
/// Most bytes read from a task's pipe into one log record.
const READ_CHUNK: usize = 64 * 1024;
/// Grace between SIGTERM and SIGKILL when a task is stopped.
const KILL_GRACE: Duration = Duration::from_secs(1);

/// Where a worker reports finished jobs.
pub type Report = Arc<dyn Fn(WorkerEvent) + Send + Sync>;

/// Runs jobs as child processes of flow.
pub struct LocalWorker {
    resources: WorkerShape,
    log: OutputSink,
    report: Report,
    stop: watch::Sender<bool>,
    running: Arc<Mutex<HashMap<TaskId, u32>>>,
    bind_cpus: bool,
    guard: Option<Arc<Guard>>,
}

impl LocalWorker {
    /// A worker owning `resources` that writes output to `log` and calls
    /// `report` when a job ends; `guard` ends its tasks if it dies first.
    pub fn new(
        resources: WorkerShape,
        log: OutputSink,
        report: Report,
        bind_cpus: bool,
        guard: Option<Arc<Guard>>,
    ) -> Self {
        let (stop, _) = watch::channel(false);
        Self { resources, log, report, stop, running: Arc::default(), bind_cpus, guard }
    }

    /// What this worker owns.
    pub fn resources(&self) -> &WorkerShape {
        &self.resources
    }

    /// Starts `job` (whether it is unchanged was decided before it was given).
    pub fn start(&self, job: Job) {
        let ctx = JobContext {
            log: self.log.clone(),
            stop: self.stop.subscribe(),
            running: self.running.clone(),
            bind_cpus: self.bind_cpus,
            guard: self.guard.clone(),
        };
        let report = self.report.clone();
        tokio::spawn(async move {
            let (task, attempt) = (job.task, job.attempt);
            let outcome = ctx.execute(job).await;
            report(WorkerEvent::Finished { task, attempt, outcome });
        });
    }

    /// How many jobs are running.
    pub fn running(&self) -> usize {
        self.running.lock().map_or(0, |r| r.len())
    }

    /// Kills the process of job `task` if it runs; it is reported as any end.
    pub fn kill(&self, task: TaskId) {
        if let Some(pgid) = self.running.lock().ok().and_then(|r| r.get(&task).copied()) {
            signal_group(pgid, Signal::SIGKILL);
        }
    }

    /// Stops every running job: SIGTERM to each process group, SIGKILL after a grace period.
    pub fn stop_all(&self) {
        let _ = self.stop.send(true);
    }
}

struct JobContext {
    log: OutputSink,
    stop: watch::Receiver<bool>,
    running: Arc<Mutex<HashMap<TaskId, u32>>>,
    bind_cpus: bool,
    guard: Option<Arc<Guard>>,
}

/// How a job's process came to end.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    /// It exited by itself.
    Exited,
    /// Its timeout passed: it was killed.
    TimedOut,
    /// The worker was told to stop: it was killed.
    Stopped,
}

impl JobContext {
    async fn execute(mut self, job: Job) -> Outcome {
        let started = Instant::now();
        let failed = |reason: String| Outcome::new(Status::failed(None, None, reason), None, String::new(), started);
        let (fp, reads, read) = match prepare(&job).await {
            Ok(prepared) => prepared,
            Err(reason) => return failed(reason),
        };
        let spawned = match spawn(&job, self.bind_cpus) {
            Ok(spawned) => spawned,
            Err(e) => return failed(could_not_start(&job, &e)),
        };
        let exec_error = spawned.exec_error;
        let mut child = spawned.process;
        let pgid = child.id();
        self.running.lock().map(|mut r| r.insert(job.task, pgid)).ok();
        let tail = Arc::new(Mutex::new(Vec::new()));
        let pipes = PipesClosed::new(usize::from(spawned.stdout.is_some()) + usize::from(spawned.stderr.is_some()));
        child.hint(pipes.clone());
        let (log, closed) = (&self.log, &pipes);
        let readers = [
            spawned.stdout.map(|s| pump(s, &job, OutputStream::Stdout, log.clone(), None, closed.clone())),
            spawned
                .stderr
                .map(|s| pump(s, &job, OutputStream::Stderr, log.clone(), Some(tail.clone()), closed.clone())),
        ];
        let (exit, end) = self.wait(&mut child, pgid, job.timeout).await;
        for reader in readers.into_iter().flatten() {
            let _ = reader.await;
        }
        self.running.lock().map(|mut r| r.remove(&job.task)).ok();
        if let Some(e) = exec_error.and_then(|error| error.get()) {
            return failed(could_not_start(&job, &e));
        }
        let stderr_tail = tail.lock().map(|t| String::from_utf8_lossy(&t).into_owned()).unwrap_or_default();
        let usage = exit.as_ref().ok().map(|exit| exit.usage);
        let succeeded = end == End::Exited && exit.as_ref().is_ok_and(|exit| exit.status.success());
        let stamps = if succeeded { stamps(&job).await } else { Ok(Vec::new()) };
        let untrusted = if succeeded { changed(&job, read).await } else { None };
        let (mut status, outputs) = status(exit.map(|exit| exit.status), end, job.timeout, stamps);
        if let Status::Failed { exit_code: Some(code), reason, .. } = &mut status {
            if let Some(better) = failure_reason(&job, *code) {
                *reason = better;
            }
        }
        Outcome { usage, outputs, untrusted, reads, ..Outcome::new(status, Some(fp), stderr_tail, started) }
    }

    /// Waits for the process of group `pgid` to end, killing it when its
    /// `timeout` passes or the worker stops; hands it to the guard while it
    /// outlasts [`WATCH_AFTER`] (at once while the guard holds a lease).
    /// Whatever it left in its group is killed.
    async fn wait(
        &mut self,
        child: &mut Process,
        pgid: u32,
        timeout: Option<Duration>,
    ) -> (std::io::Result<Exit>, End) {
        let deadline = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let stop = async {
            let _ = self.stop.wait_for(|s| *s).await;
        };
        // A task that outlasts WATCH_AFTER is handed to the guard.
        let guarded = self.guard.is_some();
        let watch = async {
            if guarded {
                tokio::time::sleep(WATCH_AFTER).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::pin!(deadline, stop, watch);
        // Under a lease, watched from the start (see `guard.rs`).
        let mut watched = self.guard.as_ref().is_some_and(|guard| guard.is_leased());
        if let Some(guard) = self.guard.as_ref().filter(|_| watched) {
            guard.watch(pgid);
        }
        let ended = loop {
            tokio::select! {
                status = child.wait() => break (status, End::Exited),
                () = &mut deadline => break (terminate(pgid, child).await, End::TimedOut),
                () = &mut stop => break (terminate(pgid, child).await, End::Stopped),
                () = &mut watch, if !watched => {
                    watched = true;
                    if let Some(guard) = &self.guard {
                        guard.watch(pgid);
                    }
                }
            }
        };
        // Whatever the task left behind in its group goes with it.
        signal_group(pgid, Signal::SIGKILL);
        if let Some(guard) = self.guard.as_ref().filter(|_| watched) {
            guard.release(pgid);
        }
        ended
    }
}

/// Why `job`'s process could not start, from the error of its start.
fn could_not_start(job: &Job, e: &std::io::Error) -> String {
    if !job.cwd.is_dir() {
        format!("could not start: working directory `{}` does not exist", job.cwd.display())
    } else {
        missing_engine(job, e).unwrap_or_else(|| format!("could not start: {e}"))
    }
}

/// Gets `job` ready to start: writes its chunk file, takes the ids of the
/// files it reads and then hashes it, and each file it reads, before the
/// process may change anything (for the journal), and makes its outputs'
/// directories.
async fn prepare(job: &Job) -> Result<(Fingerprint, Option<FileHashes>, ReadStamps), String> {
    if let Some((path, text)) = &job.chunk {
        write_chunk(path, text, &job.label).map_err(|e| format!("could not write chunk file: {e}"))?;
    }
    let prepared = if !reads_files(job) {
        (fingerprint(job), None, ReadStamps::default())
    } else {
        let copy = job.clone();
        tokio::task::spawn_blocking(move || {
            let read = ReadStamps::take(&copy);
            let (fingerprint, reads) = fingerprint_and_reads(&copy);
            (fingerprint, Some(reads), read)
        })
        .await
        .map_err(|e| format!("could not hash inputs: {e}"))?
    };
    for output in &job.outputs {
        if let Some(parent) = output.parent() {
            let _ = fs_err::create_dir_all(parent);
        }
    }
    if let Some(setup) = &job.setup {
        // A status left by an earlier attempt must not be read as this one's.
        let _ = fs_err::remove_file(&setup.status_file);
        if let Some(parent) = setup.status_file.parent() {
            // As private as the run directory it sits in (0700, or 0750 shared with the group).
            let mode = parent
                .parent()
                .and_then(|run| fs_err::metadata(run).ok())
                .map_or(0o700, |m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o750);
            create_dirs(parent, mode).map_err(|e| format!("could not make the setup status directory: {e}"))?;
        }
    }
    Ok(prepared)
}

/// A file `job` reads that changed since `read` was taken, off the loop.
async fn changed(job: &Job, read: ReadStamps) -> Option<String> {
    if !reads_files(job) {
        return None;
    }
    let base = job.base_dir.clone();
    tokio::task::spawn_blocking(move || read.changed(&base)).await.ok().flatten()
}

/// The stamps of `job`'s declared outputs, or the first one missing. Small
/// outputs are stamped at once; large ones off the loop, where hashing them
/// does not hold up other tasks.
async fn stamps(job: &Job) -> Result<Vec<OutputStamp>, PathBuf> {
    if job.outputs.is_empty() {
        Ok(Vec::new())
    } else if outputs_are_small(job) {
        stamp_outputs(job).map_err(Path::to_path_buf)
    } else {
        let copy = job.clone();
        tokio::task::spawn_blocking(move || stamp_outputs(&copy).map_err(Path::to_path_buf))
            .await
            .unwrap_or_else(|_| Err(PathBuf::new()))
    }
}

/// How a job ended, from its process's `exit`, how it came to `end` (with
/// its `timeout`) and its outputs' `stamps`; with the stamps of a success.
fn status(
    exit: std::io::Result<ExitStatus>,
    end: End,
    timeout: Option<Duration>,
    stamps: Result<Vec<OutputStamp>, PathBuf>,
) -> (Status, Vec<OutputStamp>) {
    let status = match exit {
        _ if end == End::Stopped => Status::Stopped,
        _ if end == End::TimedOut => Status::failed(
            None,
            None,
            format!("{TIMED_OUT} {}", duration(timeout.unwrap_or_default().as_micros() as u64, DurationStyle::Whole)),
        ),
        Ok(s) if s.success() => match stamps {
            Err(path) => Status::failed(Some(0), None, format!("declared output `{}` was not created", path.display())),
            Ok(stamps) => return (Status::Succeeded, stamps),
        },
        Ok(s) => {
            use std::os::unix::process::ExitStatusExt;
            let reason = match (s.code(), s.signal()) {
                (Some(code), _) => format!("exit code {code}"),
                (None, Some(sig)) => format!("killed by signal {sig}"),
                _ => "failed".to_owned(),
            };
            Status::failed(s.code(), s.signal(), reason)
        }
        Err(e) => Status::failed(None, None, format!("could not wait for the process: {e}")),
    };
    (status, Vec::new())
}

/// SIGTERM to the group, then SIGKILL if it is still there after the grace period.
async fn terminate(pgid: u32, child: &mut Process) -> std::io::Result<Exit> {
    signal_group(pgid, Signal::SIGTERM);
    match tokio::time::timeout(KILL_GRACE, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            signal_group(pgid, Signal::SIGKILL);
            child.wait().await
        }
    }
}

/// Copies a pipe into the run log; keeps the last bytes in `tail` if given;
/// tells `closed` when it has closed the pipe.
fn pump(
    mut pipe: impl AsyncRead + Unpin + Send + 'static,
    job: &Job,
    stream: OutputStream,
    log: OutputSink,
    tail: Option<Arc<Mutex<Vec<u8>>>>,
    closed: PipesClosed,
) -> tokio::task::JoinHandle<()> {
    let (task, attempt) = (job.task, job.attempt);
    tokio::spawn(async move {
        loop {
            // Read straight into the record's buffer: no zeroing, no copy.
            let mut data = Vec::with_capacity(READ_CHUNK);
            match pipe.read_buf(&mut data).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if let Some(tail) = &tail
                && let Ok(mut t) = tail.lock()
            {
                t.extend_from_slice(&data);
                let excess = t.len().saturating_sub(STDERR_TAIL);
                t.drain(..excess);
            }
            let record = OutputRecord { task, attempt, stream, time_us: now_us(), data };
            if !log.send(record).await {
                break;
            }
        }
        drop(pipe);
        closed.closed();
    })
}

/// Writes a chunk file atomically (tasks sharing a chunk may write it at once).
/// Outputs up to this many bytes in all are hashed on the worker's loop.
const SMALL_OUTPUTS: u64 = 256 << 10;

/// Whether `job`'s declared outputs are small enough to hash at once.
fn outputs_are_small(job: &Job) -> bool {
    let mut total = 0;
    for file in &job.outputs {
        match std::fs::metadata(file) {
            Ok(meta) => total += meta.len(),
            Err(_) => return true,
        }
    }
    total <= SMALL_OUTPUTS
}

/// Writes a chunk (or item) file for a task, readable by the owner's group
/// at most whatever the umask (its directory sits in `.flow`, which only a
/// run shared with the group lets the group enter).
fn write_chunk(path: &std::path::Path, text: &str, writer: &str) -> std::io::Result<()> {
    use fs_err::os::unix::fs::OpenOptionsExt;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = path.parent() {
        // `.flow/chunks` too, which a permissive umask made 0777.
        if let Some(chunks) = parent.parent() {
            create_dirs(chunks, 0o750)?;
        }
        create_dirs(parent, 0o750)?;
    }
    let tmp = path.with_extension(format!("tmp-{writer}"));
    let mut file = fs_err::OpenOptions::new().write(true).create(true).truncate(true).mode(0o640).open(&tmp)?;
    file.file().set_permissions(std::fs::Permissions::from_mode(0o640))?;
    file.write_all(text.as_bytes())?;
    fs_err::rename(&tmp, path)
}
