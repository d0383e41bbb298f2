//! `flow log` on run directories built with the engine's writers: list,
//! cat, tail (also following a live run), summary, grep, export, selectors
//! and torn tails.

use std::path::Path;
use std::time::Duration;

use flow_engine::ir::{GroupId, TaskId};
use flow_engine::log::{JournalEvent, JournalRecord, JournalWriter, OutputLog, OutputRecord, OutputStream, Wrote};
use flow_engine::runtime::{RunDir, STATE_DIR};

use crate::support::Test;

const WORKFLOW: &str = r#"
name = "demo"

[[tasks]]
name = "prep"
command = "echo preparing"

[[tasks]]
name = "score"
range = "10-30:10"
command = "echo {{ index }}"
after = ["prep"]

[[tasks]]
name = "report"
command = "echo done"
after = ["score"]
"#;

/// 2023-11-14T22:13:20Z, in µs.
const T0: u64 = 1_700_000_000_000_000;
const SECOND: u64 = 1_000_000;

const PREP: TaskId = TaskId { group: GroupId(0), instance: 0 };
const REPORT: TaskId = TaskId { group: GroupId(2), instance: 0 };

/// `score[index]`: positions 0, 1, 2 are indices 10, 20, 30.
fn score(index: u64) -> TaskId {
    TaskId::new(GroupId(1), index / 10 - 1)
}

/// A workflow directory with one run: its graph, journal and output log.
struct Fixture {
    dir: tempfile::TempDir,
    run: RunDir,
    /// Held while the run is "in progress", as `flow run` holds it.
    lock: std::sync::Mutex<Option<flow_engine::runtime::RunLock>>,
}

impl Fixture {
    /// A run that ended: prep and score[10] succeeded, score[20] failed,
    /// score[30] was cached, report was cancelled.
    fn finished() -> Self {
        let fixture = Self::started();
        fixture.append(&[
            out(score(20), OutputStream::Stdout, 24, "done\n"),
            out(score(10), OutputStream::Stdout, 25, "ten again\n"),
            out(score(20), OutputStream::System, 50, "exit code 3\n"),
        ]);
        fixture.finish();
        fixture
    }

    /// A run in progress: the journal and the first records.
    fn started() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        fs_err::write(dir.path().join("workflow.toml"), WORKFLOW).expect("write workflow");
        let ir = Test::new().current_dir(dir.path()).args(["plan", "--json", "workflow.toml"]).success();
        let run = RunDir::create(&dir.path().join(STATE_DIR), false).expect("run dir");
        fs_err::write(run.graph(), ir).expect("write graph");

