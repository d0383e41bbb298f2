//! Nothing runs twice, no two attempts at once (issue 26): a task a remote
//! worker started is journaled before its job leaves, so a coordinator
//! killed at any moment leaves a resumed run that takes it over instead of
//! running it again. The journal writer is slowed on purpose
//! (`FLOW_DEBUG_JOURNAL_DELAY_MS`, debug builds only) so the window is wide.
//! Each task counts its runs in a file outside the workflow's directory.
//! Real processes, real TCP.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use flow_engine::runtime::{RunDir, STATE_DIR};

use crate::support::Test;
use crate::support::process::{finish, lines, read, signal, spawn_flow, spawn_flow_with, wait_child, wait_for};

/// The journal's writer pauses this long before each write.
const SLOW_JOURNAL: (&str, &str) = ("FLOW_DEBUG_JOURNAL_DELAY_MS", "1500");

/// A test directory with the workflow `text` in its subdirectory `wf/`; the
/// task's runs are counted in `count.txt`, beside `wf/`.
fn workflow(text: &str) -> (Test, PathBuf) {
    let t = Test::new();
    let dir = t.path().join("wf");
    fs_err::create_dir(&dir).expect("mkdir");
    fs_err::write(dir.join("workflow.toml"), text).expect("write the workflow");
    (t, dir)
}

/// One task that counts its run, then takes a while.
const ONCE: &str = "[[tasks]]\nname = \"once\"\ncommand = \"echo ran >> ../count.txt; sleep 2\"\n";

/// The latest run under `dir`, once it wrote its access file.
fn access(dir: &Path) -> Option<PathBuf> {
    RunDir::latest(&dir.join(STATE_DIR)).map(|run| run.access()).filter(|a| a.exists())
}

/// Kills `run` with SIGKILL as soon as the task counted its first run.
fn kill_once_counted(t: &Test, run: &mut Child) {
    let counted = wait_for(Duration::from_secs(20), || !lines(t, "count.txt").is_empty());
    assert!(counted, "the task did not start; run:\n{}", read(t, "wf/run.stderr"));
    signal(run.id(), "-KILL");
    wait_child(run, Duration::from_secs(5)).expect("the run was killed");
}

#[test]
fn a_task_a_remote_worker_started_runs_once_across_a_coordinator_kill() {
    let (t, dir) = workflow(ONCE);
    let listen = ["run", "--listen", "127.0.0.1:0", "--no-local-worker"];
    let mut run = spawn_flow_with(&dir, &listen, "run.stderr", &[SLOW_JOURNAL]);
    assert!(wait_for(Duration::from_secs(10), || access(&dir).is_some()), "no access file");
    let access = access(&dir).expect("access file");
    let access = access.to_str().expect("utf-8");
    let mut worker = spawn_flow(&dir, &["worker", "--access", access, "--cpus", "1"], "worker.stderr");
    kill_once_counted(&t, &mut run);
    // The same command again, with a journal as fast as usual.
    let mut again = spawn_flow(&dir, &listen, "run.stderr");
    let stderr = || read(&t, "wf/run.stderr");
    assert_eq!(finish(&t, &mut again, Duration::from_secs(60)), 0, "{}", stderr());
    assert!(stderr().contains("rejoined with 1 task(s) of the killed run"), "{}", stderr());
    assert_eq!(lines(&t, "count.txt"), ["ran"], "the task ran twice");
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some(), "worker did not leave");
}

#[test]
fn a_task_the_embedded_worker_ended_unrecorded_when_flow_was_killed_runs_again() {
    // It ended, but its end was not yet in the journal: the next run cannot
    // know it ran, and runs it again (docs/reference/reruns.md says so).
    let (t, dir) = workflow("[[tasks]]\nname = \"once\"\ncommand = \"echo ran >> ../count.txt\"\n");
    let mut run = spawn_flow_with(&dir, &["run"], "run.stderr", &[SLOW_JOURNAL]);
    kill_once_counted(&t, &mut run);
    let mut again = spawn_flow(&dir, &["run"], "run.stderr");
    assert_eq!(finish(&t, &mut again, Duration::from_secs(30)), 0, "{}", read(&t, "wf/run.stderr"));
    assert_eq!(lines(&t, "count.txt"), ["ran", "ran"]);
}

