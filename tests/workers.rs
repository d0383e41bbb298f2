//! Remote workers end to end: `flow run --listen` with `flow worker
//! --access` processes on this machine, over real TCP.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use flow_engine::runtime::{RunDir, STATE_DIR};

use crate::support::Test;
use crate::support::process::{finish, lines, read, spawn_flow, wait_child, wait_for};

/// Starts `flow run --listen 127.0.0.1:0` with `extra` flags and waits for the access file.
pub(crate) fn start_run(t: &Test, extra: &[&str]) -> (Child, PathBuf) {
    let mut args = vec!["run", "--listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut run = spawn_flow(t.path(), &args, "run.stderr");
    if !wait_for(Duration::from_secs(10), || listening_run(t).is_some()) {
        let _ = run.kill();
        panic!("no access file; stderr:\n{}", read(t, "run.stderr"));
    }
    (run, listening_run(t).expect("a run").access())
}

/// The latest run, once it has written its access file.
fn listening_run(t: &Test) -> Option<RunDir> {
    RunDir::latest(&t.path().join(STATE_DIR)).filter(|run| run.access().exists())
}

/// Starts `flow worker --access ACCESS` with `extra` flags; its stderr goes to the file `stderr`.
pub(crate) fn start_worker(t: &Test, access: &Path, extra: &[&str], stderr: &str) -> Child {
    let access = access.to_str().expect("utf-8 path");
    let mut args = vec!["worker", "--access", access];
    args.extend_from_slice(extra);
    spawn_flow(t.path(), &args, stderr)
}

#[test]
fn a_workflow_runs_on_a_remote_worker_only() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"gen\"\nrange = \"1-4\"\ncommand = \"echo from $FLOW_TASK $FLOW_INDEX\"\noutputs = []\n\
         [[tasks]]\nname = \"after\"\ncommand = \"echo done > done.txt\"\nafter = [\"gen\"]\noutputs = [\"done.txt\"]\n",
    );
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = start_worker(&t, &access, &["--cpus", "2"], "worker.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0, "{}", read(&t, "run.stderr"));
    assert_eq!(read(&t, "done.txt"), "done\n");
    let stderr = read(&t, "run.stderr");
    assert!(stderr.contains("+ worker 0 joined"), "{stderr}");
    // The worker leaves when the run ends.
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some_and(|s| s.success()), "worker did not leave");
    assert!(read(&t, "worker.stderr").contains("the run ended"));
    // Output streamed from the worker is in the one run log.
    let out = t.success_with(&["log", "cat", "gen"]);
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(out.contains("from gen 3"));
    let workers = t.success_with(&["workers"]);
    assert!(workers.contains("1 workers") || workers.contains("1 worker"), "{workers}");
    // The access file is private.
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(fs_err::metadata(&access).expect("access file").permissions().mode() & 0o777, 0o600);
}

#[test]
fn a_worker_leaves_as_soon_as_the_run_ends() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\nrange = \"1-2\"\ncommand = \"true\"\n");
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = start_worker(&t, &access, &["--cpus", "1"], "worker.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0, "{}", read(&t, "run.stderr"));
    // Its connection writer used to wait out a 2 s timeout on the heartbeat.
    let left = std::time::Instant::now();
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some_and(|s| s.success()), "worker did not leave");
    assert!(left.elapsed() < Duration::from_millis(1500), "the worker took {:?} to leave", left.elapsed());
}

#[test]
fn a_worker_started_after_its_run_ended_leaves_at_once() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ncommand = \"true\"\n");
    let (mut run, access) = start_run(&t, &[]);
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0, "{}", read(&t, "run.stderr"));
    // Nothing listens there any more: it used to try again for `--reconnect-for` (5 minutes).
    let started = std::time::Instant::now();
    let mut late = start_worker(&t, &access, &["--cpus", "1"], "late.stderr");
    assert!(wait_child(&mut late, Duration::from_secs(10)).is_some_and(|s| s.success()), "the late worker stayed");
    assert!(started.elapsed() < Duration::from_secs(5), "it took {:?}", started.elapsed());
    assert!(read(&t, "late.stderr").contains("the run ended"), "{}", read(&t, "late.stderr"));
}