        let failed = JournalEvent::Failed { exit_code: Some(3), signal: None, reason: "exit code 3".into() };
        let journal = [
            event(PREP, 0, JournalEvent::Started { worker: 0, ready_us: None }),
            event(PREP, 15, JournalEvent::Succeeded { fingerprint: [1; 32], wrote: Wrote::default() }),
            event(score(10), 20, JournalEvent::Started { worker: 0, ready_us: None }),
            event(score(20), 20, JournalEvent::Started { worker: 1, ready_us: None }),
            event(score(30), 20, JournalEvent::Cached { fingerprint: [3; 32], wrote: Wrote::default() }),
            event(score(10), 40, JournalEvent::Succeeded { fingerprint: [2; 32], wrote: Wrote::default() }),
            event(score(20), 50, failed),
            event(REPORT, 51, JournalEvent::Cancelled { reason: "`score[20]` failed".into() }),
        ];
        JournalWriter::create(&run.journal()).expect("journal").append_batch(&journal).expect("write journal");
        let lock = std::sync::Mutex::new(Some(run.lock().expect("lock the run")));
        let fixture = Self { dir, run, lock };
        fixture.append(&[
            out(PREP, OutputStream::Stdout, 1, "preparing\n"),
            out(score(20), OutputStream::Stdout, 21, "twenty "),
            out(score(10), OutputStream::Stdout, 22, "ten: Hello\n"),
            out(score(20), OutputStream::Stderr, 23, "boom: HELLO\n"),
        ]);
        fixture
    }

    /// Appends records to the output log through the writer thread.
    fn append(&self, records: &[OutputRecord]) {
        let (tx, handle) = OutputLog::create(&self.run.output_log()).expect("output log");
        records.iter().for_each(|r| tx.blocking_send(r.clone()).expect("send"));
        handle.finish().expect("write output log");
    }

    fn finish(&self) {
        // As the journal says: one failed, one cancelled.
        let summary =
            flow_engine::rundir::Summary { run_id: self.run.id.clone(), failed: 1, cancelled: 1, ..Default::default() };
        fs_err::write(self.run.summary(), serde_json::to_string(&summary).expect("summary")).expect("write summary");
        self.lock.lock().expect("lock mutex").take();
    }

    /// `flow log ARGS` in the workflow directory.
    fn log(&self, args: &[&str]) -> Test {
        Test::new().current_dir(self.dir.path()).args(["log"].iter().chain(args))
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

fn event(task: TaskId, tenths: u64, event: JournalEvent) -> JournalRecord {
    JournalRecord::new(T0 + tenths * SECOND / 10, task, 0, event)
}

fn out(task: TaskId, stream: OutputStream, tenths: u64, data: &str) -> OutputRecord {
    OutputRecord { task, attempt: 0, stream, time_us: T0 + tenths * SECOND / 10, data: data.as_bytes().to_vec() }
}

/// Collapses runs of spaces, so table columns compare simply.
fn words(text: &str) -> String {
    text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n")
}

#[test]
fn list_shows_every_instance_with_records() {
    let f = Fixture::finished();
    let out = words(&f.log(&["list"]).success());
    assert_eq!(
        out,
        "TASK STATE EXIT DURATION CPU RSS STDOUT STDERR\n\
         prep succeeded 0 1.50s - - 10 B 0 B\n\
         score[10] succeeded 0 2.00s - - 21 B 0 B\n\
         score[20] failed 3 3.00s - - 12 B 12 B\n\
         score[30] cached - - - - 0 B 0 B\n\
         report cancelled - - - - 0 B 0 B"
    );
    let out = f.log(&["list", "--json", "score[20]"]).success();
    let line: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(
        line,
        serde_json::json!({
            "version": 2, "task": "score", "index": 20, "label": "score[20]", "state": "failed", "attempt": 0,
            "exit_code": 3, "signal": null, "duration_us": 3_000_000, "reason": "exit code 3",
            "stdout_bytes": 12, "stderr_bytes": 12,
            "worker": { "id": 1, "host": null, "allocation": null },
            // A journal without metrics: the start and end it recorded, nothing measured.
            "started_us": T0 + 2 * SECOND, "ended_us": T0 + 5 * SECOND,
            "wall_us": null, "cpu_us": null, "user_us": null, "system_us": null, "rss_bytes": null,
            "variant": null, "cpu_ids": null, "gpu_ids": null,
            "fingerprint": null, "cpu_percent": null,
            // The task's only variant: what it asked for.
            "requested_cpus": 1.0, "requested_gpus": 0.0, "requested_memory_bytes": 0, "requested_time_us": null,
            // Nor when it became ready, or what `/proc` would tell.
            "ready_us": null, "queue_wait_us": null,
            "peak_vmem_bytes": null, "read_bytes": null, "write_bytes": null, "rchar": null, "wchar": null,
        })
    );
}

#[test]
fn cat_prints_each_task_in_graph_order() {
    let f = Fixture::finished();
    assert_eq!(f.log(&["cat"]).success(), "preparing\nten: Hello\nten again\ntwenty boom: HELLO\ndone\n");
    assert_eq!(f.log(&["cat", "score[20]", "--stream", "stdout"]).success(), "twenty done\n");
    assert_eq!(f.log(&["cat", "score[20]", "--stream", "system"]).success(), "exit code 3\n");
    assert_eq!(f.log(&["cat", "score[30,10]", "prep"]).success(), "preparing\nten: Hello\nten again\n");
    // Issue 27: `--failed` heads each attempt with the instance and how it ended.
    let header = "==> score[20] attempt 0: failed: exit code 3 <==\n";
    assert_eq!(f.log(&["cat", "--failed", "--stream", "stderr"]).success(), format!("{header}boom: HELLO\n"));
    assert_eq!(f.log(&["cat", "--failed"]).success(), format!("{header}twenty boom: HELLO\ndone\n"));
}

/// Issue 27: `flow log cat --failed` separates the failed instances, and
/// each of their attempts, with a header naming the instance, the attempt
/// and how it ended; output without a final newline still leaves the next
/// header on a line of its own. `--json` is unchanged: one object per chunk.
#[test]
fn cat_failed_heads_each_attempt() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "ok"
command = "echo fine"

[[tasks]]
name = "bad"
range = "1-2"
retries = 1
command = "echo try $FLOW_INSTANCE of {{ index }}; printf 'no newline' >&2; exit 4"
"#,
    );
    t.run_with(&["run", "--cpus", "1"]);
    let expected = "\
==> bad[1] attempt 0: failed: exit code 4 <==
try 0 of 1
no newline

