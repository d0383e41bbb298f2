//! Starting a job's process: `sh -c` or argv (after its setup lines, inside
//! its container: [`super::program`]), its own process group (so it
//! and its children are signalled together), its streams, optional CPU
//! binding. The process is started by [`vfork_spawn`] where it can, or
//! else with the standard library; not with tokio, so that only
//! [`Process`] reaps it.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

use tokio::net::unix::pipe::Receiver;

use super::process::Process;
use super::program::program;
use super::vfork_spawn::{ExecError, vfork_spawn};
use crate::runtime::protocol::job::{Job, Sink};

/// A job's started process and the pipes of the streams that go to the log.
pub struct Spawned {
    /// The process, to wait for.
    pub process: Process,
    /// Its stdout, when it goes to the log.
    pub stdout: Option<Receiver>,
    /// Its stderr, when it goes to the log.
    pub stderr: Option<Receiver>,
    /// Why it could not run its program, once it has ended (an error of
    /// the standard library's start comes at once instead).
    pub exec_error: Option<ExecError>,
}

/// Starts the job's process ([`program`]: its setup lines, its container);
/// stdout/stderr are piped when they go to the log.
pub fn spawn(job: &Job, bind_cpus: bool) -> std::io::Result<Spawned> {
    static USER: OnceLock<(u32, u32)> = OnceLock::new();
    let user = *USER.get_or_init(|| (nix::unistd::getuid().as_raw(), nix::unistd::getgid().as_raw()));
    let program = program(job, user);
    let stdin = match &job.stdin {
        Some(path) => Stream::Own(fs_err::File::open(path)?.into_parts().0.into()),
        None => null(Direction::Read)?,
    };
    let (stdout, stdout_pipe) = sink(&job.stdout)?;
    let (stderr, stderr_pipe) = sink(&job.stderr)?;
    let bind = bind_cpus && !job.cpus.is_empty();
    let (started_us, started) = (crate::host::now_us(), Instant::now());
    let streams = [stdin.as_fd(), stdout.as_fd(), stderr.as_fd()];
    let direct = (!bind).then(|| vfork_spawn(&program.argv, &program.env, &job.cwd, streams)).flatten();
    let (pid, exec_error) = match direct {
        Some(started) => started.map(|started| (started.pid, Some(started.error)))?,
        None => {
            let mut cmd = Command::new(program.argv.first().map_or("", String::as_str));
            cmd.args(program.argv.iter().skip(1));
            cmd.current_dir(&job.cwd).envs(program.env.iter().map(|(k, v)| (k, v))).process_group(0);
            cmd.stdin(stdin.owned()?).stdout(stdout.owned()?).stderr(stderr.owned()?);
            if bind {
                self::bind(&mut cmd, &job.cpus);
            }
            (cmd.spawn()?.id(), None)
        }
    };
    let process = Process::new(pid, started_us, started);
    // The read ends are non-blocking from the start (see `pipe`).
    let stdout = stdout_pipe.map(Receiver::from_owned_fd_unchecked).transpose();
    let stderr = stderr_pipe.map(Receiver::from_owned_fd_unchecked).transpose();
    match (stdout, stderr) {
        (Ok(stdout), Ok(stderr)) => Ok(Spawned { process, stdout, stderr, exec_error }),
        (Err(e), _) | (_, Err(e)) => {
            // Not watched: end it and reap it here.
            let child = nix::unistd::Pid::from_raw(pid as i32);
            let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGKILL);
            let _ = nix::sys::wait::waitpid(child, None);
            Err(e)
        }
    }
}

/// A descriptor to become a stream of the child.
enum Stream {
    /// Opened for this child.
    Own(OwnedFd),
    /// `/dev/null`, open for all children.
    Null(BorrowedFd<'static>),
}

impl Stream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Self::Own(fd) => fd.as_fd(),
            Self::Null(fd) => *fd,
        }
    }

    /// A descriptor of its own, for the standard library (which closes it).
    fn owned(self) -> std::io::Result<OwnedFd> {
        match self {
            Self::Own(fd) => Ok(fd),
            Self::Null(fd) => fd.try_clone_to_owned(),
        }
    }
}

/// Where a stream of the child goes, and the end flow reads when it is a
/// pipe to the log.
fn sink(sink: &Sink) -> std::io::Result<(Stream, Option<OwnedFd>)> {
    Ok(match sink {
        Sink::Log => {
            let (reader, writer) = pipe()?;
            (Stream::Own(writer), Some(reader))
        }
        Sink::Null => (null(Direction::Write)?, None),
        Sink::File(path) => {
            if let Some(parent) = path.parent() {
                fs_err::create_dir_all(parent)?;
            }
            (Stream::Own(fs_err::File::create(path)?.into_parts().0.into()), None)
        }
    })
}

/// A pipe whose ends close on `exec`, its read end non-blocking (the
/// child's end blocks, as a pipe does): its read end, its write end.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    #[cfg(target_os = "linux")]
    let ends = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    #[cfg(not(target_os = "linux"))]
    let ends = {
        use nix::fcntl::FdFlag;
        let ends = nix::unistd::pipe()?;
        for end in [&ends.0, &ends.1] {
            fcntl(end, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
        }
        ends
    };
    // A new pipe's end has no other status flag to keep.
    fcntl(&ends.0, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
    Ok(ends)
}

/// Which way a stream of the child goes.
#[derive(Clone, Copy)]
enum Direction {
    Read,
    Write,
}

/// `/dev/null` for a stream of the child: a descriptor opened once, which
/// costs nothing per task where opening the file costs as much as a tenth
/// of starting `true` (`docs/performance.md`).
fn null(direction: Direction) -> std::io::Result<Stream> {
    static NULL: [OnceLock<Option<std::fs::File>>; 2] = [OnceLock::new(), OnceLock::new()];
    let open = || {
        let mut options = fs_err::OpenOptions::new();
        match direction {
            Direction::Read => options.read(true),
            Direction::Write => options.write(true),
        };
        options.open("/dev/null").map(|file| file.into_parts().0)
    };
    match NULL[direction as usize].get_or_init(|| open().ok()) {
        Some(file) => Ok(Stream::Null(file.as_fd())),
        None => Ok(Stream::Own(open()?.into())),
    }
}

/// Binds the child to `cpus` (`--bind-cpus`). Only then is a `pre_exec`
/// hook installed: it makes the standard library fork instead of using the
/// much cheaper `posix_spawn`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn bind(cmd: &mut Command, cpus: &[u32]) {
    use nix::sched::{CpuSet, sched_setaffinity};
    use nix::unistd::Pid;
    let mut set = CpuSet::new();
    for &cpu in cpus {
        let _ = set.set(cpu as usize);
    }
    // SAFETY: the closure runs in the forked child before exec and makes one
    // async-signal-safe system call (sched_setaffinity) on a set prepared
    // before the fork; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            // Best effort: ids beyond this machine's (`--cpus` above its
            // count) leave the task unbound rather than failing it.
            let _ = sched_setaffinity(Pid::from_raw(0), &set);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn bind(_cmd: &mut Command, _cpus: &[u32]) {}

/// Sends `signal` to the process group `pgid` (ignoring one that is gone).
pub fn signal_group(pgid: u32, signal: nix::sys::signal::Signal) {
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid as i32), signal);
}