#[test]
fn a_peer_with_the_wrong_secret_is_refused_and_the_run_goes_on() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\nrange = \"1-2\"\ncommand = \"sleep 0.5\"\n");
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut wrong: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(&access).expect("access")).expect("JSON");
    wrong["secret"] = serde_json::Value::String("00".repeat(32));
    let bad = t.path().join("bad-access.json");
    fs_err::write(&bad, wrong.to_string()).expect("write");
    let mut intruder = start_worker(&t, &bad, &[], "intruder.stderr");
    let status = wait_child(&mut intruder, Duration::from_secs(15)).expect("the refused worker exits");
    assert_eq!(status.code(), Some(2), "{}", read(&t, "intruder.stderr"));
    assert!(read(&t, "intruder.stderr").contains("refused"), "{}", read(&t, "intruder.stderr"));
    let mut worker = start_worker(&t, &access, &["--cpus", "2"], "worker.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0);
    let stderr = read(&t, "run.stderr");
    assert!(stderr.contains("! refused a connection"), "{stderr}");
    let _ = wait_child(&mut worker, Duration::from_secs(10));
}

#[test]
fn a_killed_workers_tasks_run_again_elsewhere() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"job\"\nrange = \"1-4\"\n\
         command = \"echo $FLOW_INDEX:$FLOW_INSTANCE >> started.txt; sleep 1.5; echo $FLOW_INDEX:$FLOW_INSTANCE >> finished.txt\"\n",
    );
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut first = start_worker(&t, &access, &["--cpus", "2"], "first.stderr");
    assert!(wait_for(Duration::from_secs(10), || lines(&t, "started.txt").len() >= 2), "tasks never started");
    // Long enough for the worker to hand its tasks to its guard process.
    std::thread::sleep(Duration::from_millis(500));
    first.kill().expect("kill the first worker");
    let _ = first.wait();
    let mut second = start_worker(&t, &access, &["--cpus", "4"], "second.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(40)), 0, "{}", read(&t, "run.stderr"));
    let stderr = read(&t, "run.stderr");
    assert!(stderr.contains("worker 0 (") && stderr.contains("again elsewhere"), "{stderr}");
    // Every instance finished, and the ones that were running on the lost
    // worker were started again with FLOW_INSTANCE bumped.
    let started = lines(&t, "started.txt");
    assert!(started.iter().any(|l| l.ends_with(":1")), "no second attempt in {started:?}");
    let summary = t.success_with(&["log", "list", "--json"]);
    assert_eq!(summary.lines().filter(|l| l.contains("\"succeeded\"")).count(), 4, "{summary}");
    // The killed worker's guard ended its tasks: none of them finished beside its new attempt.
    let finished = lines(&t, "finished.txt");
    let indices: std::collections::BTreeSet<_> = finished.iter().filter_map(|l| l.split(':').next()).collect();
    assert_eq!((finished.len(), indices.len()), (4, 4), "an instance finished twice: {finished:?}");
    let _ = wait_child(&mut second, Duration::from_secs(10));
}

#[test]
fn a_task_goes_only_to_a_worker_whose_time_left_covers_it() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"long\"\ncommand = \"echo ok > long.txt\"\ntime_request = \"2h\"\noutputs = [\"long.txt\"]\n",
    );
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut short = start_worker(&t, &access, &["--cpus", "1", "--time-limit", "1h"], "short.stderr");
    assert!(wait_for(Duration::from_secs(10), || read(&t, "run.stderr").contains("joined")), "no worker joined");
    std::thread::sleep(Duration::from_secs(1));
    assert!(!t.path().join("long.txt").exists(), "a 2h task ran on a worker with 1h left");
    let mut roomy = start_worker(&t, &access, &["--cpus", "1"], "roomy.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0, "{}", read(&t, "run.stderr"));
    assert_eq!(read(&t, "long.txt"), "ok\n");
    for w in [&mut short, &mut roomy] {
        let _ = wait_child(w, Duration::from_secs(10));
    }
}

#[test]
fn a_multi_node_task_gets_every_host() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"mpi\"\nnodes = 2\ncommand = \"echo $FLOW_HOSTS > hosts.txt; cat $FLOW_NODEFILE > nodefile.txt\"\n",
    );
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut a = start_worker(&t, &access, &["--cpus", "1"], "a.stderr");
    let mut b = start_worker(&t, &access, &["--cpus", "1"], "b.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0, "{}", read(&t, "run.stderr"));
    assert_eq!(read(&t, "hosts.txt").trim().split(',').count(), 2, "{}", read(&t, "hosts.txt"));
    assert_eq!(lines(&t, "nodefile.txt").len(), 2);
    for w in [&mut a, &mut b] {
        let _ = wait_child(w, Duration::from_secs(10));
    }
}