/// One task that writes a tick with its attempt to `ticks.txt` four times a
/// second: for 30 s in its first attempt (whose shell's pid is in
/// `first.pid`), 2 s in a later one.
const TICKER: &str = "[[tasks]]\nname = \"tick\"\n\
    command = \"n=8; [ $FLOW_INSTANCE = 0 ] && n=120 && echo $$ > ../first.pid; \
    for i in $(seq $n); do echo $FLOW_INSTANCE >> ../ticks.txt; sleep 0.25; done\"\n";

/// Whether process `pid` still exists (and is not a zombie).
fn alive(pid: u32) -> bool {
    fs_err::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z "))
}

/// Whether no tick of a first attempt follows a tick of a later one: two attempts never ran at once.
fn one_attempt_at_a_time(ticks: &[String]) -> bool {
    let later = ticks.iter().position(|t| t != "0").unwrap_or(ticks.len());
    ticks[later..].iter().all(|t| t != "0")
}

/// Starts the run and a first worker (dialing `connect`, if set) and waits
/// for its task to tick; then a second worker, for the next attempt.
fn first_attempt_running(t: &Test, dir: &Path, connect: Option<&str>) -> (Child, Child, Child) {
    let run = spawn_flow(dir, &["run", "--listen", "127.0.0.1:0", "--no-local-worker"], "run.stderr");
    assert!(wait_for(Duration::from_secs(10), || access(dir).is_some()), "no access file");
    let file = access(dir).expect("access file");
    let file = file.to_str().expect("utf-8");
    let mut args = vec!["worker", "--access", file, "--cpus", "1"];
    args.extend(connect.iter().flat_map(|address| ["--connect", address]));
    let first = spawn_flow(dir, &args, "first.stderr");
    assert!(wait_for(Duration::from_secs(20), || !lines(t, "ticks.txt").is_empty()), "{}", read(t, "wf/run.stderr"));
    let second = spawn_flow(dir, &["worker", "--access", file, "--cpus", "1"], "second.stderr");
    (run, first, second)
}

#[test]
fn a_paused_worker_s_task_is_stopped_before_its_next_attempt_starts() {
    let (t, dir) = workflow(TICKER);
    let (mut run, mut first, mut second) = first_attempt_running(&t, &dir, None);
    signal(first.id(), "-STOP");
    // Declared lost after 10 s of silence, its task runs again 5 s later elsewhere.
    let again = wait_for(Duration::from_secs(40), || lines(&t, "ticks.txt").iter().any(|t| t != "0"));
    // Its worker could not stop it: its guard did, its lease from the worker run out.
    let pid = read(&t, "first.pid");
    let stopped = !alive(pid.trim().parse().expect("pid"));
    signal(first.id(), "-CONT");
    assert!(again, "the task did not run again; run:\n{}", read(&t, "wf/run.stderr"));
    assert!(stopped, "the first attempt still ran when the second started");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0, "{}", read(&t, "wf/run.stderr"));
    let ticks = lines(&t, "ticks.txt");
    assert!(one_attempt_at_a_time(&ticks), "two attempts at once: {ticks:?}");
    assert!(ticks.iter().filter(|t| *t == "0").count() < 60, "the paused worker's task ran on: {ticks:?}");
    assert!(read(&t, "wf/run.stderr").contains("no heartbeat for 10s"), "{}", read(&t, "wf/run.stderr"));
    let first_stderr = read(&t, "wf/first.stderr");
    assert!(
        first_stderr.contains("worker: no word from the coordinator for 10s: it stopped its tasks"),
        "{first_stderr}"
    );
    for worker in [&mut first, &mut second] {
        assert!(wait_child(worker, Duration::from_secs(15)).is_some(), "a worker did not leave");
    }
}