==> bad[1] attempt 1: failed: exit code 4 <==
try 1 of 1
no newline

==> bad[2] attempt 0: failed: exit code 4 <==
try 0 of 2
no newline

==> bad[2] attempt 1: failed: exit code 4 <==
try 1 of 2
no newline
";
    assert_eq!(t.success_with(&["log", "cat", "--failed"]), expected);
    let json = t.success_with(&["log", "cat", "--failed", "--json", "--stream", "stderr"]);
    assert_eq!(json.lines().count(), 4, "{json}");
}

#[test]
fn selectors_must_name_tasks_and_instances() {
    let f = Fixture::finished();
    let err = f.log(&["cat", "scores"]).invalid();
    assert_eq!(err, "error: `scores` in this run: no task named `scores`; did you mean `score`?\n");
    let err = f.log(&["cat", "nothing"]).invalid();
    assert_eq!(err, "error: `nothing` in this run: no task named `nothing` (tasks: prep, score, report)\n");
    let err = f.log(&["cat", "score[15]"]).invalid();
    assert!(
        err.starts_with("error: `score[15]` in this run: `score` has no instance with index 15 (its indices: "),
        "{err}"
    );
    assert!(f.log(&["cat", "score[1"]).invalid().contains("without a closing `]`"));
}

#[test]
fn tail_prefixes_whole_lines() {
    let f = Fixture::finished();
    assert_eq!(
        f.log(&["tail"]).success(),
        "prep | preparing\nscore[10] | ten: Hello\nscore[20] | boom: HELLO\nscore[20] | twenty done\n\
         score[10] | ten again\nscore[20] | exit code 3\n"
    );
    assert_eq!(f.log(&["tail", "score[10]"]).success(), "score[10] | ten: Hello\nscore[10] | ten again\n");
}

#[test]
fn tail_follows_a_live_run_until_it_ends() {
    let f = Fixture::started();
    let writer = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(400));
            f.append(&[out(score(20), OutputStream::Stdout, 24, "done\n")]);
            std::thread::sleep(Duration::from_millis(300));
            f.append(&[out(score(10), OutputStream::Stdout, 25, "ten again")]);
            f.finish();
        });
        let out = f.log(&["tail", "-f", "score"]).run();
        writer.join().expect("writer thread");
        out
    });
    assert_eq!((writer.code, writer.stderr.as_str()), (0, ""));
    assert_eq!(
        writer.stdout,
        "score[10] | ten: Hello\nscore[20] | boom: HELLO\nscore[20] | twenty done\nscore[10] | ten again\n"
    );
}