/// Relays the TCP connections `listener` accepts to `target` (as an SSH
/// tunnel or a gateway would); returns the port it listens on.
fn forward(listener: std::net::TcpListener, target: std::net::SocketAddr) -> u16 {
    use std::net::TcpStream;
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(target) else { continue };
            let (mut c2, mut s2) = (client.try_clone().expect("clone"), server.try_clone().expect("clone"));
            let (mut client, mut server) = (client, server);
            std::thread::spawn(move || std::io::copy(&mut client, &mut server));
            std::thread::spawn(move || std::io::copy(&mut s2, &mut c2));
        }
    });
    port
}

#[test]
fn a_worker_reaching_the_run_through_a_second_port_joins_while_it_runs() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"first\"\ncommand = \"echo first\"\n\
         [[tasks]]\nname = \"later\"\nrange = \"1-3\"\ncommand = \"echo later on $FLOW_INDEX > l{{ index }}.txt\"\n\
         after = [\"first\"]\noutputs = [\"l{{ index }}.txt\"]\n",
    );
    // The run starts with nobody to run its tasks, then a worker joins through a relay.
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let file: serde_json::Value = serde_json::from_str(&fs_err::read_to_string(&access).unwrap()).unwrap();
    let target = file["address"].as_str().and_then(|a| a.parse().ok()).expect("a 127.0.0.1 address");
    let port = forward(std::net::TcpListener::bind("127.0.0.1:0").expect("bind"), target);
    let connect = format!("127.0.0.1:{port}");
    let mut worker = start_worker(&t, &access, &["--cpus", "1", "--connect", &connect], "worker.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0, "{}", read(&t, "run.stderr"));
    assert_eq!(read(&t, "l3.txt"), "later on 3\n");
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some_and(|s| s.success()));
}

#[test]
fn tasks_sent_ahead_to_a_remote_worker_still_run_one_per_slot() {
    // The worker is sent its next task before a slot frees (see core/prefetch.rs);
    // it must start it only when the slot's task has ended, on the same CPU.
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"t\"\nrange = \"1-30\"\n\
         command = \"echo start $FLOW_CPUS $FLOW_INDEX >> trace.txt; sleep 0.02; echo end $FLOW_CPUS $FLOW_INDEX >> trace.txt\"\n",
    );
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = start_worker(&t, &access, &["--cpus", "1"], "worker.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(60)), 0, "{}", read(&t, "run.stderr"));
    let _ = wait_child(&mut worker, Duration::from_secs(10));
    // One slot: the tasks ran strictly one after the other, on CPU 0.
    let trace = lines(&t, "trace.txt");
    assert_eq!(trace.len(), 60);
    for pair in trace.chunks(2) {
        let index = pair[0].rsplit(' ').next().unwrap_or_default();
        assert_eq!(pair, [format!("start 0 {index}"), format!("end 0 {index}")], "{trace:?}");
    }
}

