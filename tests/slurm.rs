//! Allocation queues on a real single-node Slurm (started, as root, by
//! `eval "$(.ci/slurm/start.sh)"`; `.ci/full-suite` does it). The tests are
//! ignored, with the reason, unless `--include-ignored` is passed; then,
//! with `SLURM_CONF` unset, they are skipped with a message, and fail
//! under `CI=true` (see [`crate::support::needs`]).

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use crate::support::process::{entries, finish, read, signal, spawn_flow, wait_child, wait_for};
use crate::support::{Test, needs};

/// The cluster has two CPUs: one test at a time.
static CLUSTER: Mutex<()> = Mutex::new(());

/// The cluster, held so that one test at a time runs on it; `None` (the
/// test is skipped) without Slurm.
fn slurm() -> Option<std::sync::MutexGuard<'static, ()>> {
    let found = std::env::var_os("SLURM_CONF").is_some();
    let needs = "needs a Slurm cluster (SLURM_CONF is unset): start one as root with `eval \"$(.ci/slurm/start.sh)\"`";
    needs::met(found, needs).then(|| CLUSTER.lock().unwrap_or_else(|e| e.into_inner()))
}

/// A profile `slurm` with a queue of 1-CPU workers and these extra settings.
fn profile(extra: &str) -> String {
    format!(
        "[profile.slurm.queue]\nmanager = \"slurm\"\npartition = \"debug\"\ntime_limit = \"10m\"\n\
         idle_timeout = \"5s\"\npoll_interval = \"2s\"\nworker = {{ cpus = 1 }}\n{extra}"
    )
}

/// The run directory of the only run in `t`.
fn run_dir(t: &Test) -> PathBuf {
    let runs = t.path().join(".flow/runs");
    runs.join(entries(&runs).into_iter().next_back().expect("a run"))
}

