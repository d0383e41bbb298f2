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
//!
//! A remote worker also gives the guard a lease each time it hears its
//! coordinator: when the lease runs out unrenewed — the worker was paused
//! (SIGSTOP) and could not stop its tasks itself, while its coordinator
//! declared it lost and may start them elsewhere — the guard ends the
//! groups watched then, and goes on following.

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
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
    /// Whether the guard holds a lease: then every task is watched from its start.
    leased: AtomicBool,
    _process: Child,
}

impl Guard {
    /// Starts `command`, which must run [`serve`] on its standard input. It
    /// gets no stdout or stderr: it writes nothing, and a pipe it held open
    /// would keep a reader of flow's output waiting after flow exits.
    pub fn start(mut command: Command) -> std::io::Result<Self> {
        let mut process = command.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
        let pipe = process.stdin.take().ok_or_else(|| std::io::Error::other("the guard has no stdin"))?;
        Ok(Self { pipe: Mutex::new(pipe), leased: AtomicBool::new(false), _process: process })
    }

    /// Watches process group `pgid` from now on.
    pub(crate) fn watch(&self, pgid: u32) {
        self.send('+', pgid);
    }

    /// Stops watching `pgid` (its task ended and its group was killed).
    pub(crate) fn release(&self, pgid: u32) {
        self.send('-', pgid);
    }

    /// Ends the groups watched unless a new lease comes within `lease`
    /// from now; a zero lease takes the lease away (nothing ends).
    pub(crate) fn lease(&self, lease: Duration) {
        self.leased.store(!lease.is_zero(), Ordering::Relaxed);
        self.send('~', u32::try_from(lease.as_millis()).unwrap_or(u32::MAX));
    }

    /// Whether a lease is given: a task must be watched from its start
    /// (its worker may be paused at any moment, and the lease run out).
    pub(crate) fn is_leased(&self) -> bool {
        self.leased.load(Ordering::Relaxed)
    }

    /// A failed write means the guard is gone: the worker goes on without it.
    fn send(&self, op: char, value: u32) {
        if let Ok(mut pipe) = self.pipe.lock() {
            let _ = writeln!(pipe, "{op}{value}");
        }
    }
}

/// The guard's side: follows the process groups named on `input` until it
/// closes, then ends those still watched and returns how many there were.
/// SIGINT, SIGTERM and SIGHUP are ignored: a Ctrl-C or a resource manager
/// ending the job signals the worker too, which then stops its tasks and
/// closes the pipe itself.
pub fn serve(input: impl BufRead + Send + 'static) -> usize {
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: ignoring a signal installs no handler code.
        #[allow(unsafe_code)]
        unsafe {
            let _ = signal(sig, SigHandler::SigIgn);
        }
    }
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in input.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let watched = follow(&lines);
    end(&watched);
    watched.len()
}

/// The groups still watched when `lines` end; the groups watched when a
/// lease runs out are ended then.
fn follow(lines: &mpsc::Receiver<String>) -> HashSet<u32> {
    let mut watched = HashSet::new();
    let mut lease: Option<Instant> = None;
    loop {
        let next = match lease {
            Some(until) => lines.recv_timeout(until.saturating_duration_since(Instant::now())),
            None => lines.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        let line = match next {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                end(&watched);
                watched.clear();
                lease = None;
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let (op, value) = line.split_at(line.len().min(1));
        let Ok(value) = value.parse::<u32>() else { continue };
        match op {
            "+" if (2..=i32::MAX as u32).contains(&value) => {
                watched.insert(value);
            }
            "-" => {
                watched.remove(&value);
            }
            "~" => lease = (value > 0).then(|| Instant::now() + Duration::from_millis(value.into())),
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
        let watched = follow(&lines(&input));
        assert_eq!(watched, HashSet::from([kept]));
        end(&watched);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!group_alive(kept), "the watched task was ended");
        assert!(group_alive(released), "the released one is not the guard's business");
        let _ = killpg(Pid::from_raw(released as i32), Signal::SIGKILL);
    }

    #[test]
    fn groups_watched_when_a_lease_runs_out_are_ended_and_the_guard_goes_on() {
        // Issue 26: a paused worker cannot stop its tasks; its guard does.
        let (kept, after) = (sleeper("30"), sleeper("30"));
        let (tx, rx) = mpsc::channel();
        tx.send(format!("+{kept}")).expect("send");
        tx.send("~100".to_owned()).expect("send");
        let follower = std::thread::spawn(move || follow(&rx));
        std::thread::sleep(Duration::from_millis(600));
        assert!(!group_alive(kept), "the lease ran out");
        // A zero lease takes it away: what is watched then runs on.
        tx.send(format!("+{after}")).expect("send");
        tx.send("~0".to_owned()).expect("send");
        std::thread::sleep(Duration::from_millis(300));
        assert!(group_alive(after));
        drop(tx);
        assert_eq!(follower.join().expect("follow"), HashSet::from([after]));
        let _ = killpg(Pid::from_raw(after as i32), Signal::SIGKILL);
    }

    /// The lines of `input`, as the guard's reader thread hands them on.
    fn lines(input: &str) -> mpsc::Receiver<String> {
        let (tx, rx) = mpsc::channel();
        input.lines().for_each(|line| tx.send(line.to_owned()).expect("send"));
        rx
    }
}