/// Issue 12: connections that never complete the handshake exhausted the
/// coordinator's descriptors; its accept loop then spun and local tasks
/// failed "Too many open files". 5,000 such connections while a run works
/// (with 1,024 descriptors): the run finishes with nothing lost, and the
/// refusals are said once, not 5,000 times.
#[test]
fn a_flood_of_silent_connections_does_not_hurt_the_run() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    let flood = 5_000.min(hard.saturating_sub(200)) as usize;
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard).expect("raise this test's descriptor limit");

    let t = Test::new().workflow(
        "[[tasks]]\nname = \"work\"\nrange = \"1-60\"\n\
         command = \"sleep 0.05; for f in 1 2 3 4 5 6 7 8; do exec 3<workflow.toml; done; echo {{ index }} >> done.txt\"\n",
    );
    let command = format!(
        "ulimit -n 1024 && exec {} run --cpus 2 --listen 127.0.0.1:0",
        crate::support::process::flow_bin().display()
    );
    let mut run = std::process::Command::new("sh")
        .args(["-c", &command])
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(fs_err::File::create(t.path().join("run.stderr")).unwrap().into_parts().0)
        .spawn()
        .expect("start flow run");
    assert!(wait_for(Duration::from_secs(10), || listening_run(&t).is_some()));
    let access = listening_run(&t).unwrap().read_access().unwrap();
    let address: std::net::SocketAddr = access.address.parse().unwrap();

    let mut held = Vec::new();
    for _ in 0..flood {
        if let Ok(stream) = std::net::TcpStream::connect_timeout(&address, Duration::from_millis(200)) {
            held.push(stream);
        }
    }
    eprintln!("{} of {flood} connections were made", held.len());
    assert_eq!(finish(&t, &mut run, Duration::from_secs(60)), 0, "{}", read(&t, "run.stderr"));
    drop(held);
    assert_eq!(lines(&t, "done.txt").len(), 60, "every instance ran once");
    let stderr = read(&t, "run.stderr");
    let refused = stderr.lines().filter(|l| l.contains("refused")).count();
    assert!((1..=3).contains(&refused), "{refused} lines about refusals:\n{stderr}");
    assert!(!stderr.contains("Too many open files"), "{stderr}");
}

/// Issue 13: a worker whose coordinator was killed said "the run ended".
/// (It now tries to rejoin a resumed run first, for `--reconnect-for`.)
#[test]
fn a_worker_whose_coordinator_is_killed_says_it_was_lost() {
    let t = Test::new().workflow("[[tasks]]\nname = \"long\"\ncommand = \"sleep 30\"\n");
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut worker = start_worker(&t, &access, &["--cpus", "1", "--reconnect-for", "1s"], "worker.stderr");
    assert!(wait_for(Duration::from_secs(10), || read(&t, "run.stderr").contains("joined")));
    crate::support::process::signal(run.id(), "-KILL");
    wait_child(&mut run, Duration::from_secs(5)).expect("the run was killed");
    assert!(wait_child(&mut worker, Duration::from_secs(20)).is_some(), "the worker left");
    let stderr = read(&t, "worker.stderr");
    assert!(stderr.contains("worker left: the coordinator was lost (killed, or unreachable)"), "{stderr}");
}

/// Issue 13: `flow status` printed "0 workers connected:" with nothing under it.
#[test]
fn status_says_when_no_worker_is_connected() {
    let t = Test::new().workflow("[[tasks]]\nname = \"waits\"\ncommand = \"true\"\n");
    let (mut run, _access) = start_run(&t, &["--no-local-worker"]);
    let status = t.success_with(&["status"]);
    let json = t.success_with(&["status", "--json"]);
    crate::support::process::signal(run.id(), "-INT");
    wait_child(&mut run, Duration::from_secs(10)).expect("the run stops");
    assert!(status.contains("  no worker connected\n"), "{status}");
    assert!(!status.contains("0 workers"), "{status}");
    // Issue 11: the same standing as JSON, while the run is live.
    let json: serde_json::Value = serde_json::from_str(&json).expect("one document");
    assert_eq!(
        (&json["state"], &json["workers"], &json["duration_us"]),
        (&"running".into(), &serde_json::json!([]), &serde_json::Value::Null),
        "{json}"
    );
    assert_eq!((&json["counts"]["total"], &json["counts"]["queued"]), (&1.into(), &1.into()), "{json}");
}

/// Issue 13: after the run, `flow explain` named no host for a task whose
/// worker had left before the end (as idle workers of a queue do).
#[test]
fn explain_names_the_host_of_a_worker_that_left() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"a\"\ncommand = \"true\"\n\n[[tasks]]\nname = \"b\"\ncommand = \"true\"\ncpus = 2\nafter = [\"a\"]\n",
    );
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let mut small = start_worker(&t, &access, &["--cpus", "1", "--idle-timeout", "1s"], "small.stderr");
    assert!(wait_child(&mut small, Duration::from_secs(20)).is_some(), "the idle worker left");
    let mut big = start_worker(&t, &access, &["--cpus", "2"], "big.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0, "{}", read(&t, "run.stderr"));
    let _ = wait_child(&mut big, Duration::from_secs(10));
    let json: serde_json::Value = serde_json::from_str(&t.success_with(&["explain", "a", "--json"])).expect("json");
    let text = serde_json::to_string(&json).unwrap();
    assert!(text.contains("\"host\":\""), "no host for the worker that left: {text}");
    let words = t.success_with(&["explain", "a"]);
    assert!(words.contains("on worker 0 ("), "{words}");
}

