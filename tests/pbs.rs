//! The PBS queue, driven through a fake `qsub`/`qdel`/`qstat` on PATH
//! (`tests/fake-pbs/`; PBS cannot run here) that records what it is given
//! and runs each job script the way a PBS mom would.

use std::path::Path;

use crate::support::Test;
use std::time::Duration;

use crate::support::process::{entries, flow_bin, signal, wait_child, wait_for};

pub(crate) const PROFILES: &str = "[profile.pbs.queue]\nmanager = \"pbs\"\nqueue = \"workq\"\naccount = \"proj7\"\n\
                        time_limit = \"30m\"\nidle_timeout = \"5s\"\npoll_interval = \"1s\"\n\
                        worker = { cpus = 2, memory = \"1 GiB\" }\nsubmit_args = [\"-m\", \"n\"]\n";

/// A test whose PATH finds the fake PBS first.
pub(crate) fn pbs(workflow: &str, profiles: &str) -> Test {
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-pbs");
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap_or_default());
    let t = Test::new().workflow(workflow).file("flow.profiles.toml", profiles);
    let server = t.path().join("pbs");
    t.env("PATH", &path).env("FAKE_PBS_DIR", server.to_str().expect("utf-8 path"))
}

/// What the fake server recorded in `name`, with this test's paths made neutral.
pub(crate) fn recorded(t: &Test, name: &str) -> String {
    let text = fs_err::read_to_string(t.path().join("pbs").join(name)).unwrap_or_default();
    neutral(t, &text)
}

fn read_server(t: &Test, name: &str) -> String {
    fs_err::read_to_string(t.path().join("pbs").join(name)).expect("fake server file")
}

fn neutral(t: &Test, text: &str) -> String {
    let run = entries(&t.path().join(".flow/runs")).into_iter().next_back().unwrap_or_default();
    let dir = t.path().canonicalize().expect("dir");
    let mut text =
        text.replace(&flow_bin().display().to_string(), "[FLOW]").replace(&dir.display().to_string(), "[DIR]");
    if !run.is_empty() {
        text = text.replace(&run, "[RUN]").replace(&format!("flow-{}", &run[..10.min(run.len())]), "flow-[RUN]");
    }
    text
}

