//! [`Process`]: a task's process, reaped with `wait4` so that what it used
//! (CPU time, peak RSS) is known: tokio's `Child::wait` throws the `rusage`
//! away. The driver's one thread never blocks on it: the exit is awaited on
//! a pidfd (Linux 5.3 and later), or else on SIGCHLD, and `wait4` is only
//! called with `WNOHANG`. A process whose output goes to flow through
//! pipes is first looked for when they close ([`PipesClosed`]): one that
//! ends before its first sample is then reaped with no pidfd made for it.
//! While it waits it samples the process tree's peak virtual memory, and
//! between the end of a process it sampled and its reaping it reads the
//! bytes its system calls read and wrote ([`super::proc_stats`]); the
//! bytes of storage come with the `rusage`.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::Notify;

use super::proc_stats::{io_chars, tree_vm_peak};
use crate::log::{IoBytes, ProcessUsage};

/// When the process tree's memory is first sampled after the start; the
/// gap doubles after each sample, up to [`SAMPLE_MAX`].
const SAMPLE_FIRST: Duration = Duration::from_millis(10);
/// The longest gap between two samples.
const SAMPLE_MAX: Duration = Duration::from_secs(1);

/// A started process that flow reaps itself.
pub struct Process {
    pid: i32,
    started_us: u64,
    started: Instant,
    /// What wakes a wait for its end, made when first needed.
    exit: Option<ExitWatch>,
    /// Its pipes to flow, whose closing hints that it ended.
    pipes: Option<PipesClosed>,
    reaped: Option<Exit>,
    /// Whether `wait` has looked once: a pidfd is readable at once for a
    /// process that has ended already, so it waits before it looks.
    looked: bool,
    /// The largest `VmPeak` sum sampled so far.
    peak_vmem: Option<u64>,
    /// When to sample next, and the gap after that.
    next_sample: Instant,
    sample_gap: Duration,
}

/// How a process ended and what it used.
#[derive(Debug, Clone, Copy)]
pub struct Exit {
    /// Its exit status.
    pub status: ExitStatus,
    /// Its times and peak RSS.
    pub usage: ProcessUsage,
}

/// What wakes a wait for the process's end.
enum ExitWatch {
    /// The pidfd turns readable when the process ends.
    #[cfg(target_os = "linux")]
    Pidfd(tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>),
    /// Some child of flow ended: perhaps this one.
    Sigchld(Signal),
}

impl Process {
    /// Our child `pid`, started at `started_us` (µs since the epoch) and
    /// `started`, to wait for. It must not be waited for otherwise.
    pub fn new(pid: u32, started_us: u64, started: Instant) -> Self {
        Self {
            pid: pid as i32,
            started_us,
            started,
            exit: None,
            pipes: None,
            reaped: None,
            looked: false,
            peak_vmem: None,
            next_sample: started + SAMPLE_FIRST,
            sample_gap: SAMPLE_FIRST,
        }
    }

    /// Its `pipes` to flow: until they close or its first sample is due,
    /// its end is not watched otherwise.
    pub fn hint(&mut self, pipes: PipesClosed) {
        self.pipes = Some(pipes);
    }

    /// The process id, which is also its process group's.
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Waits for the process to end and reaps it, sampling its tree's
    /// memory meanwhile. Cancel-safe: a wait dropped before it returns has
    /// reaped nothing.
    pub async fn wait(&mut self) -> io::Result<Exit> {
        if let Some(exit) = self.reaped {
            return Ok(exit);
        }
        if let Some(pipes) = self.pipes.clone()
            && self.exit.is_none()
        {
            let due = tokio::time::sleep_until(self.next_sample.into());
            tokio::select! {
                () = pipes.all_closed() => {}
                () = due => self.sample(),
            }
            if let Some(exit) = self.try_wait()? {
                return Ok(exit);
            }
        }
        let look = self.looked || !self.watch()?.tells_of_an_end_before();
        self.looked = true;
        if look && let Some(exit) = self.try_wait()? {
            return Ok(exit);
        }
        loop {
            let due = tokio::time::sleep_until(self.next_sample.into());
            let watch = self.watch()?;
            let sample = tokio::select! {
                ended = exit_signalled(watch) => {
                    ended?;
                    false
                }
                () = due => true,
            };
            if sample {
                self.sample();
            }
            if let Some(exit) = self.try_wait()? {
                return Ok(exit);
            }
        }
    }

