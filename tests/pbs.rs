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
    assert!(out.stderr.contains("+ allocation 1 (job 1.fakepbs) started"), "{}", out.stderr);
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
    assert!(listed.contains("PBS queue") && listed.contains("1.fakepbs"), "{listed}");
    // The job's output went into the run log too: it outlives the job's own file.
    let from_file = t.success_with(&["alloc", "log", "1"]);
    assert!(from_file.contains("worker left"), "{from_file}");
    let run = entries(&t.path().join(".flow/runs")).into_iter().next_back().expect("a run");
    fs_err::remove_file(t.path().join(".flow/runs").join(run).join("allocs/1.out")).expect("remove");
    assert_eq!(t.success_with(&["alloc", "log", "1.fakepbs"]), from_file);
    // It is not a task's output.
    assert!(!t.success_with(&["log", "cat"]).contains("worker left"));
}

#[test]
fn a_refused_submission_pauses_the_queue_quoting_qsub() {
    let t = pbs("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n", PROFILES)
        .env("FAKE_PBS_FAIL", "Unknown queue MSG=requested queue not found");
    let out = t.run_with(&["run", "--profile", "pbs"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("the PBS queue is paused after 3 failed allocations"), "{}", out.stderr);
    assert!(out.stderr.contains("qsub: Unknown queue MSG=requested queue not found"), "{}", out.stderr);
    assert_eq!(recorded(&t, "qsub.log").lines().count(), 3, "no submissions after the pause");
    let listed = t.success_with(&["alloc", "list"]);
    assert!(listed.contains("paused"), "{listed}");
    let json: serde_json::Value =
        serde_json::from_str(&t.success_with(&["alloc", "list", "--json"])).expect("one JSON document");
    assert_eq!((&json["version"], &json["queue"]["profile"]), (&1.into(), &"pbs".into()), "{json}");
    assert!(json["queue"]["paused"].as_str().is_some_and(|p| p.contains("paused")), "{json}");
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
    assert!(
        out.stderr.contains("it ended before any worker connected; its output ends with: no such module"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("paused"), "{}", out.stderr);
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
    assert!(out.stderr.contains("flow.profiles.toml"), "{}", out.stderr);
    // Every problem at once: the unknown key and the bad duration.
    assert!(out.stderr.contains("unknown key `max_wrkers` in a queue"), "{}", out.stderr);
    assert!(out.stderr.contains("did you mean `max_workers`?"), "{}", out.stderr);
    assert!(out.stderr.contains("`time_limit`"), "{}", out.stderr);
    assert!(out.stderr.contains("2 problems in flow.profiles.toml"), "{}", out.stderr);
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n")
        .file("flow.profiles.toml", "[profile.hpc]\nlisten = \"0.0.0.0:0\"\n");
    let out = t.run_with(&["run", "--profile", "hcp"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("there is no profile `hcp`") && out.stderr.contains("the profiles are: hpc"),
        "{}",
        out.stderr
    );
    let bare = Test::new().workflow("[[tasks]]\nname = \"t\"\ncommand = \"true\"\n").env("HOME", "/nonexistent");
    let out = bare.run_with(&["run", "--profile", "hpc"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no profiles file"), "{}", out.stderr);
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
        entries(&runs)
            .into_iter()
            .any(|r| fs_err::read_to_string(runs.join(r).join("allocs.json")).is_ok_and(|s| s.contains("1.fakepbs")))
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
    assert!(why.contains("1 allocation is queued in PBS: job 1.fakepbs"), "{why}");
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
    let then = reasons.lines().find(|l| l.contains("\"then\"")).expect("then is listed");
    assert!(then.contains("huge was cancelled: no worker can run it"), "{then}");
    assert!(
        out.stderr.contains("the queue can never run `huge`: the queue's workers cannot run it: needs 512 cpus"),
        "{}",
        out.stderr
    );
    assert_eq!(fs_err::read_to_string(t.path().join("ok.txt")).unwrap(), "ok\n");
    assert_eq!(read_server(&t, "qsub.log").lines().count(), 1, "no allocation is wasted on `huge`");
}

#[test]
fn work_running_on_the_embedded_worker_asks_nothing_of_the_queue() {
    let profiles = format!("{PROFILES}[profile.pbs]\nlocal_worker = true\n");
    let t = pbs("[[tasks]]\nname = \"t\"\nrange = \"1-2\"\ncommand = \"sleep 3\"\n", &profiles);
    let out = t.run_with(&["run", "--profile", "pbs", "--cpus", "2"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("2 succeeded"), "{}", out.stderr);
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
    assert!(script.contains("#SBATCH --time=01:00:00"), "{script}");
    let out = t.run_with(&["alloc", "--dry-run", "--profile", "nope"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("there is no profile `nope`") && out.stderr.contains("laptop"), "{}", out.stderr);
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
    assert!(out.stderr.contains("cancelled its jobs 1.fakepbs"), "{}", out.stderr);
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
    assert!(out.stderr.contains("none of its jobs 1.fakepbs is still queued as"), "{}", out.stderr);
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
    for time in ["30m", "29m"] {
        a_time_request_is_reported_once(time);
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
    assert!(
        check.stderr.contains(&format!("can never run `exact`: its time_request ({time}) does not fit in the")),
        "{}",
        check.stderr
    );
    assert!(check.stderr.contains("a worker of the queue gets"), "{}", check.stderr);
    // The help names the limit exceeded, not every limit a queue has.
    assert!(
        check
            .stderr
            .contains("help: lower the task's `time_request`, or raise the queue's `time_limit` in the profile"),
        "{}",
        check.stderr
    );
    let out = t.run_with(&["run", "--profile", "pbs"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stderr.matches("the queue can never run `exact`").count(), 1, "{}", out.stderr);
    assert_eq!(read_server(&t, "qsub.log").lines().count(), 1, "one allocation, for `quick` only");
}