#[test]
fn flow_workers_counts_the_tasks_running_now() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"slow\"\nrange = \"1-2\"\ncommand = \"touch started{{ index }}; sleep 3\"\n");
    let mut run = spawn_flow(t.path(), &["run", "--cpus", "2"], "run.stderr");
    let started =
        wait_for(Duration::from_secs(10), || t.path().join("started1").exists() && t.path().join("started2").exists());
    assert!(started, "{}", read(&t, "run.stderr"));
    // workers.json follows the running tasks within about a second.
    let two = wait_for(Duration::from_secs(3), || {
        t.success_with(&["workers"]).lines().nth(2).is_some_and(|l| l.trim_end().ends_with(" 2"))
    });
    assert!(two, "{}", t.success_with(&["workers"]));
    assert_eq!(finish(&t, &mut run, Duration::from_secs(30)), 0);
    let after = t.success_with(&["workers"]);
    assert!(after.lines().nth(2).is_some_and(|l| l.trim_end().ends_with(" 0")), "{after}");
}

/// Issue 28: silent connections wait in the coordinator's lobby and hold
/// no handshake slot, so a worker is not turned away by 200 of them (it
/// used to be: they filled the 64 slots).
#[test]
fn a_worker_joins_past_silent_connections_without_trying_again() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"work\"\nrange = \"1-60\"\ncommand = \"echo {{ index }} >> done.txt\"\n");
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let address: std::net::SocketAddr =
        flow_engine::net::AccessFile::read(&access).expect("access file").address.parse().unwrap();
    let held: Vec<_> = (0..200)
        .filter_map(|_| std::net::TcpStream::connect_timeout(&address, Duration::from_millis(200)).ok())
        .collect();
    let mut worker = start_worker(&t, &access, &["--cpus", "2"], "worker.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(60)), 0, "{}", read(&t, "run.stderr"));
    drop(held);
    assert_eq!(lines(&t, "done.txt").len(), 60, "every instance ran once");
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some_and(|s| s.success()), "the worker left");
    assert_eq!(read(&t, "worker.stderr"), "worker left: the run ended\n");
}

/// A worker that cannot join yet (nothing listens at its address) tries
/// again, says so once, and joins when it can. Before, a worker turned
/// away exited 2, and a run with `--no-local-worker` then waited forever.
#[test]
fn a_worker_that_cannot_join_yet_tries_again_and_joins() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"work\"\nrange = \"1-60\"\ncommand = \"echo {{ index }} >> done.txt\"\n");
    let (mut run, access) = start_run(&t, &["--no-local-worker"]);
    let target = flow_engine::net::AccessFile::read(&access).expect("access file").address.parse().unwrap();
    // A port nothing listens on, until the relay below does.
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let connect = format!("127.0.0.1:{port}");
    let mut worker = start_worker(&t, &access, &["--cpus", "2", "--connect", &connect], "worker.stderr");
    assert!(wait_for(Duration::from_secs(10), || read(&t, "worker.stderr").contains("trying again")));
    forward(std::net::TcpListener::bind(&connect).expect("bind the worker's port"), target);
    assert_eq!(finish(&t, &mut run, Duration::from_secs(60)), 0, "{}", read(&t, "run.stderr"));
    assert_eq!(lines(&t, "done.txt").len(), 60, "every instance ran once");
    assert!(wait_child(&mut worker, Duration::from_secs(10)).is_some_and(|s| s.success()), "the worker left");
    let stderr = read(&t, "worker.stderr");
    let retried: Vec<_> = stderr.lines().filter(|l| l.contains("trying again for up to")).collect();
    assert_eq!(retried.len(), 1, "it says once that it tries again:\n{stderr}");
    assert!(retried[0].starts_with(&format!("worker: cannot join {connect}: ")), "{stderr}");
}