    /// What wakes a wait for its end, made the first time.
    fn watch(&mut self) -> io::Result<&mut ExitWatch> {
        Ok(match &mut self.exit {
            Some(exit) => exit,
            exit @ None => exit.insert(ExitWatch::new(self.pid)?),
        })
    }

    /// Adds the tree's peak virtual memory now to what was seen.
    fn sample(&mut self) {
        if let Some(peak) = tree_vm_peak(self.id()) {
            self.peak_vmem = Some(self.peak_vmem.unwrap_or(0).max(peak));
        }
        self.next_sample = Instant::now() + self.sample_gap;
        self.sample_gap = (self.sample_gap * 2).min(SAMPLE_MAX);
    }

    /// Whether the process has been sampled: it ran past [`SAMPLE_FIRST`].
    fn sampled(&self) -> bool {
        self.sample_gap > SAMPLE_FIRST
    }

    fn try_wait(&mut self) -> io::Result<Option<Exit>> {
        if self.reaped.is_some() {
            return Ok(self.reaped);
        }
        // Ended and not reaped, its `/proc` entry still counts the bytes of
        // its system calls. Only for a process that ran past its first
        // sample: for a short one, opening that file costs about as much
        // as starting the process (`docs/performance.md`).
        let chars = if self.sampled() {
            if !has_ended(self.pid)? {
                return Ok(None);
            }
            io_chars(self.id())
        } else {
            None
        };
        if let Some((status, usage)) = wait4_nohang(self.pid)? {
            let ended_us = crate::host::now_us();
            let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
            let usage = ProcessUsage {
                started_us: self.started_us,
                ended_us,
                wall_us: self.started.elapsed().as_micros() as u64,
                user_us: micros(usage.ru_utime),
                system_us: micros(usage.ru_stime),
                max_rss: max_rss_bytes(usage.ru_maxrss),
                peak_vmem: self.peak_vmem,
                io: storage_bytes(&usage).map(|(read_bytes, write_bytes)| IoBytes {
                    read_bytes,
                    write_bytes,
                    rchar: chars.map(|(rchar, _)| rchar),
                    wchar: chars.map(|(_, wchar)| wchar),
                }),
            };
            self.reaped = Some(Exit { status: ExitStatus::from_raw(status), usage });
        }
        Ok(self.reaped)
    }
}

impl ExitWatch {
    /// A watch on our unreaped child `pid`.
    fn new(pid: i32) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        if let Some(fd) = pidfd_open(pid) {
            // SAFETY: the `OwnedFd` is open until the `AsyncFd` drops it, and
            // its raw descriptor never changes.
            #[allow(unsafe_code)]
            let fd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)? };
            return Ok(Self::Pidfd(fd));
        }
        let _ = pid;
        Ok(Self::Sigchld(signal(SignalKind::child())?))
    }

    /// Whether it is ready at once for a process that ended before it was
    /// made, so that the first look for an end can wait for it.
    fn tells_of_an_end_before(&self) -> bool {
        match self {
            #[cfg(target_os = "linux")]
            Self::Pidfd(_) => true,
            Self::Sigchld(_) => false,
        }
    }
}

/// Waits until `exit` says some process ended (perhaps not the one watched).
async fn exit_signalled(exit: &mut ExitWatch) -> io::Result<()> {
    match exit {
        #[cfg(target_os = "linux")]
        ExitWatch::Pidfd(fd) => fd.readable().await?.clear_ready(),
        ExitWatch::Sigchld(sigchld) => {
            sigchld.recv().await;
        }
    }
    Ok(())
}

/// The pipes from a process to flow, counted down as each closes: that
/// they all closed hints that the process ended (it may have closed them
/// itself, or left them to a child of its own).
#[derive(Clone)]
pub struct PipesClosed(Arc<(AtomicUsize, Notify)>);

impl PipesClosed {
    /// `pipes` pipes, all open.
    pub fn new(pipes: usize) -> Self {
        Self(Arc::new((AtomicUsize::new(pipes), Notify::new())))
    }