/// Job ids and states Slurm lists for the run in `t`.
fn squeue(t: &Test) -> Vec<(String, String)> {
    let Some(id) = entries(&t.path().join(".flow/runs")).into_iter().next_back() else { return Vec::new() };
    let out =
        Command::new("squeue").args(["-h", "-o", "%i %T", &format!("--name=flow-{id}")]).output().expect("run squeue");
    assert!(out.status.success(), "squeue: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(a, b)| (a.to_owned(), b.to_owned())))
        .collect()
}

fn allocs(t: &Test) -> serde_json::Value {
    serde_json::from_str(&fs_err::read_to_string(run_dir(t).join("allocs.json")).expect("allocs.json")).expect("json")
}

/// Waits until an allocation of the run in `t` has a connected worker.
fn wait_running(t: &Test, limit: Duration) {
    let running = wait_for(limit, || {
        // The file is rewritten as the run goes: a torn read is no answer yet.
        run_dir_exists(t)
            && fs_err::read_to_string(run_dir(t).join("allocs.json"))
                .ok()
                .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
                .and_then(|v| v["allocations"].as_array().map(|a| a.iter().any(|a| a["state"] == "running")))
                .unwrap_or(false)
    });
    assert!(running, "no allocation started; stderr:\n{}", read(t, "run.stderr"));
}

/// `text` normalised, with Slurm's job ids (`job 42`, `jobs 42, 43`) as `[JOB]`.
fn normalize(t: &Test, text: &str) -> String {
    static JOB: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\b(jobs?) \d+\b").expect("job pattern"));
    JOB.replace_all(&t.normalize(text), "$1 [JOB]").into_owned()
}

/// The lines about allocations and workers left out: they come and go in
/// an order, and a number, that Slurm's timing decides.
fn without_queue_lines(text: &str) -> String {
    let queue = |l: &str| {
        l.split_once(' ').is_some_and(|(_, rest)| rest.starts_with("allocation ") || rest.starts_with("worker "))
    };
    text.lines().filter(|l| !queue(l)).map(|l| format!("{l}\n")).collect()
}

/// The lines of `text` about allocation `id`, in order.
fn allocation_lines(text: &str, id: u32) -> Vec<&str> {
    let prefix = format!("allocation {id} ");
    text.lines().filter(|l| l.split_once(' ').is_some_and(|(_, rest)| rest.starts_with(&prefix))).collect()
}

/// The lines of `text`, sorted: what was said, whatever the order in which
/// Slurm's timing had it said.
fn sorted_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn run_dir_exists(t: &Test) -> bool {
    !entries(&t.path().join(".flow/runs")).is_empty()
}

/// Starts `flow run --profile slurm`, waits (up to a minute) until
/// `ready`, and kills it with SIGKILL.
fn run_until_then_kill(t: &Test, ready: impl Fn() -> bool) {
    let mut run = spawn_flow(t.path(), &["run", "--profile", "slurm"], "run.stderr");
    assert!(wait_for(Duration::from_secs(60), ready), "not ready in time; stderr:\n{}", read(t, "run.stderr"));
    signal(run.id(), "-KILL");
    wait_child(&mut run, Duration::from_secs(5)).expect("flow exits after kill -9");
}

#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn a_multi_stage_workflow_runs_through_allocations_and_leaves_nothing_queued() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow(
            "[[tasks]]\nname = \"prep\"\ncommand = \"echo ready > prep.txt\"\noutputs = [\"prep.txt\"]\n\
             [[tasks]]\nname = \"work\"\nrange = \"1-4\"\ninputs = [\"prep.txt\"]\n\
             command = \"sleep 0.5; echo {{ index }} job=$SLURM_JOB_ID > w{{ index }}.txt\"\noutputs = [\"w{{ index }}.txt\"]\n\
             [[tasks]]\nname = \"merge\"\ncommand = \"cat w*.txt > all.txt\"\nafter = [\"work\"]\noutputs = [\"all.txt\"]\n",
        )
        .file("flow.profiles.toml", &profile("max_workers = 2\n"));
    let mut run = spawn_flow(t.path(), &["run", "--profile", "slurm"], "run.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(120)), 0, "{}", read(&t, "run.stderr"));
    let all = read(&t, "all.txt");
    assert_eq!(all.lines().count(), 4, "{all}");
    assert!(all.lines().all(|l| !l.ends_with("job=")), "tasks ran inside Slurm jobs: {all}");
    let stderr = read(&t, "run.stderr");
    let stderr = normalize(&t, &stderr);
    insta::assert_snapshot!(without_queue_lines(&stderr), @r"
        run [RUN]: 6 instances of 3 tasks
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 6 succeeded in [TIME]
    ");
    assert_eq!(
        allocation_lines(&stderr, 1),
        [
            "+ allocation 1 (job [JOB]) queued",
            "+ allocation 1 (job [JOB]) started",
            "- allocation 1 (job [JOB]) finished: the run ended"
        ],
        "{stderr}"
    );
    assert!(squeue(&t).is_empty(), "left in squeue: {:?}", squeue(&t));
    let allocs = allocs(&t);
    let list = allocs["allocations"].as_array().expect("allocations");
    assert!(matches!(list.len(), 1 | 2), "never more allocations than workers the work needs: {allocs:#}");
    assert!(list.iter().all(|a| a["state"] == "finished"), "{allocs:#}");
    // `flow alloc` shows them and their output.
    let listed = t.success_with(&["alloc", "list"]);
    // One row per allocation, however many the run needed.
    let rows: String =
        (1..=list.len()).map(|id| format!("  {id}  [JOB]  finished  0/1  [TIME]  [TIME]  the run ended\n")).collect();
    let noun = if list.len() == 1 { "allocation" } else { "allocations" };
    let header = format!("run [RUN]: profile `slurm`, Slurm queue, {} {noun}\n", list.len());
    let column = regex::Regex::new(r"(?m)^  (\d+)  \d+  ").expect("job column pattern");
    assert_eq!(
        column.replace_all(&normalize(&t, &listed), "  $1  [JOB]  "),
        format!("{header}  ID  JOB  STATE  WORKERS  WAITED  RAN  REASON\n{rows}")
    );
    let log = t.success_with(&["alloc", "log", "1"]);
    insta::assert_snapshot!(normalize(&t, &log), @"worker left: the run ended");
}

#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn a_cancelled_allocations_tasks_run_again_on_a_new_one() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow(
            "[[tasks]]\nname = \"long\"\nrange = \"1-2\"\n\
             command = \"sleep 4; echo attempt $FLOW_INSTANCE > out{{ index }}.txt\"\noutputs = [\"out{{ index }}.txt\"]\n",
        )
        .file("flow.profiles.toml", &profile("max_workers = 1\n"));
    let mut run = spawn_flow(t.path(), &["run", "--profile", "slurm"], "run.stderr");
    wait_running(&t, Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(1500));
    let jobs = squeue(&t);
    let (job, _) = jobs.first().expect("a job in squeue");
    assert!(Command::new("scancel").arg(job).status().expect("scancel").success());
    assert_eq!(finish(&t, &mut run, Duration::from_secs(120)), 0, "{}", read(&t, "run.stderr"));
    let stderr = read(&t, "run.stderr");
    insta::assert_snapshot!(sorted_lines(&normalize(&t, &stderr)), @r"
        + allocation 1 (job [JOB]) queued
        + allocation 1 (job [JOB]) started
        + allocation 2 (job [JOB]) queued
        + allocation 2 (job [JOB]) started
        + worker 0 joined: [HOST] ([ADDR]), 1 cpu, 0 gpus
        + worker 1 joined: [HOST] ([ADDR]), 1 cpu, 0 gpus
        - allocation 2 (job [JOB]) finished: the run ended
        - worker 0 ([HOST]) left: it was stopped by SIGTERM; 1 task runs again elsewhere
        - worker 1 ([HOST]) left: the run ended
        log:  flow log list
        report:  flow report
        results: out1.txt, out2.txt
        run [RUN]: 2 instances of 1 task
        run [RUN]: 2 succeeded in [TIME]
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        ✗ allocation 1 (job [JOB]) failed: its worker died [TIME] after starting: it was stopped by SIGTERM
    ");
    // The task that ran on the killed allocation ran again with its instance bumped.
    assert!(read(&t, "out1.txt").starts_with("attempt 1") || read(&t, "out2.txt").starts_with("attempt 1"));
    assert!(squeue(&t).is_empty(), "left in squeue: {:?}", squeue(&t));
}