/// `flow worker --dry-exec` is a real worker over real TCP that completes
/// each job at once: a `--dry-exec` run with no local worker finishes on
/// four of them from one process, and nothing is executed.
#[test]
fn zero_execution_workers_complete_a_dry_run_without_running_anything() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"work\"\nrange = \"1-500\"\ncommand = \"echo {{ index }} >> ran.txt\"\n");
    let (mut run, access) = start_run(&t, &["--dry-exec", "--no-local-worker"]);
    let mut workers = start_worker(&t, &access, &["--dry-exec", "--copies", "4", "--cpus", "8"], "workers.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(60)), 0, "{}", read(&t, "run.stderr"));
    let left = wait_child(&mut workers, Duration::from_secs(10));
    assert!(left.is_some_and(|s| s.success()), "{}", read(&t, "workers.stderr"));
    assert!(!t.path().join("ran.txt").exists(), "nothing ran");
    let joined = read(&t, "run.stderr").lines().filter(|l| l.starts_with("+ worker ")).count();
    assert_eq!(joined, 4, "{}", read(&t, "run.stderr"));
    let status: serde_json::Value = serde_json::from_str(&t.success_with(&["status", "--json"])).expect("JSON");
    assert_eq!((&status["dry_exec"], &status["counts"]["succeeded"]), (&true.into(), &500.into()), "{status}");
}

/// A zero-execution worker starts no process, so it starts no guard
/// either, unlike a real one: with many of them on one machine, each would
/// double the processes started (issue 28).
#[test]
fn a_zero_execution_worker_starts_no_guard() {
    for (flags, guarded) in [(&["--dry-exec"][..], false), (&[][..], true)] {
        // A task no worker of 2 CPUs fits: the run waits, the worker stays.
        let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ncpus = 4\ncommand = \"true\"\n");
        let (mut run, access) = start_run(&t, &[flags, &["--no-local-worker"]].concat());
        let mut worker = start_worker(&t, &access, &[flags, &["--cpus", "2"]].concat(), "worker.stderr");
        let joined = wait_for(Duration::from_secs(10), || read(&t, "run.stderr").contains("+ worker 0 joined"));
        let guard = crate::support::process::guard_of(worker.id());
        crate::support::process::signal(run.id(), "-INT");
        wait_child(&mut run, Duration::from_secs(10)).expect("the run stops");
        wait_child(&mut worker, Duration::from_secs(10)).expect("the worker leaves");
        assert!(joined, "{}", read(&t, "run.stderr"));
        assert_eq!(guard.is_some(), guarded, "{flags:?}");
    }
}

/// A zero-execution worker may not join a real run, nor a real worker a
/// `--dry-exec` run: each is refused with the reason and exits 2.
#[test]
fn a_worker_of_the_other_kind_is_refused() {
    for (run_flags, worker_flags, reason) in [
        (&["--no-local-worker"][..], &["--dry-exec"][..], "a `flow worker --dry-exec` may join only a --dry-exec run"),
        (
            &["--dry-exec", "--no-local-worker"][..],
            &[][..],
            "this is a --dry-exec run: only `flow worker --dry-exec` may join it",
        ),
    ] {
        let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ncommand = \"true\"\n");
        let (mut run, access) = start_run(&t, run_flags);
        let mut worker = start_worker(&t, &access, worker_flags, "worker.stderr");
        let status = wait_child(&mut worker, Duration::from_secs(15)).expect("the refused worker exits");
        crate::support::process::signal(run.id(), "-INT");
        wait_child(&mut run, Duration::from_secs(10)).expect("the run stops");
        assert_eq!(status.code(), Some(2), "{}", read(&t, "worker.stderr"));
        assert_eq!(read(&t, "worker.stderr"), format!("worker left: the run refused it: {reason}\n"));
        assert!(read(&t, "run.stderr").contains(reason), "{}", read(&t, "run.stderr"));
    }
}

/// Issue 29: `flow workers` showed a worker's 1.5 GiB as "1 GiB", one
/// column right of its header.
#[test]
fn flow_workers_shows_memory_to_the_fraction_under_its_header() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ncommand = \"true\"\n");
    t.success_with(&["run", "--cpus", "1", "--memory", "1.5GiB"]);
    let shown = t.success_with(&["workers"]);
    let (header, row) = (shown.lines().nth(1).unwrap_or_default(), shown.lines().nth(2).unwrap_or_default());
    let fields: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(fields[fields.len().saturating_sub(5)..], ["1", "0", "1.5", "GiB", "0"], "{shown}");
    let end = |line: &str, word: &str| line.find(word).map(|at| at + word.len());
    assert_eq!(end(header, "MEMORY"), end(row, "GiB"), "{shown}");
}