    /// One pipe closed.
    pub fn closed(&self) {
        if self.0.0.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.1.notify_waiters();
        }
    }

    /// Returns when every pipe has closed.
    async fn all_closed(&self) {
        loop {
            let notified = self.0.1.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.0.0.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// Whether our child `pid` has ended, leaving it to be reaped.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn has_ended(pid: i32) -> io::Result<bool> {
    loop {
        let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: `info` is a zeroed, writable `siginfo_t`; with WNOHANG and
        // WNOWAIT `waitid` neither blocks nor reaps.
        let found = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                info.as_mut_ptr(),
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if found == -1 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        // SAFETY: zeroed, then filled by `waitid`; a pid of 0 means no child changed state.
        return Ok(unsafe { info.assume_init().si_pid() } != 0);
    }
}

/// Elsewhere there is no `/proc` to read before reaping: `wait4` decides.
#[cfg(not(target_os = "linux"))]
fn has_ended(_pid: i32) -> io::Result<bool> {
    Ok(true)
}

/// `ru_maxrss` in bytes: Linux counts KiB, macOS bytes.
fn max_rss_bytes(max_rss: libc::c_long) -> u64 {
    let max_rss = max_rss.max(0) as u64;
    if cfg!(target_os = "macos") { max_rss } else { max_rss * 1024 }
}

/// The bytes a reaped process and the children it waited for read from
/// and wrote to storage: Linux counts them in `rusage` in units of 512
/// bytes (`ru_inblock` is `read_bytes` of `/proc/<pid>/io` over 512,
/// `ru_oublock` `write_bytes`). Elsewhere the units are not bytes: `None`.
fn storage_bytes(usage: &libc::rusage) -> Option<(u64, u64)> {
    let bytes = |blocks: libc::c_long| blocks.max(0) as u64 * 512;
    cfg!(target_os = "linux").then(|| (bytes(usage.ru_inblock), bytes(usage.ru_oublock)))
}

/// Reaps `pid` if it has ended: its wait status and usage.
#[allow(unsafe_code)]
fn wait4_nohang(pid: i32) -> io::Result<Option<(i32, libc::rusage)>> {
    let mut status = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    loop {
        // SAFETY: both pointers point to live, writable locals of the types
        // `wait4` writes; with WNOHANG it never blocks.
        match unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, usage.as_mut_ptr()) } {
            0 => return Ok(None),
            -1 => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
            // SAFETY: the structure was zeroed (a valid `rusage`) and `wait4` filled it.
            _ => return Ok(Some((status, unsafe { usage.assume_init() }))),
        }
    }
}

/// A pidfd for our unreaped child `pid` (its id cannot be reused before we
/// reap it), or `None` on a kernel without `pidfd_open`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn pidfd_open(pid: i32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: `pidfd_open(pid, flags)` only returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, libc::PIDFD_NONBLOCK) };
    // SAFETY: a non-negative result is a descriptor that nothing else owns.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

#[cfg(test)]
mod tests {
    use super::*;

