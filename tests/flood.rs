//! Joins that a flood of connections cannot block (issue 28): a client
//! that keeps thousands of connections open to a run's port, and opens
//! each again the moment it is closed, must not keep a worker out.

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use flow_engine::runtime::{RunDir, STATE_DIR};

use crate::support::Test;
use crate::support::process::{lines, read, spawn_flow_out, wait_child, wait_for};
use crate::workers::start_run;

/// Connections the flood keeps open.
const FLOOD: usize = 2_000;
/// How long the flood lasts.
const FLOOD_FOR: Duration = Duration::from_secs(15);
/// How soon a worker must be in while the flood lasts.
const JOIN_WITHIN: Duration = Duration::from_secs(5);

/// A reconnecting flood of silent connections to `address`.
struct Flood {
    stop: Arc<AtomicBool>,
    /// Connections made so far.
    opened: Arc<AtomicU64>,
    until: Instant,
    threads: Vec<JoinHandle<()>>,
}

impl Flood {
    /// Starts `connections` threads that each hold a connection open,
    /// sending nothing, and open a new one as soon as it is closed, until
    /// `until` (or [`Flood::stop`]).
    fn start(address: SocketAddr, connections: usize, until: Instant) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicU64::new(0));
        let threads = (0..connections)
            .map(|_| {
                let (stop, opened) = (Arc::clone(&stop), Arc::clone(&opened));
                let over = move || stop.load(Ordering::Relaxed) || Instant::now() >= until;
                std::thread::Builder::new()
                    .stack_size(64 * 1024)
                    .spawn(move || hold(address, &over, &opened))
                    .expect("a flood thread")
            })
            .collect();
        Self { stop, opened, until, threads }
    }

    /// Whether the flood has ended.
    fn is_over(&self) -> bool {
        Instant::now() >= self.until
    }

    /// Stops the flood and waits for its threads; returns how many connections it made.
    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads {
            thread.join().expect("a flood thread");
        }
        self.opened.load(Ordering::Relaxed)
    }
}

/// One connection of the flood, opened again each time it closes, until `over`.
fn hold(address: SocketAddr, over: &dyn Fn() -> bool, opened: &AtomicU64) {
    let mut bytes = [0; 64];
    while !over() {
        let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_secs(1)) else {
            // Nothing listens (the run ended): do not spin.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        opened.fetch_add(1, Ordering::Relaxed);
        let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
        // Until the coordinator hangs up (or the flood ends).
        while !over() {
            match stream.read(&mut bytes) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => break,
            }
        }
    }
}

/// Issue 28: 2,000 silent connections, each reopened the moment it is
/// closed, kept the coordinator's handshake slots full, and a worker got
/// "the coordinator is busy" until the flood stopped. Now it joins within
/// 5 s while the flood lasts, and the run finishes.
#[test]
fn a_worker_joins_while_a_reconnecting_flood_lasts() {
    let t = Test::new().workflow(WORKFLOW);
    let (run, access) = start_run(&t, &["--no-local-worker"]);
    join_during_a_flood(&t, run, &access);
}

/// Issue 28: a flood larger than the room the coordinator keeps for
/// connections that have not said anything yet (a quarter of its 1,024
/// descriptors here) pushes its own oldest connections out, not the worker's.
#[test]
fn a_worker_joins_while_a_flood_overfills_the_lobby() {
    let t = Test::new().workflow(WORKFLOW);
    let command = format!(
        "ulimit -n 1024 && exec {} run --no-local-worker --listen 127.0.0.1:0",
        crate::support::process::flow_bin().display()
    );
    let run = std::process::Command::new("sh")
        .args(["-c", &command])
        .current_dir(t.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(fs_err::File::create(t.path().join("run.stderr")).unwrap().into_parts().0)
        .spawn()
        .expect("start flow run");
    let access = || RunDir::latest(&t.path().join(STATE_DIR)).map(|run| run.access()).filter(|a| a.exists());
    assert!(wait_for(Duration::from_secs(10), || access().is_some()), "{}", read(&t, "run.stderr"));
    join_during_a_flood(&t, run, &access().expect("an access file"));
}

/// Three quick instances for a remote worker.
const WORKFLOW: &str = "[[tasks]]\nname = \"t\"\nrange = \"1-3\"\ncommand = \"echo {{ index }} >> done.txt\"\n";

/// Floods the listening `run` with [`FLOOD`] connections for up to
/// [`FLOOD_FOR`], starts a worker, and checks that it joins within
/// [`JOIN_WITHIN`] and that the run finishes while the flood lasts.
fn join_during_a_flood(t: &Test, mut run: Child, access: &Path) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard).expect("raise this test's descriptor limit");
    let connections = FLOOD.min(hard.saturating_sub(200) as usize);
    let address: SocketAddr =
        flow_engine::net::AccessFile::read(access).expect("access file").address.parse().expect("an address");

    let flood = Flood::start(address, connections, Instant::now() + FLOOD_FOR);
    // The flood is under way before the worker comes.
    assert!(wait_for(Duration::from_secs(5), || flood.opened.load(Ordering::Relaxed) >= connections as u64));
    std::thread::sleep(Duration::from_secs(1));

    let access = access.to_str().expect("a UTF-8 path");
    let started = Instant::now();
    let mut worker = spawn_flow_out(t, &["worker", "--access", access, "--cpus", "1", "--json"], "worker.json");
    let joined = wait_for(JOIN_WITHIN, || read(t, "worker.json").contains("\"event\":\"joined\""));
    let waited = started.elapsed();
    let joined_flooding = !flood.is_over();
    let finished = wait_child(&mut run, FLOOD_FOR + Duration::from_secs(10));
    let finished_flooding = !flood.is_over();
    let opened = flood.stop();
    eprintln!("the flood made {opened} connections; the worker waited {waited:?}");
    if finished.is_none() {
        let _ = run.kill();
    }
    let _ = wait_child(&mut worker, Duration::from_secs(10));
    let said = format!("{}{}", read(t, "worker.json"), read(t, "worker.json.stderr"));
    assert!(joined && joined_flooding, "not joined within {JOIN_WITHIN:?} of a flood:\n{said}");
    assert_eq!(finished.and_then(|s| s.code()), Some(0), "{}", read(t, "run.stderr"));
    assert!(finished_flooding, "the run finished only after the flood");
    assert_eq!(lines(t, "done.txt").len(), 3);
}
