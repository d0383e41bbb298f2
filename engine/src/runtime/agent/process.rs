//! [`Process`]: a task's process, reaped with `wait4` so that what it used
//! (CPU time, peak RSS) is known: tokio's `Child::wait` throws the `rusage`
//! away. The driver's one thread never blocks on it: the exit is awaited on
//! a pidfd (Linux 5.3 and later), or else on SIGCHLD, and `wait4` is only
//! called with `WNOHANG`.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Instant;

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::log::ProcessUsage;

/// A started process that flow reaps itself.
pub struct Process {
    pid: i32,
    started_us: u64,
    started: Instant,
    exit: ExitWatch,
    reaped: Option<Exit>,
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
    /// Watches `child`, started at `started_us` (µs since the epoch) and
    /// `started`, for its end. `child` must not be waited for otherwise.
    pub fn new(child: &std::process::Child, started_us: u64, started: Instant) -> io::Result<Self> {
        let pid = child.id() as i32;
        #[cfg(target_os = "linux")]
        if let Some(fd) = pidfd_open(pid) {
            // SAFETY: the `OwnedFd` is open until the `AsyncFd` drops it, and
            // its raw descriptor never changes.
            #[allow(unsafe_code)]
            let fd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)? };
            return Ok(Self { pid, started_us, started, exit: ExitWatch::Pidfd(fd), reaped: None });
        }
        let exit = ExitWatch::Sigchld(signal(SignalKind::child())?);
        Ok(Self { pid, started_us, started, exit, reaped: None })
    }

    /// The process id, which is also its process group's.
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Waits for the process to end and reaps it. Cancel-safe: a wait
    /// dropped before it returns has reaped nothing.
    pub async fn wait(&mut self) -> io::Result<Exit> {
        loop {
            if let Some(exit) = self.try_wait()? {
                return Ok(exit);
            }
            match &mut self.exit {
                #[cfg(target_os = "linux")]
                ExitWatch::Pidfd(fd) => fd.readable().await?.clear_ready(),
                ExitWatch::Sigchld(sigchld) => {
                    sigchld.recv().await;
                }
            }
        }
    }

    fn try_wait(&mut self) -> io::Result<Option<Exit>> {
        if self.reaped.is_none()
            && let Some((status, usage)) = wait4_nohang(self.pid)?
        {
            let ended_us = crate::host::now_us();
            let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
            let usage = ProcessUsage {
                started_us: self.started_us,
                ended_us,
                wall_us: self.started.elapsed().as_micros() as u64,
                user_us: micros(usage.ru_utime),
                system_us: micros(usage.ru_stime),
                max_rss: max_rss_bytes(usage.ru_maxrss),
            };
            self.reaped = Some(Exit { status: ExitStatus::from_raw(status), usage });
        }
        Ok(self.reaped)
    }
}

/// `ru_maxrss` in bytes: Linux counts KiB, macOS bytes.
fn max_rss_bytes(max_rss: libc::c_long) -> u64 {
    let max_rss = max_rss.max(0) as u64;
    if cfg!(target_os = "macos") { max_rss } else { max_rss * 1024 }
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
            let mut process = Process::new(&child, crate::host::now_us(), Instant::now()).unwrap();
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
}