#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn max_workers_and_backlog_are_respected() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"t\"\nrange = \"1-8\"\ncommand = \"sleep 1.5\"\n")
        // Four allocations could run side by side if flow asked for them; it may have 2, 1 queued.
        .file("flow.profiles.toml", &profile("max_workers = 2\nbacklog = 1\n"));
    let mut run = spawn_flow(t.path(), &["run", "--profile", "slurm"], "run.stderr");
    let (mut most, mut most_pending) = (0, 0);
    while wait_child(&mut run, Duration::from_millis(100)).is_none() {
        let jobs: Vec<_> = squeue(&t).into_iter().filter(|(_, s)| s == "PENDING" || s == "RUNNING").collect();
        most = most.max(jobs.len());
        most_pending = most_pending.max(jobs.iter().filter(|(_, s)| s == "PENDING").count());
    }
    assert_eq!(run.wait().expect("exit").code(), Some(0), "{}", read(&t, "run.stderr"));
    assert!(most <= 2, "at most 2 allocations at once, saw {most}");
    assert!(most_pending <= 1, "at most 1 queued allocation, saw {most_pending}");
    assert!(most >= 1);
    assert!(squeue(&t).is_empty(), "left in squeue: {:?}", squeue(&t));
}

#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn ctrl_c_cancels_every_allocation() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"t\"\nrange = \"1-3\"\ncommand = \"sleep 60\"\n")
        .file("flow.profiles.toml", &profile("max_workers = 3\nbacklog = 2\n"));
    let mut run = spawn_flow(t.path(), &["run", "--profile", "slurm"], "run.stderr");
    wait_running(&t, Duration::from_secs(60));
    assert!(!squeue(&t).is_empty());
    let status = t.success_with(&["status"]);
    // How many workers have joined and allocations started by now is Slurm's timing: `\d`.
    let shape = regex::Regex::new(
        r"^run \[RUN\]: running
  0/3 done: 0 succeeded, 0 unchanged, 0 failed, 0 cancelled; \d running, \d queued
  \d workers? connected:
(    \d \[HOST\] \(1 cpu, 0 gpus, job \[JOB\]\): \d running
)+  Slurm queue \(profile `slurm`\): \d allocations?, \d queued, \d running, 0 failed
  \[DIR\]/\.flow/runs/\[RUN\]
$",
    )
    .expect("status pattern");
    let status = normalize(&t, &status);
    assert!(shape.is_match(&status), "{status}");
    signal(run.id(), "-INT");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(40)), 130, "{}", read(&t, "run.stderr"));
    assert!(squeue(&t).is_empty(), "left in squeue after Ctrl-C: {:?}", squeue(&t));
    let allocs = allocs(&t);
    let states: Vec<&str> =
        allocs["allocations"].as_array().unwrap().iter().filter_map(|a| a["state"].as_str()).collect();
    assert!(states.iter().all(|s| *s == "finished" || *s == "cancelled"), "{states:?}");
}