#[test]
fn a_workflow_runs_through_pbs_allocations() {
    let t = pbs(
        "[[tasks]]\nname = \"gen\"\nrange = \"1-3\"\ncommand = \"echo $FLOW_INDEX on $PBS_JOBID > g{{ index }}.txt\"\n\
         outputs = [\"g{{ index }}.txt\"]\n\
         [[tasks]]\nname = \"sum\"\ncommand = \"cat g*.txt > all.txt\"\nafter = [\"gen\"]\noutputs = [\"all.txt\"]\n",
        PROFILES,
    );
    let out = t.run_with(&["run", "--profile", "pbs"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let all = fs_err::read_to_string(t.path().join("all.txt")).expect("all.txt");
    assert!(all.lines().all(|l| l.ends_with(".fakepbs")), "tasks ran inside the PBS job: {all}");
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 4 instances of 2 tasks
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        + allocation 1 (job 1.fakepbs) queued
        + worker 0 joined: [HOST] ([ADDR]), 2 cpus, 0 gpus
        + allocation 1 (job 1.fakepbs) started
        - allocation 1 (job 1.fakepbs) finished: the run ended
        - worker 0 ([HOST]) left: the run ended
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 4 succeeded in [TIME]
    ");
    // What qsub was given: the extra arguments, then the script, which is what real PBS would read.
    assert_eq!(recorded(&t, "qsub.log").lines().next(), Some("-m n [DIR]/.flow/runs/[RUN]/allocs/1.sh"));
    insta::assert_snapshot!("pbs_job_script", recorded(&t, "1.sh"));
    // No job is left: each ended with its worker when the run was over, or was deleted.
    let submitted: u32 = read_server(&t, "next").trim().parse().expect("count");
    for n in 1..=submitted {
        let pid = read_server(&t, &format!("{n}.pid"));
        assert!(!Path::new("/proc").join(pid.trim()).exists(), "job {n} still runs");
    }
    let listed = t.success_with(&["alloc", "list"]);
    insta::assert_snapshot!(t.normalize(&listed), @r"
        run [RUN]: profile `pbs`, PBS queue, 1 allocation
          ID  JOB  STATE  WORKERS  WAITED  RAN  REASON
          1  1.fakepbs  finished  0/1  [TIME]  [TIME]  the run ended
    ");
    // The job's output went into the run log too: it outlives the job's own file.
    let from_file = t.success_with(&["alloc", "log", "1"]);
    insta::assert_snapshot!(t.normalize(&from_file), @"worker left: the run ended");
    let run = entries(&t.path().join(".flow/runs")).into_iter().next_back().expect("a run");
    fs_err::remove_file(t.path().join(".flow/runs").join(run).join("allocs/1.out")).expect("remove");
    assert_eq!(t.success_with(&["alloc", "log", "1.fakepbs"]), from_file);
    // It is not a task's output.
    assert_eq!(t.success_with(&["log", "cat"]), "");
}

#[test]
fn a_refused_submission_pauses_the_queue_quoting_qsub() {
    let t = pbs("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n", PROFILES)
        .env("FAKE_PBS_FAIL", "Unknown queue MSG=requested queue not found");
    let out = t.run_with(&["run", "--profile", "pbs"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 1 instance of 1 task
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        ✗ allocation 1 failed: `qsub` failed with exit code 1: qsub: Unknown queue MSG=requested queue not found
        ✗ allocation 2 failed: `qsub` failed with exit code 1: qsub: Unknown queue MSG=requested queue not found
        ✗ allocation 3 failed: `qsub` failed with exit code 1: qsub: Unknown queue MSG=requested queue not found
        ✗ the PBS queue is paused after 3 failed allocations in a row; the last one: `qsub` failed with exit code 1: qsub: Unknown queue MSG=requested queue not found
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 1 cancelled in [TIME]
    ");
    assert_eq!(recorded(&t, "qsub.log").lines().count(), 3, "no submissions after the pause");
    let listed = t.success_with(&["alloc", "list"]);
    insta::assert_snapshot!(t.normalize(&listed), @r"
        run [RUN]: profile `pbs`, PBS queue, 3 allocations; the PBS queue is paused after 3 failed allocations in a row; the last one: `qsub` failed with exit code 1: qsub: Unknown queue MSG=requested queue not found
          ID  JOB  STATE  WORKERS  WAITED  RAN  REASON
          1  -  failed  0/1  [TIME]  -  `qsub` failed with exit code 1: qsub: Unknown queue MSG=requested queue not found
          2  -  failed  0/1  [TIME]  -  `qsub` failed with exit code 1: qsub: Unknown queue MSG=requested queue not found
          3  -  failed  0/1  [TIME]  -  `qsub` failed with exit code 1: qsub: Unknown queue MSG=requested queue not found
    ");
    let json: serde_json::Value =
        serde_json::from_str(&t.success_with(&["alloc", "list", "--json"])).expect("one JSON document");
    assert_eq!((&json["version"], &json["queue"]["profile"]), (&2.into(), &"pbs".into()), "{json}");
    insta::assert_snapshot!(json["queue"]["paused"].as_str().unwrap_or("<not a string>"), @"the PBS queue is paused after 3 failed allocations in a row; the last one: `qsub` failed with exit code 1: qsub: Unknown queue MSG=requested queue not found");
    assert!(json["queue"]["time_limit_us"].as_u64().is_some_and(|us| us % 1_000_000 == 0), "{json}");
    let states: Vec<&str> = json["allocations"]
        .as_array()
        .expect("allocations")
        .iter()
        .map(|a| a["state"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(states, ["failed"; 3], "{json}");
}

#[test]
fn a_job_that_ends_before_its_worker_connects_is_noticed_by_polling() {
    // The job's setup line fails, so no worker ever connects: only qstat can tell.
    let profiles = PROFILES.replace("submit_args", "setup = [\"echo no such module >&2; exit 3\"]\nsubmit_args");
    let t = pbs("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n", &profiles);
    let out = t.run_with(&["run", "--profile", "pbs"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 1 instance of 1 task
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        + allocation 1 (job 1.fakepbs) queued
        ✗ allocation 1 (job 1.fakepbs) failed: it ended before any worker connected; its output ends with: no such module
        + allocation 2 (job 2.fakepbs) queued
        ✗ allocation 2 (job 2.fakepbs) failed: it ended before any worker connected; its output ends with: no such module
        + allocation 3 (job 3.fakepbs) queued
        ✗ allocation 3 (job 3.fakepbs) failed: it ended before any worker connected; its output ends with: no such module
        ✗ the PBS queue is paused after 3 failed allocations in a row; the last one: it ended before any worker connected; its output ends with: no such module
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 1 cancelled in [TIME]
    ");
    assert!(!recorded(&t, "qstat.log").is_empty(), "qstat was asked");
}

#[test]
fn dry_run_prints_the_script_and_submits_nothing() {
    let t = pbs(
        "[[tasks]]\nname = \"t\"\ncommand = \"true\"\n[[tasks]]\nname = \"huge\"\ncommand = \"true\"\ncpus = 64\n",
        &format!(
            "{PROFILES}\n[profile.slurm.queue]\nmanager = \"slurm\"\npartition = \"debug\"\ntime_limit = \"2h\"\nflow = \"/opt/flow/bin/flow\"\n"
        ),
    );
    let pbs_script = t.success_with(&["alloc", "--dry-run", "--profile", "pbs"]);
    insta::assert_snapshot!("dry_run_pbs", neutral(&t, &pbs_script));
    let slurm_script = t.success_with(&["alloc", "--dry-run", "--profile", "slurm"]);
    insta::assert_snapshot!("dry_run_slurm", neutral(&t, &slurm_script));
    assert!(!t.path().join("pbs").exists(), "nothing was submitted");
    assert!(!t.path().join(".flow").exists(), "no run was made");
}

#[test]
fn profile_mistakes_are_reported_with_their_place() {
    let t = Test::new().workflow("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n").file(
        "flow.profiles.toml",
        "[profile.hpc.queue]\nmanager = \"slurm\"\ntime_limit = \"forever\"\nmax_wrkers = 2\n",
    );
    let out = t.run_with(&["run", "--profile", "hpc"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    // Every problem at once: the unknown key and the bad duration.
    insta::assert_snapshot!(t.normalize(&out.stderr), @r#"
        flow::profile::value

          × `time_limit`: `forever` is not a duration
           ╭─[flow.profiles.toml:3:14]
         2 │ manager = "slurm"
         3 │ time_limit = "forever"
           ·  ────┬────
           ·  ╰── not a duration
         4 │ max_wrkers = 2
           ╰────
          help: write a duration such as "30m" or "2h"
        flow::spec::unknown_key

          × unknown key `max_wrkers` in a queue
           ╭─[flow.profiles.toml:4:1]
         3 │ time_limit = "forever"
         4 │ max_wrkers = 2
           · ─────┬────
           ·  ╰── unknown key
           ╰────
          help: did you mean `max_workers`?
        error: 2 problems in flow.profiles.toml
    "#);
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n")
        .file("flow.profiles.toml", "[profile.hpc]\nlisten = \"0.0.0.0:0\"\n");
    let out = t.run_with(&["run", "--profile", "hcp"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        flow::profile::unknown

          × there is no profile `hcp`
          help: the profiles are: hpc
        error: 1 problem in flow.profiles.toml
    ");
    let bare = Test::new().workflow("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n").env("HOME", "/nonexistent");
    let out = bare.run_with(&["run", "--profile", "hpc"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!(bare.normalize(&out.stderr), @"error: `--profile hpc`: no profiles file; write `flow.profiles.toml` next to the workflow (or `~/.config/flow/profiles.toml`) with a `[profile.hpc]` table");
}

/// Starts `flow run --profile pbs` in the background with the fake server
/// holding jobs in its queue (`FAKE_PBS_HOLD`), and waits until job 1 is queued.
fn run_with_a_held_job(t: &Test) -> std::process::Child {
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-pbs");
    let run = std::process::Command::new(flow_bin())
        .args(["run", "--profile", "pbs"])
        .current_dir(t.path())
        .env("PATH", format!("{}:{}", fake.display(), std::env::var("PATH").unwrap_or_default()))
        .env("FAKE_PBS_DIR", t.path().join("pbs"))
        .env("FAKE_PBS_HOLD", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start flow");
    let queued = wait_for(Duration::from_secs(30), || {
        let runs = t.path().join(".flow/runs");
        // The file is rewritten as the run goes: a torn read is no answer yet.
        entries(&runs).into_iter().any(|r| {
            fs_err::read_to_string(runs.join(r).join("allocs.json"))
                .ok()
                .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
                .and_then(|v| v["allocations"].as_array().map(|a| a.iter().any(|a| a["job_id"] == "1.fakepbs")))
                .unwrap_or(false)
        })
    });
    assert!(queued, "no job was queued");
    run
}

#[test]
fn an_interrupted_run_deletes_its_queued_jobs_with_qdel() {
    let t = pbs("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n", PROFILES);
    let mut run = run_with_a_held_job(&t);
    // It stays queued: polling (every second here) sees it alive and does not submit again.
    std::thread::sleep(Duration::from_millis(2500));
    let why = t.success_with(&["explain", "t"]);
    insta::assert_snapshot!(t.normalize(&why), @"t: waiting for a worker: none is connected; 1 allocation is queued in PBS: job 1.fakepbs for [TIME]");
    signal(run.id(), "-INT");
    let status = wait_child(&mut run, Duration::from_secs(30)).expect("the run ends");
    assert_eq!(status.code(), Some(130));
    assert_eq!(read_server(&t, "qsub.log").lines().count(), 1, "backlog 1: one queued job is enough");
    assert!(!read_server(&t, "qstat.log").is_empty(), "the queued job was polled");
    assert_eq!(read_server(&t, "qdel.log").trim(), "1.fakepbs", "qdel was given the queued job");
    let pid = read_server(&t, "1.pid");
    assert!(wait_for(Duration::from_secs(5), || !Path::new("/proc").join(pid.trim()).exists()), "the job is gone");
}

#[test]
fn a_task_no_worker_of_the_queue_can_fit_is_cancelled_once_one_has_joined() {
    // Whole-node workers: the queue cannot know their size until one joins.
    let profiles = "[profile.pbs.queue]\nmanager = \"pbs\"\ntime_limit = \"30m\"\nidle_timeout = \"5s\"\n";
    let t = pbs(
        "[[tasks]]\nname = \"small\"\ncommand = \"sleep 1; echo ok > ok.txt\"\noutputs = [\"ok.txt\"]\n\
         [[tasks]]\nname = \"huge\"\ncommand = \"true\"\ncpus = 512\n\
         [[tasks]]\nname = \"then\"\ncommand = \"true\"\nafter = [\"huge\"]\n",
        profiles,
    );
    let out = t.run_with(&["run", "--profile", "pbs"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    // Issue 13: a dependent said "huge failed" although `huge` was cancelled.
    let reasons = t.success_with(&["log", "list", "--json"]);
    let reasons: Vec<(String, String)> = reasons
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .map(|v| (v["task"].as_str().unwrap_or("?").to_owned(), v["reason"].as_str().unwrap_or("-").to_owned()))
        .collect();
    insta::assert_snapshot!(format!("{reasons:#?}"), @r#"
        [
            (
                "small",
                "-",
            ),
            (
                "huge",
                "the queue's workers cannot run it: needs 512 cpus, the largest worker has 2",
            ),
            (
                "then",
                "huge was cancelled: no worker can run it",
            ),
        ]
    "#);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 3 instances of 3 tasks
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        + allocation 1 (job 1.fakepbs) queued
        + worker 0 joined: [HOST] ([ADDR]), 2 cpus, 0 gpus
        + allocation 1 (job 1.fakepbs) started
        ! the queue can never run `huge`: the queue's workers cannot run it: needs 512 cpus, the largest worker has 2
        - allocation 1 (job 1.fakepbs) finished: the run ended
        - worker 0 ([HOST]) left: the run ended
        results: ok.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 1 succeeded, 2 cancelled in [TIME]
    ");
    assert_eq!(fs_err::read_to_string(t.path().join("ok.txt")).unwrap(), "ok\n");
    assert_eq!(read_server(&t, "qsub.log").lines().count(), 1, "no allocation is wasted on `huge`");
}

#[test]
fn work_running_on_the_embedded_worker_asks_nothing_of_the_queue() {
    let profiles = format!("{PROFILES}[profile.pbs]\nlocal_worker = true\n");
    let t = pbs("[[tasks]]\nname = \"t\"\nrange = \"1-2\"\ncommand = \"sleep 3\"\n", &profiles);
    let out = t.run_with(&["run", "--profile", "pbs", "--cpus", "2"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 2 instances of 1 task
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        log:  flow log list
        report:  flow report
        run [RUN]: 2 succeeded in [TIME]
    ");
    assert_eq!(recorded(&t, "qsub.log"), "", "both tasks ran on the embedded worker from the start");
}

#[test]
fn a_profile_missing_next_to_the_workflow_is_taken_from_the_users_config() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n")
        .file("flow.profiles.toml", "[profile.laptop]\nlisten = \"127.0.0.1:0\"\n")
        .file("config/flow/profiles.toml", "[profile.hpc.queue]\nmanager = \"slurm\"\ntime_limit = \"1h\"\n");
    let config = t.path().join("config");
    let t = t.env("XDG_CONFIG_HOME", config.to_str().expect("utf-8 path"));
    let script = t.success_with(&["alloc", "--dry-run", "--profile", "hpc"]);
    insta::assert_snapshot!(t.normalize(&script), @r"
        # submitted with: sbatch --parsable [DIR]/.flow/runs/RUN_ID/allocs/N.sh
        #!/bin/bash
        #SBATCH --job-name=flow-RUN_ID
        #SBATCH --output=[DIR]/.flow/runs/RUN_ID/allocs/N.out
        #SBATCH --time=01:00:00
        #SBATCH --nodes=1
        #SBATCH --ntasks-per-node=1
        #SBATCH --exclusive

        exec [FLOW] worker --access [DIR]/.flow/runs/RUN_ID/access.json --time-limit [TIME] --idle-timeout [TIME]
    ");
    let out = t.run_with(&["alloc", "--dry-run", "--profile", "nope"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        flow::profile::unknown

          × there is no profile `nope`
          help: the profiles are: laptop
        error: 1 problem in flow.profiles.toml
    ");
}

#[test]
fn the_next_run_deletes_the_jobs_a_killed_run_left_queued() {
    let t = pbs("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n", PROFILES);
    let mut run = run_with_a_held_job(&t);
    signal(run.id(), "-KILL");
    let _ = run.wait();
    // The next run cancels what the dead one left in the queue, then runs.
    let out = t.run_with(&["run", "--profile", "pbs"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(read_server(&t, "qdel.log").lines().any(|l| l == "1.fakepbs"), "the old job was deleted");
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 1 instance of 1 task
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        warning: run [RUN] was killed; cancelled its jobs 1.fakepbs
        + allocation 1 (job 2.fakepbs) queued
        + worker 0 joined: [HOST] ([ADDR]), 2 cpus, 0 gpus
        + allocation 1 (job 2.fakepbs) started
        - allocation 1 (job 2.fakepbs) finished: the run ended
        - worker 0 ([HOST]) left: the run ended
        log:  flow log list
        report:  flow report
        run [RUN]: 1 succeeded in [TIME]
    ");
    let pid = read_server(&t, "1.pid");
    assert!(wait_for(Duration::from_secs(5), || !Path::new("/proc").join(pid.trim()).exists()), "the old job is gone");
}

/// Issue 13: after a crash the next run cancelled the job ids it had stored
/// without checking them; after the manager restarts, ids start again and
/// belong to other jobs. Only a job with the run's name, of this user, is
/// cancelled, and stderr says what was.
#[test]
fn the_next_run_cancels_only_jobs_that_are_still_its_own() {
    let t = pbs("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n", PROFILES);
    let mut run = run_with_a_held_job(&t);
    signal(run.id(), "-KILL");
    let _ = run.wait();
    // The server "restarted": job 1 is now someone else's job, `innocent`.
    let server = t.path().join("pbs");
    let script = fs_err::read_to_string(server.join("1.sh")).unwrap();
    let renamed: String = script
        .lines()
        .map(|l| if l.starts_with("#PBS -N ") { "#PBS -N innocent" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    fs_err::write(server.join("1.sh"), renamed + "\n").unwrap();
    let out = t.run_with(&["run", "--profile", "pbs"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let deleted = fs_err::read_to_string(server.join("qdel.log")).unwrap_or_default();
    assert!(!deleted.lines().any(|l| l == "1.fakepbs"), "the innocent job was deleted");
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 1 instance of 1 task
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        warning: run [RUN] was killed; none of its jobs 1.fakepbs is still queued as `flow-[RUN]` of yours, so none was cancelled
        + allocation 1 (job 2.fakepbs) queued
        + worker 0 joined: [HOST] ([ADDR]), 2 cpus, 0 gpus
        + allocation 1 (job 2.fakepbs) started
        - allocation 1 (job 2.fakepbs) finished: the run ended
        - worker 0 ([HOST]) left: the run ended
        log:  flow log list
        report:  flow report
        run [RUN]: 1 succeeded in [TIME]
    ");
    let pid = read_server(&t, "1.pid");
    assert!(Path::new("/proc").join(pid.trim()).exists(), "the innocent job still runs");
    signal(pid.trim().parse().unwrap(), "-KILL");
}

/// Issue 13: a time_request equal to the queue's time_limit was never run
/// and never reported — workers get a little less — and flow submitted
/// allocation after allocation. It is reported once, at the task.
/// Issue 18: so is a time_request of exactly what a worker gets (29m of
/// the 30m), which `flow check --profile` passed.
#[test]
fn a_time_request_the_workers_cannot_meet_is_reported_once() {
    // Both report alike, the request shown as `[REQUEST]`: one snapshot.
    insta::allow_duplicates! {
        for time in ["30m", "29m"] {
            a_time_request_is_reported_once(time);
        }
    }
    let t = pbs("[[tasks]]\nname = \"fits\"\ncommand = \"true\"\ntime_request = \"28m59s\"\n", PROFILES);
    t.success_with(&["check", "--profile", "pbs"]);
}

fn a_time_request_is_reported_once(time: &str) {
    let t = pbs(
        &format!(
            "[[tasks]]\nname = \"quick\"\ncommand = \"true\"\n\
             [[tasks]]\nname = \"exact\"\ncommand = \"true\"\ntime_request = \"{time}\"\n"
        ),
        PROFILES,
    );
    let check = t.run_with(&["check", "--profile", "pbs"]);
    assert_eq!(check.code, 2, "{}", check.stderr);
    // The help names the limit exceeded, not every limit a queue has.
    insta::assert_snapshot!(t.normalize(&check.stderr).replace(&format!("({time})"), "([REQUEST])"), @r#"
        flow::check::queue

          × the queue of profile `pbs` can never run `exact`: its time_request ([REQUEST]) does not fit in the
          │ 29m a worker of the queue gets (its time_limit of 30m less a margin for starting and stopping;
          │ a task must end before its worker)
           ╭─[workflow.toml:5:8]
         4 │ [[tasks]]
         5 │ name = "exact"
           ·  ───┬───
           ·  ╰── this task
         6 │ command = "true"
           ╰────
          help: lower the task's `time_request`, or raise the queue's `time_limit` in the profile
        error: 1 problem in workflow.toml
    "#);
    let out = t.run_with(&["run", "--profile", "pbs"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stderr.matches("the queue can never run `exact`").count(), 1, "{}", out.stderr);
    assert_eq!(read_server(&t, "qsub.log").lines().count(), 1, "one allocation, for `quick` only");
}