#[test]
fn summary_counts_sizes_and_durations() {
    let f = Fixture::finished();
    let out = f.log(&["summary"]).success();
    let id = &f.run.id;
    assert_eq!(
        words(&out),
        format!(
            "run {id}: failed\n\
             tasks: 5 instances with records: 2 succeeded, 1 cached, 1 failed, 1 cancelled\n\
             output: 43 B stdout, 12 B stderr, 12 B system in 7 records\n\
             \n\
             durations:\n\
             TASK TIMED TOTAL MEAN MAX\n\
             prep 1 1.50s 1.50s 1.50s\n\
             score 2 5.00s 2.50s 3.00s\n\
             \n\
             slowest:\n\
             score[20] 3.00s\n\
             score[10] 2.00s\n\
             prep 1.50s"
        )
    );
}

#[test]
fn grep_finds_lines_across_chunks() {
    let f = Fixture::finished();
    assert_eq!(
        f.log(&["grep", "-i", "hello"]).success(),
        "score[10]:stdout: ten: Hello\nscore[20]:stderr: boom: HELLO\n"
    );
    assert_eq!(f.log(&["grep", "hello"]).success(), "");
    assert_eq!(f.log(&["grep", "ty do", "score[20]"]).success(), "score[20]:stdout: twenty done\n");
}

#[test]
fn export_writes_every_record_as_json() {
    let f = Fixture::finished();
    let out = f.log(&["export", "--json"]).success();
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    assert_eq!(lines.len(), 7);
    assert_eq!(
        lines[3],
        serde_json::json!({
            "version": 2, "task": "score", "index": 20, "label": "score[20]", "attempt": 0, "stream": "stderr",
            "time_us": T0 + 2_300_000, "data": "boom: HELLO\n",
        })
    );
    assert!(f.log(&["export"]).invalid().contains("--json"));
}

#[test]
fn a_torn_tail_is_a_warning() {
    let f = Fixture::finished();
    let path = f.run.output_log();
    let len = fs_err::metadata(&path).expect("log").len();
    fs_err::OpenOptions::new().write(true).open(&path).expect("open").set_len(len - 5).expect("truncate");
    let out = f.log(&["cat", "score[20]"]).run();
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, "twenty boom: HELLO\ndone\n");
    // The lost record: 8 bytes of frame, 25 of header, "exit code 3\n"; 5 cut off.
    assert_eq!(
        out.stderr,
        "warning: output.log ends with 40 bytes of an incomplete record (the run was interrupted); ignored\n"
    );
    assert!(f.log(&["summary"]).run().stderr.contains("warning: output.log ends with 40 bytes"));
}

#[test]
fn runs_are_found_by_workflow_and_id() {
    let f = Fixture::finished();
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let workflow = f.path().join("workflow.toml");
    let out = Test::new()
        .current_dir(elsewhere.path())
        .args(["log", "cat", "prep", "-w", workflow.to_str().expect("utf-8 path")])
        .success();
    assert_eq!(out, "preparing\n");
    let nested = f.path().join("sub/dir");
    fs_err::create_dir_all(&nested).expect("mkdir");
    let id = &f.run.id[..f.run.id.len() - 2];
    assert_eq!(Test::new().current_dir(&nested).args(["log", "--run", id, "cat", "prep"]).success(), "preparing\n");

    let err = f.log(&["--run", "nope", "list"]).invalid();
    assert!(err.starts_with("error: no run `nope`"), "{err}");
    let err = Test::new().current_dir(elsewhere.path()).args(["log", "list"]).invalid();
    assert_eq!(err, "error: no `.flow` directory here or in a parent directory; name the workflow with -w\n");
}

/// Issue 27: one instance is "1 instance", in `flow log summary` as in
/// every "N things" flow writes (`flow_engine::units::plural`).
#[test]
fn one_instance_is_singular() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ncommand = \"true\"\n");
    t.success_with(&["run"]);
    let summary = t.success_with(&["log", "summary"]);
    assert_eq!(summary.lines().nth(1), Some("tasks: 1 instance with records: 1 succeeded"), "{summary}");
}