#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn a_queue_whose_submissions_fail_pauses_quoting_slurm() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n")
        .file("flow.profiles.toml", &profile("submit_args = [\"--partition=nosuch\"]\n"));
    let out = t.run_with(&["run", "--profile", "slurm"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    // sbatch's own words depend on Slurm's version: flow quotes them, whatever they are.
    assert!(out.stderr.contains("Invalid partition name specified"), "quotes sbatch: {}", out.stderr);
    let sbatch = regex::Regex::new(r"sbatch: error: [^\n]*").expect("sbatch pattern");
    insta::assert_snapshot!(sbatch.replace_all(&normalize(&t, &out.stderr), "sbatch: error: [..]"), @r"
        run [RUN]: 1 instance of 1 task
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        ✗ allocation 1 failed: `sbatch` failed with exit code 1: sbatch: error: [..]
        ✗ allocation 2 failed: `sbatch` failed with exit code 1: sbatch: error: [..]
        ✗ allocation 3 failed: `sbatch` failed with exit code 1: sbatch: error: [..]
        ✗ the Slurm queue is paused after 3 failed allocations in a row; the last one: `sbatch` failed with exit code 1: sbatch: error: [..]
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 1 cancelled in [TIME]
    ");
}

#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn a_task_longer_than_the_queue_allows_is_reported_once_and_others_run() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow(
            "[[tasks]]\nname = \"long\"\ncommand = \"true\"\ntime_request = \"2h\"\n\
             [[tasks]]\nname = \"short\"\ncommand = \"echo ok > ok.txt\"\noutputs = [\"ok.txt\"]\n",
        )
        .file("flow.profiles.toml", &profile(""));
    let out = t.run_with(&["run", "--profile", "slurm"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let line = "the queue can never run `long`: its time_request (2h) is longer than the queue's time_limit (10m)";
    assert_eq!(out.stderr.matches(line).count(), 1, "{}", out.stderr);
    assert_eq!(read(&t, "ok.txt"), "ok\n");
    assert_eq!(allocs(&t)["allocations"].as_array().map(Vec::len), Some(1), "one allocation, for `short` only");
}

#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn tasks_of_an_allocation_that_reaches_its_time_limit_run_on_a_new_one() {
    let Some(_cluster) = slurm() else { return };
    // The first attempt outlives the 1-minute allocation; the second is quick.
    let t = Test::new()
        .workflow(
            "[[tasks]]\nname = \"t\"\n\
             command = \"if [ $FLOW_INSTANCE = 0 ]; then sleep 300; fi; echo attempt $FLOW_INSTANCE > out.txt\"\n\
             outputs = [\"out.txt\"]\n",
        )
        .file("flow.profiles.toml", &profile("max_workers = 1\n").replace("\"10m\"", "\"1m\""));
    let mut run = spawn_flow(t.path(), &["run", "--profile", "slurm"], "run.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(240)), 0, "{}", read(&t, "run.stderr"));
    assert_eq!(read(&t, "out.txt"), "attempt 1\n");
    let stderr = read(&t, "run.stderr");
    insta::assert_snapshot!(sorted_lines(&normalize(&t, &stderr)), @r"
        + allocation 1 (job [JOB]) queued
        + allocation 1 (job [JOB]) started
        + allocation 2 (job [JOB]) queued
        + allocation 2 (job [JOB]) started
        + worker 0 joined: [HOST] ([ADDR]), 1 cpu, 0 gpus
        + worker 1 joined: [HOST] ([ADDR]), 1 cpu, 0 gpus
        - allocation 1 (job [JOB]) finished: it reached its time limit
        - allocation 2 (job [JOB]) finished: the run ended
        - worker 0 ([HOST]) left: it reached its time limit; 1 task runs again elsewhere
        - worker 1 ([HOST]) left: the run ended
        log:  flow log list
        report:  flow report
        results: out.txt
        run [RUN]: 1 instance of 1 task
        run [RUN]: 1 succeeded in [TIME]
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
    ");
    assert!(squeue(&t).is_empty(), "left in squeue: {:?}", squeue(&t));
}

/// Issue 13: after a crash the next run scancelled the job ids it had stored
/// without checking them; after a Slurm restart (ids start again at 1) it
/// cancelled an unrelated job named `innocent`. Only jobs with the run's
/// name, of this user, are cancelled now, and stderr says what happened.
#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn the_next_run_cancels_only_jobs_that_are_still_its_own() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow("[vars]\nd = 60\n\n[[tasks]]\nname = \"t\"\ncommand = \"sleep {{ vars.d }}\"\n")
        .file("flow.profiles.toml", &profile(""));
    // Killed once the run has stored its job's id: Slurm lists the job as
    // soon as `sbatch` returns, a moment before the run writes allocs.json.
    let stored = || {
        let queued = squeue(&t);
        let allocs = fs_err::read_to_string(run_dir(&t).join("allocs.json")).unwrap_or_default();
        !queued.is_empty() && queued.iter().all(|(id, _)| allocs.contains(&format!("\"{id}\"")))
    };
    run_until_then_kill(&t, || run_dir_exists(&t) && stored());
    let old: Vec<String> = squeue(&t).into_iter().map(|(id, _)| id).collect();
    Command::new("scancel").args(&old).status().expect("scancel");
    assert!(wait_for(Duration::from_secs(30), || squeue(&t).is_empty()), "the old job ended");

    // "After a restart" the stored id belongs to someone else's job.
    let out = Command::new("sbatch")
        .args(["--parsable", "--job-name=innocent", "--partition=debug", "--wrap", "sleep 120"])
        .current_dir(t.path())
        .output()
        .expect("sbatch");
    let innocent = String::from_utf8_lossy(&out.stdout).trim().split(';').next().unwrap_or_default().to_owned();
    assert!(!innocent.is_empty(), "sbatch: {}", String::from_utf8_lossy(&out.stderr));
    let allocs = run_dir(&t).join("allocs.json");
    let text = fs_err::read_to_string(&allocs).unwrap();
    // Whether the killed run saw its allocation start depends on timing; a
    // running one is kept for its workers to rejoin, a queued one cancelled.
    let text =
        text.replace(&format!("\"{}\"", old[0]), &format!("\"{innocent}\"")).replace("\"running\"", "\"queued\"");
    fs_err::write(&allocs, text).unwrap();

    let out = t.run_with(&["run", "--profile", "slurm", "-v", "d=0"]);
    let listed = Command::new("squeue").args(["-h", "-o", "%i", "-j", &innocent]).output().expect("squeue");
    let alive = String::from_utf8_lossy(&listed.stdout).trim() == innocent;
    let _ = Command::new("scancel").arg(&innocent).status();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(alive, "the innocent job was cancelled:\n{}", out.stderr);
    // When the allocation is seen to start, and when its worker joins,
    // depend on Slurm's timing: those lines are compared as a set.
    // The job id is a short number that may also occur inside the run id:
    // only its place in the warning is replaced.
    let text = normalize(&t, &out.stderr.replace(&format!("jobs {innocent} is"), "jobs [INNOCENT] is"));
    let (mut events, rest): (Vec<&str>, Vec<&str>) =
        text.lines().partition(|line| line.starts_with("+ ") || line.starts_with("- "));
    events.sort_unstable();
    insta::assert_snapshot!(rest.join("\n"), @r"
        run [RUN]: 1 instance of 1 task
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        warning: run [RUN] was killed; none of its jobs [INNOCENT] is still queued as `flow-[RUN]` of yours, so none was cancelled
        log:  flow log list
        report:  flow report
        run [RUN]: 1 succeeded in [TIME]
    ");
    assert_eq!(
        events,
        [
            "+ allocation 1 (job [JOB]) queued",
            "+ allocation 1 (job [JOB]) started",
            "+ worker 0 joined: [HOST] ([ADDR]), 1 cpu, 0 gpus",
            "- allocation 1 (job [JOB]) finished: the run ended",
            "- worker 0 ([HOST]) left: the run ended",
        ]
    );
}

#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn a_dynamic_stage_runs_through_allocations_and_a_rerun_submits_nothing() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow(
            "[[tasks]]\nname = \"search\"\ncommand = \"printf 'a\\nb\\nc\\n' > hits.txt\"\noutputs = [\"hits.txt\"]\n\
             [[tasks]]\nname = \"refine\"\neach_line = \"hits.txt\"\n\
             command = \"echo {{ item }} job=$SLURM_JOB_ID > r{{ index }}.txt\"\noutputs = [\"r{{ index }}.txt\"]\n",
        )
        .file("flow.profiles.toml", &profile("max_workers = 2\n"));
    let mut run = spawn_flow(t.path(), &["run", "--profile", "slurm"], "run.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(120)), 0, "{}", read(&t, "run.stderr"));
    insta::assert_snapshot!(without_queue_lines(&normalize(&t, &read(&t, "run.stderr"))), @r"
        run [RUN]: 1 instance of 2 tasks, + the instances of `refine` (known at run time)
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        + refine: 3 instances from hits.txt
        results: r0.txt, r1.txt, r2.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 4 succeeded in [TIME]
    ");
    for i in 0..3 {
        let line = read(&t, &format!("r{i}.txt"));
        assert!(!line.trim_end().ends_with("job="), "refine[{i}] ran inside a Slurm job: {line}");
    }
    assert!(squeue(&t).is_empty(), "left in squeue: {:?}", squeue(&t));
    // Nothing changed: the rerun decides so on the coordinator and submits nothing.
    let again = t.run_with(&["run", "--profile", "slurm"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    insta::assert_snapshot!(normalize(&t, &again.stderr), @r"
        run [RUN]: 1 instance of 2 tasks, + the instances of `refine` (known at run time)
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        + refine: 3 instances from hits.txt
        results: r0.txt, r1.txt, r2.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 4 unchanged (skipped) in [TIME]
    ");
}

#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn a_per_instance_fan_out_runs_through_allocations() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow(
            "[[tasks]]\nname = \"search\"\nrange = \"1-3\"\n\
             command = \"mkdir -p hits && seq 1 {{ index }} > hits/{{ index }}.txt\"\noutputs = [\"hits/{{ index }}.txt\"]\n\
             [[tasks]]\nname = \"refine\"\nfor_each = \"search\"\neach_line = \"hits/{{ index }}.txt\"\n\
             command = \"echo job=$SLURM_JOB_ID > r{{ index }}.{{ subindex }}.txt\"\n\
             outputs = [\"r{{ index }}.{{ subindex }}.txt\"]\n",
        )
        .file("flow.profiles.toml", &profile("max_workers = 2\n"));
    let mut run = spawn_flow(t.path(), &["run", "--profile", "slurm"], "run.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(120)), 0, "{}", read(&t, "run.stderr"));
    for label in ["1.0", "2.1", "3.2"] {
        let line = read(&t, &format!("r{label}.txt"));
        assert!(!line.trim_end().ends_with("job="), "refine[{label}] ran inside a Slurm job: {line}");
    }
    assert!(squeue(&t).is_empty(), "left in squeue: {:?}", squeue(&t));
    let again = t.run_with(&["run", "--profile", "slurm"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    insta::assert_snapshot!(normalize(&t, &again.stderr), @r"
        run [RUN]: 3 instances of 2 tasks, + the instances of `refine` (known at run time)
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        results: r1.0.txt, r2.0.txt, r2.1.txt and 3 more
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 9 unchanged (skipped) in [TIME]
    ");
}

/// Workers that outlive their coordinator, when the allocation ends too:
/// the next run does not hold the task for a worker that cannot come back.
#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn a_killed_runs_task_is_not_held_once_its_allocation_ended() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"t\"\ncommand = \"echo x >> starts.txt; [ -e again ] || sleep 60\"\n")
        .file("flow.profiles.toml", &profile("max_workers = 1\n"));
    run_until_then_kill(&t, || !read(&t, "starts.txt").is_empty());
    let jobs = squeue(&t);
    let ids: Vec<&str> = jobs.iter().map(|(id, _)| id.as_str()).collect();
    assert!(Command::new("scancel").args(&ids).status().expect("scancel").success());
    let gone = wait_for(Duration::from_secs(30), || {
        let listed = Command::new("squeue").args(["-h", "-o", "%i"]).output().expect("squeue");
        let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
        ids.iter().all(|id| !listed.lines().any(|l| l.trim() == *id))
    });
    assert!(gone, "job {ids:?} is still listed");
    fs_err::write(t.path().join("again"), "").expect("again");
    let started = std::time::Instant::now();
    let mut again = spawn_flow(t.path(), &["run", "--profile", "slurm"], "run.stderr");
    assert_eq!(finish(&t, &mut again, Duration::from_secs(120)), 0, "{}", read(&t, "run.stderr"));
    let stderr = read(&t, "run.stderr");
    let said = format!("run again now: the cluster job(s) they ran in ({}) no longer run", ids.join(", "));
    assert!(stderr.contains(&said) && !stderr.contains("are held"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(55), "it waited out the window: {:?}", started.elapsed());
    assert_eq!(read(&t, "starts.txt").lines().count(), 2, "it ran again");
}

/// Workers that outlive their coordinator: the worker of a running
/// allocation keeps its task when `flow run` is killed, and the next run
/// (same command, same directory) takes it over; the allocation is kept.
#[test]
#[ignore = "needs a Slurm cluster: run .ci/slurm/start.sh as root and pass --include-ignored"]
fn a_killed_runs_allocation_rejoins_the_resumed_run_with_its_task() {
    let Some(_cluster) = slurm() else { return };
    let t = Test::new()
        .workflow(
            "[[tasks]]\nname = \"t\"\nrange = \"1-2\"\n\
             command = \"echo {{ index }} >> starts.txt; sleep 4; echo after {{ index }}\"\n",
        )
        .file("flow.profiles.toml", &profile("max_workers = 1\n"));
    run_until_then_kill(&t, || !read(&t, "starts.txt").is_empty());
    let (killed_run, jobs) = (run_dir(&t), squeue(&t));
    let mut again = spawn_flow(t.path(), &["run", "--profile", "slurm"], "run.stderr");
    assert_eq!(finish(&t, &mut again, Duration::from_secs(120)), 0, "{}", read(&t, "run.stderr"));
    let stderr = read(&t, "run.stderr");
    assert!(stderr.contains("rejoined with 1 task(s) of the killed run"), "{stderr}");
    let mut starts: Vec<String> = read(&t, "starts.txt").lines().map(str::to_owned).collect();
    starts.sort();
    assert_eq!(starts, ["1", "2"], "each task ran once");
    let out = t.success_with(&["log", "cat", "t"]);
    assert_eq!(out.matches("after").count(), 2, "{out}");
    // The killed run's allocation was not cancelled: its worker rejoined, and left when the run ended.
    let old = serde_json::from_str::<serde_json::Value>(
        &fs_err::read_to_string(killed_run.join("allocs.json")).expect("allocs.json"),
    )
    .expect("json");
    assert_ne!(old["allocations"][0]["state"], "cancelled", "{old}");
    let gone = wait_for(Duration::from_secs(30), || {
        let listed = Command::new("squeue").args(["-h", "-o", "%i"]).output().expect("squeue");
        let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
        jobs.iter().all(|(id, _)| !listed.lines().any(|l| l.trim() == id))
    });
    assert!(gone, "the killed run's job {jobs:?} is still queued");
}