#[test]
fn a_worker_cut_off_by_the_network_stops_its_task_before_its_next_attempt_starts() {
    let (t, dir) = workflow(TICKER);
    let proxy = Proxy::start(&dir);
    let (mut run, mut first, mut second) = first_attempt_running(&t, &dir, Some(&proxy.address));
    proxy.cut();
    assert_eq!(finish(&t, &mut run, Duration::from_secs(60)), 0, "{}", read(&t, "wf/run.stderr"));
    let ticks = lines(&t, "ticks.txt");
    assert!(one_attempt_at_a_time(&ticks), "two attempts at once: {ticks:?}");
    assert!(ticks.iter().any(|t| t != "0"), "{ticks:?}");
    let first_stderr = read(&t, "wf/first.stderr");
    assert!(
        first_stderr.contains("worker: no word from the coordinator for 10s: it stopped its tasks"),
        "{first_stderr}"
    );
    let _ = first.kill();
    let _ = first.wait();
    assert!(wait_child(&mut second, Duration::from_secs(15)).is_some(), "a worker did not leave");
}

#[test]
fn a_worker_whose_connection_breaks_comes_back_with_its_task_and_it_runs_once() {
    // The connection closes while both run: the worker keeps its task and
    // rejoins; the run, which holds the task for it, takes it over.
    let (t, dir) = workflow(ONCE);
    let proxy = Proxy::start(&dir);
    let mut run = spawn_flow(&dir, &["run", "--listen", "127.0.0.1:0", "--no-local-worker"], "run.stderr");
    assert!(wait_for(Duration::from_secs(10), || access(&dir).is_some()), "no access file");
    let file = access(&dir).expect("access file");
    let args = ["worker", "--access", file.to_str().expect("utf-8"), "--cpus", "1", "--connect", &proxy.address];
    let mut worker = spawn_flow(&dir, &args, "worker.stderr");
    assert!(wait_for(Duration::from_secs(20), || !lines(&t, "count.txt").is_empty()), "{}", read(&t, "wf/run.stderr"));
    proxy.reset();
    assert_eq!(finish(&t, &mut run, Duration::from_secs(60)), 0, "{}", read(&t, "wf/run.stderr"));
    let stderr = read(&t, "wf/run.stderr");
    assert!(stderr.contains("rejoined with 1 task(s) it kept: they run on"), "{stderr}");
    assert_eq!(lines(&t, "count.txt"), ["ran"], "the task ran twice");
    assert!(wait_child(&mut worker, Duration::from_secs(15)).is_some(), "the worker did not leave");
}

/// A TCP proxy to the run's address that can stop forwarding, keeping its
/// connections open (a network that went silent), or close them.
struct Proxy {
    address: String,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Proxy {
    /// Listens on a free port of 127.0.0.1 and forwards to the address in the access file of the run under `dir`.
    fn start(dir: &Path) -> Proxy {
        use std::net::{TcpListener, TcpStream};
        use std::sync::atomic::AtomicBool;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        let cut = std::sync::Arc::new(AtomicBool::new(false));
        let open = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (dir, flag, streams) = (dir.to_path_buf(), cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Some(upstream) = access(&dir).and_then(|a| flow_engine::net::AccessFile::read(&a).ok()) else {
                    continue;
                };
                let Ok(server) = TcpStream::connect(&upstream.address) else { continue };
                let mut held = streams.lock().expect("lock");
                held.extend([client.try_clone().expect("clone"), server.try_clone().expect("clone")]);
                drop(held);
                for (from, to) in [(&client, &server), (&server, &client)] {
                    let (from, to, flag) =
                        (from.try_clone().expect("clone"), to.try_clone().expect("clone"), flag.clone());
                    std::thread::spawn(move || pump(from, to, &flag));
                }
            }
        });
        Proxy { address, cut, open }
    }

    /// Closes every connection so far; new ones are forwarded.
    fn reset(&self) {
        for stream in self.open.lock().expect("lock").drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }

    /// From now on nothing passes, either way.
    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Copies `from` to `to` until either closes; once `cut`, what is read is dropped.
fn pump(mut from: std::net::TcpStream, mut to: std::net::TcpStream, cut: &std::sync::atomic::AtomicBool) {
    use std::io::{Read, Write};
    let mut buf = [0; 16 << 10];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) if cut.load(std::sync::atomic::Ordering::SeqCst) => {}
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        }
    }
}