/// Issue 28: `flow log list` streams its rows (a table takes its column
/// widths from its first rows) and prints what it printed when it read the
/// whole journal first: the table, a trace file and CSV, exactly.
#[test]
fn list_prints_exactly_what_it_printed_before_it_streamed() {
    let f = Fixture::finished();
    assert_eq!(
        f.log(&["list"]).success(),
        "TASK       STATE      EXIT  DURATION  CPU  RSS  STDOUT  STDERR\n\
         prep       succeeded  0     1.50s     -    -    10 B    0 B\n\
         score[10]  succeeded  0     2.00s     -    -    21 B    0 B\n\
         score[20]  failed     3     3.00s     -    -    12 B    12 B\n\
         score[30]  cached     -     -         -    -    0 B     0 B\n\
         report     cancelled  -     -         -    -    0 B     0 B\n"
    );
    let columns = "task,attempt,state,exit,start,end,duration,stdout,stderr,fingerprint,reason";
    let (ones, twos, threes) = ("01".repeat(32), "02".repeat(32), "03".repeat(32));
    assert_eq!(
        f.log(&["list", "--format", "tsv", "--columns", columns]).success(),
        format!(
            "task\tattempt\tstate\texit\tstart\tend\tduration\tstdout\tstderr\tfingerprint\treason\n\
             prep\t0\tsucceeded\t0\t2023-11-14T22:13:20.000Z\t2023-11-14T22:13:21.500Z\t1500000\t10\t0\t{ones}\t\n\
             score[10]\t0\tsucceeded\t0\t2023-11-14T22:13:22.000Z\t2023-11-14T22:13:24.000Z\t2000000\t21\t0\t{twos}\t\n\
             score[20]\t0\tfailed\t3\t2023-11-14T22:13:22.000Z\t2023-11-14T22:13:25.000Z\t3000000\t12\t12\t\texit code 3\n\
             score[30]\t0\tcached\t\t\t2023-11-14T22:13:22.000Z\t\t0\t0\t{threes}\t\n\
             report\t0\tcancelled\t\t\t2023-11-14T22:13:25.100Z\t\t0\t0\t\t`score[20]` failed\n"
        )
    );
    assert_eq!(
        f.log(&["list", "--format", "csv", "--columns", "task,state,reason,fingerprint"]).success(),
        format!(
            "task,state,reason,fingerprint\n\
             prep,succeeded,,{ones}\n\
             score[10],succeeded,,{twos}\n\
             score[20],failed,exit code 3,\n\
             score[30],cached,,{threes}\n\
             report,cancelled,`score[20]` failed,\n"
        )
    );
}

/// `flow log summary` said "finished" of an interrupted run, which
/// `flow runs` and `flow status` call interrupted; it says as they do.
#[test]
fn summary_says_how_the_run_ended_as_status_does() {
    let t =
        crate::support::Test::new().workflow("[[tasks]]\nname = \"a\"\nrange = \"1-20\"\ncommand = \"sleep 0.3\"\n");
    let mut run = crate::support::process::spawn_flow(t.path(), &["run", "--cpus", "1"], "run.err");
    let started = || crate::run::run_ids(t.path()).len() == 1;
    assert!(crate::support::process::wait_for(std::time::Duration::from_secs(20), started));
    std::thread::sleep(std::time::Duration::from_millis(500));
    crate::support::process::signal(run.id(), "-INT");
    crate::support::process::wait_child(&mut run, std::time::Duration::from_secs(20)).expect("the run ends");
    let summary = t.success_with(&["log", "summary"]);
    let id = &crate::run::run_ids(t.path())[0];
    assert_eq!(summary.lines().next(), Some(format!("run {id}: interrupted").as_str()), "{summary}");
    let json: serde_json::Value = serde_json::from_str(&t.success_with(&["log", "summary", "--json"])).expect("JSON");
    assert_eq!(json["state"], "interrupted");
    assert_eq!(t.success_with(&["status"]).lines().next(), Some(format!("run {id}: interrupted").as_str()));
}