    // `Process::wait` reaps the child.
    #[allow(clippy::zombie_processes)]
    fn run(script: &str) -> Exit {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let child = std::process::Command::new("sh").arg("-c").arg(script).spawn().unwrap();
            let mut process = Process::new(child.id(), crate::host::now_us(), Instant::now());
            process.wait().await.unwrap()
        })
    }

    #[test]
    fn the_exit_status_and_usage_of_the_process_are_kept() {
        let exit = run("exit 3");
        assert_eq!(exit.status.code(), Some(3));
        assert!(exit.usage.ended_us >= exit.usage.started_us);
        // Any process has a resident page or two.
        assert!(exit.usage.max_rss > 0);
    }

    #[test]
    fn cpu_time_and_memory_of_waited_children_count() {
        // 40 MB through one pipe buffer: `head` stays small, `tail -c` keeps
        // one byte; the busy loop burns user time. Lower bounds only.
        let exit = run("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; \
                        head -c 40000000 /dev/zero | tr '\\0' x | sort -u >/dev/null");
        assert!(exit.status.success());
        assert!(exit.usage.user_us + exit.usage.system_us >= 50_000, "{:?}", exit.usage);
        assert!(exit.usage.max_rss >= 20 << 20, "{:?}", exit.usage);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn bytes_written_and_peak_virtual_memory_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        // Writes 3 MiB, then lives long enough to be sampled.
        let exit = run(&format!("dd if=/dev/zero of={} bs=1M count=3 2>/dev/null; sleep 0.1", file.display()));
        let io = exit.usage.io.unwrap();
        assert!(io.wchar.is_some_and(|w| w >= 3 << 20), "{io:?}");
        assert!(io.rchar.is_some_and(|r| r >= 3 << 20), "{io:?}");
        assert!(exit.usage.peak_vmem.is_some_and(|v| v > 1 << 20), "{:?}", exit.usage);
    }

    /// A process that ended before its first sample is reaped without
    /// reading `/proc`: its storage bytes, no `rchar`, `wchar` (issue 28).
    #[cfg(target_os = "linux")]
    #[test]
    #[allow(unsafe_code, clippy::zombie_processes)]
    fn a_process_that_ended_before_its_first_sample_has_storage_bytes_only() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let exit = runtime.block_on(async {
            let child = std::process::Command::new("true").spawn().unwrap();
            // Wait for its end without reaping it, so that the first look finds it ended.
            let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
            // SAFETY: a zeroed, writable `siginfo_t`; WNOWAIT leaves the child to reap.
            let waited =
                unsafe { libc::waitid(libc::P_PID, child.id(), info.as_mut_ptr(), libc::WEXITED | libc::WNOWAIT) };
            assert_eq!(waited, 0);
            let mut process = Process::new(child.id(), crate::host::now_us(), Instant::now());
            process.wait().await.unwrap()
        });
        assert!(exit.status.success());
        assert_eq!(exit.usage.peak_vmem, None);
        let io = exit.usage.io.unwrap();
        assert_eq!((io.rchar, io.wchar), (None, None), "{io:?}");
    }

    /// Runs `script` with its stdout piped to a thread that sends each line
    /// and tells `PipesClosed` when the pipe closes; waits with that hint.
    #[allow(clippy::zombie_processes)]
    fn run_with_pipe(script: &str) -> (Exit, std::sync::mpsc::Receiver<String>) {
        use std::io::BufRead;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut child = std::process::Command::new("sh")
                .arg("-c")
                .arg(script)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let (pipes, lines) = (PipesClosed::new(1), std::sync::mpsc::channel());
            let (stdout, closed) = (child.stdout.take().unwrap(), pipes.clone());
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                    let _ = lines.0.send(line);
                }
                closed.closed();
            });
            let mut process = Process::new(child.id(), crate::host::now_us(), Instant::now());
            process.hint(pipes);
            (process.wait().await.unwrap(), lines.1)
        })
    }

    /// Issue 28: the pipes closing is only a hint; a process that closes
    /// them and runs on is waited for.
    #[test]
    fn a_process_that_closes_its_pipes_and_runs_on_is_waited_for() {
        let (exit, _) = run_with_pipe("exec >&-; sleep 0.3; exit 4");
        assert_eq!(exit.status.code(), Some(4));
        assert!(exit.usage.wall_us >= 300_000, "{:?}", exit.usage);
        let (exit, _) = run_with_pipe("exit 0");
        assert!(exit.status.success());
    }

    /// Issue 28: a process whose pipes a child of its own keeps open is
    /// reaped when it ends, not when that child does.
    #[test]
    fn a_process_that_leaves_its_pipes_to_a_child_is_reaped_when_it_ends() {
        let (exit, lines) = run_with_pipe("sleep 5 & echo $!; exit 5");
        let sleep: i32 = lines.recv().unwrap().parse().unwrap();
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(sleep), nix::sys::signal::Signal::SIGKILL);
        assert_eq!(exit.status.code(), Some(5));
        assert!(exit.usage.wall_us < 4_000_000, "{:?}", exit.usage);
    }

    #[test]
    fn storage_bytes_are_blocks_of_512_bytes() {
        // SAFETY: all-zero bytes are a valid `rusage`.
        #[allow(unsafe_code)]
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        usage.ru_inblock = 8;
        usage.ru_oublock = 8192;
        let expected = cfg!(target_os = "linux").then_some((4096, 4 << 20));
        assert_eq!(storage_bytes(&usage), expected);
    }
}
