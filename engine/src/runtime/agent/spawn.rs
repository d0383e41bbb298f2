//! Starting a job's process: `sh -c` or argv (after its setup lines, inside
//! its container: [`super::program`]), its own process group (so it
//! and its children are signalled together), its streams, optional CPU
//! binding. The process is started with the standard library, not tokio,
//! so that only [`Process`] reaps it.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use tokio::process::{ChildStderr, ChildStdout};

use super::process::Process;
use super::program::program;
use crate::runtime::protocol::job::{Job, Sink};

/// A job's started process and the pipes of the streams that go to the log.
pub struct Spawned {
    /// The process, to wait for.
    pub process: Process,
    /// Its stdout, when it goes to the log.
    pub stdout: Option<ChildStdout>,
    /// Its stderr, when it goes to the log.
    pub stderr: Option<ChildStderr>,
}

/// Starts the job's process ([`program`]: its setup lines, its container);
/// stdout/stderr are piped when they go to the log.
pub fn spawn(job: &Job, bind_cpus: bool) -> std::io::Result<Spawned> {
    static USER: OnceLock<(u32, u32)> = OnceLock::new();
    let user = *USER.get_or_init(|| (nix::unistd::getuid().as_raw(), nix::unistd::getgid().as_raw()));
    let program = program(job, user);
    let mut cmd = Command::new(program.argv.first().map_or("", String::as_str));
    cmd.args(program.argv.iter().skip(1));
    cmd.current_dir(&job.cwd).envs(program.env.iter().map(|(k, v)| (k, v))).process_group(0);
    cmd.stdin(match &job.stdin {
        Some(path) => Stdio::from(fs_err::File::open(path)?.into_parts().0),
        None => null(Direction::Read)?,
    });
    cmd.stdout(sink(&job.stdout)?);
    cmd.stderr(sink(&job.stderr)?);
    if bind_cpus && !job.cpus.is_empty() {
        bind(&mut cmd, &job.cpus);
    }
    let (started_us, started) = (crate::host::now_us(), Instant::now());
    let mut child = cmd.spawn()?;
    let process = Process::new(&child, started_us, started);
    let stdout = child.stdout.take().map(ChildStdout::from_std).transpose();
    let stderr = child.stderr.take().map(ChildStderr::from_std).transpose();
    match (process, stdout, stderr) {
        (Ok(process), Ok(stdout), Ok(stderr)) => Ok(Spawned { process, stdout, stderr }),
        (Err(e), ..) | (_, Err(e), _) | (.., Err(e)) => {
            // Not watched: end it and reap it here.
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        }
    }
}

fn sink(sink: &Sink) -> std::io::Result<Stdio> {
    Ok(match sink {
        Sink::Log => Stdio::piped(),
        Sink::Null => null(Direction::Write)?,
        Sink::File(path) => {
            if let Some(parent) = path.parent() {
                fs_err::create_dir_all(parent)?;
            }
            Stdio::from(fs_err::File::create(path)?.into_parts().0)
        }
    })
}

/// Which way a stream of the child goes.
#[derive(Clone, Copy)]
enum Direction {
    Read,
    Write,
}

/// `/dev/null` for a stream of the child: a duplicate of a descriptor
/// opened once, which costs a fraction of opening the file for every task
/// (as `Stdio::null` does).
fn null(direction: Direction) -> std::io::Result<Stdio> {
    static NULL: [OnceLock<Option<std::fs::File>>; 2] = [OnceLock::new(), OnceLock::new()];
    let open = || {
        let mut options = fs_err::OpenOptions::new();
        match direction {
            Direction::Read => options.read(true),
            Direction::Write => options.write(true),
        };
        options.open("/dev/null").ok().map(|file| file.into_parts().0)
    };
    match NULL[direction as usize].get_or_init(open) {
        Some(file) => Ok(Stdio::from(file.try_clone()?)),
        None => Ok(Stdio::null()),
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
