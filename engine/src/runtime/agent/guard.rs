//! The guard: a small companion process that ends a worker's tasks when the
//! worker itself dies without doing so (`kill -9`, the OOM killer, a crash).
//! Tasks run in their own process groups, so nothing else would stop them:
//! they would run on beside the new attempt the coordinator starts elsewhere.
//!
//! The worker tells the guard, through a pipe, which process groups to
//! watch — only tasks that have run for [`WATCH_AFTER`], so short tasks cost
//! no message and no wake-up — and which to let go. When the pipe closes
//! (the worker exited, however it did), the guard ends the groups still
//! watched: SIGTERM, then SIGKILL after [`KILL_GRACE`].

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::{SigHandler, Signal, killpg, signal};
use nix::unistd::Pid;

use super::spawn::signal_group;

/// How long a task runs before the guard is told about it. A task that ends
/// sooner would be gone about as soon as the guard could act.
pub const WATCH_AFTER: Duration = Duration::from_millis(200);
/// Grace between SIGTERM and SIGKILL for the groups left behind.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// The worker's end of the guard.
#[derive(Debug)]
pub struct Guard {
    pipe: Mutex<ChildStdin>,
    _process: Child,
}

impl Guard {
    /// Starts `command`, which must run [`serve`] on its standard input. It
    /// gets no stdout or stderr: it writes nothing, and a pipe it held open
    /// would keep a reader of flow's output waiting after flow exits.
    pub fn start(mut command: Command) -> std::io::Result<Self> {
        let mut process = command.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
        let pipe = process.stdin.take().ok_or_else(|| std::io::Error::other("the guard has no stdin"))?;
        Ok(Self { pipe: Mutex::new(pipe), _process: process })
    }

    /// Watches process group `pgid` from now on.
    pub(crate) fn watch(&self, pgid: u32) {
        self.send('+', pgid);
    }

    /// Stops watching `pgid` (its task ended and its group was killed).
    pub(crate) fn release(&self, pgid: u32) {
        self.send('-', pgid);
    }

    /// A failed write means the guard is gone: the worker goes on without it.
    fn send(&self, op: char, pgid: u32) {
        if let Ok(mut pipe) = self.pipe.lock() {
            let _ = writeln!(pipe, "{op}{pgid}");
        }
    }
}

/// The guard's side: follows the process groups named on `input` until it
/// closes, then ends those still watched and returns how many there were.
/// SIGINT, SIGTERM and SIGHUP are ignored: a Ctrl-C or a resource manager
/// ending the job signals the worker too, which then stops its tasks and
/// closes the pipe itself.
pub fn serve(input: impl BufRead) -> usize {
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: ignoring a signal installs no handler code.
        #[allow(unsafe_code)]
        unsafe {
            let _ = signal(sig, SigHandler::SigIgn);
        }
    }
    let watched = follow(input);
    end(&watched);
    watched.len()
}

/// The groups still watched when `input` ends.
fn follow(input: impl BufRead) -> HashSet<u32> {
    let mut watched = HashSet::new();
    for line in input.lines() {
        let Ok(line) = line else { break };
        let (op, pgid) = line.split_at(line.len().min(1));
        let Ok(pgid) = pgid.parse::<u32>() else { continue };
        match op {
            "+" if (2..=i32::MAX as u32).contains(&pgid) => {
                watched.insert(pgid);
            }
            "-" => {
                watched.remove(&pgid);
            }
            _ => {}
        }
    }
    watched
}

/// SIGTERM to each group, SIGKILL to those still there after the grace.
fn end(groups: &HashSet<u32>) {
    let alive = |g: &u32| killpg(Pid::from_raw(*g as i32), None).is_ok();
    let mut left: Vec<u32> = groups.iter().copied().filter(alive).collect();
    for &g in &left {
        signal_group(g, Signal::SIGTERM);
    }
    let deadline = Instant::now() + KILL_GRACE;
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left.retain(alive);
    }
    for g in left {
        signal_group(g, Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    fn group_alive(pgid: u32) -> bool {
        killpg(Pid::from_raw(pgid as i32), None).is_ok()
    }

    /// A `sleep` in its own process group, reaped by a thread when it ends.
    fn sleeper(secs: &str) -> u32 {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("sleep").arg(secs).process_group(0).spawn().expect("sleep");
        let pgid = child.id();
        std::thread::spawn(move || child.wait());
        pgid
    }

    #[test]
    fn groups_still_watched_when_the_pipe_closes_are_ended() {
        let (kept, released) = (sleeper("30"), sleeper("30"));
        let input = format!("+{kept}\n+{released}\n-{released}\nnonsense\n+1\n");
        let watched = follow(input.as_bytes());
        assert_eq!(watched, HashSet::from([kept]));
        end(&watched);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!group_alive(kept), "the watched task was ended");
        assert!(group_alive(released), "the released one is not the guard's business");
        let _ = killpg(Pid::from_raw(released as i32), Signal::SIGKILL);
    }
}
