//! The report's data model on a small run written by hand: a task array
//! with a retry and a failure, a task cancelled by it, one cached instance.

use crate::compile::{Options, compile};
use crate::diag::Source;
use crate::ir::{GroupId, TaskId};
use crate::log::{AttemptMetrics, JournalEvent, JournalRecord, JournalWriter, ProcessUsage, Wrote};
use std::sync::Arc;

use crate::rundir::{AllocRecord, AllocState, AllocsFile, Meta, RunDir, RunView, Summary, WorkerInfo};
use crate::spec::{Format, parse};

use super::{Report, render};

/// 2023-11-14T22:13:20Z, in µs.
const T0: u64 = 1_700_000_000_000_000;
const SECOND: u64 = 1_000_000;

const WORKFLOW: &str = r#"name = "docking"

[[tasks]]
name = "dock"
range = "1-4"
retries = 1
command = "dock {{ index }}"
variants = [{ cpus = 2, memory = "8 GiB" }]

[[tasks]]
name = "score"
after = ["dock"]
command = "score"
"#;

fn t(group: u32, instance: u64) -> TaskId {
    TaskId::new(GroupId(group), instance)
}

fn at(task: TaskId, attempt: u32, second: u64, event: JournalEvent) -> JournalRecord {
    JournalRecord::new(T0 + second * SECOND, task, attempt, event)
}

/// An attempt's end, with metrics: `cpu` seconds of CPU and `rss` MiB at most.
fn ended(
    task: TaskId,
    attempt: u32,
    (start, end): (u64, u64),
    event: JournalEvent,
    cpu: u64,
    rss: u64,
) -> JournalRecord {
    let mut record = at(task, attempt, end, event);
    let usage = ProcessUsage {
        started_us: T0 + start * SECOND,
        ended_us: T0 + end * SECOND,
        wall_us: (end - start) * SECOND,
        user_us: cpu * SECOND,
        system_us: 0,
        max_rss: rss << 20,
        ..ProcessUsage::default()
    };
    let host = "node1".to_owned();
    record.metrics = Some(Box::new(AttemptMetrics { usage, cpus: vec![0, 1], host, ..AttemptMetrics::default() }));
    record
}

/// The run as its files would describe it, its journal written to a
/// directory that lives as long as it is held, and the workflow file.
fn small_run() -> (tempfile::TempDir, RunView, Arc<Source>) {
    let source = Source::new("workflow.toml", WORKFLOW);
    let workflow = parse(&source, Format::Toml).expect("parses");
    let dir = tempfile::tempdir().expect("temp dir");
    let options = Options { base_dir: dir.path().to_path_buf(), ..Options::default() };
    let graph = compile(&workflow, &source, &options).expect("compiles");
    let ok = || JournalEvent::Succeeded { fingerprint: [0; 32], wrote: Wrote::default() };
    let failed = || JournalEvent::Failed { exit_code: Some(3), signal: None, reason: "exit code 3".into() };
    let records = vec![
        at(t(0, 0), 0, 0, JournalEvent::Cached { fingerprint: [0; 32], wrote: Wrote::default() }),
        at(t(0, 1), 0, 0, JournalEvent::Started { worker: 0, ready_us: None }),
        at(t(0, 2), 0, 0, JournalEvent::Started { worker: 0, ready_us: None }),
        ended(t(0, 1), 0, (0, 4), ok(), 7, 900),
        // Sent ahead to its worker, then started there: one attempt (issue 26).
        at(t(0, 3), 0, 3, JournalEvent::Started { worker: 0, ready_us: None }),
        at(t(0, 3), 0, 4, JournalEvent::Started { worker: 0, ready_us: None }),
        ended(t(0, 2), 0, (0, 5), failed(), 1, 200),
        at(t(0, 2), 1, 5, JournalEvent::Started { worker: 0, ready_us: None }),
        ended(t(0, 3), 0, (4, 10), ok(), 11, 1300),
        ended(t(0, 2), 1, (5, 6), failed(), 1, 210),
        at(t(1, 0), 0, 6, JournalEvent::Cancelled { reason: "`dock[3]` failed".into() }),
    ];
    let summary = Summary {
        run_id: "r1".into(),
        total: 5,
        succeeded: 2,
        cached: 1,
        failed: 1,
        cancelled: 1,
        seconds: 6.5,
        ..Summary::default()
    };
    let worker = WorkerInfo {
        id: 0,
        hostname: "node1".into(),
        peer: String::new(),
        shape: crate::resources::WorkerShape::counted(4, 0, 16 << 30, Default::default()),
        deadline: None,
        allocation: None,
        running: 0,
    };
    let run_dir = RunDir { id: "r1".into(), path: dir.path().to_path_buf() };
    JournalWriter::create(&run_dir.journal()).and_then(|mut w| w.append_batch(&records)).expect("write the journal");
    let meta = Meta {
        workflow: "/home/me/docking/workflow.toml".into(),
        started_us: T0,
        dry_exec: false,
        command: ["flow", "run", "-v", "tag=a b"].map(String::from).to_vec(),
    };
    let run = RunView {
        dir: run_dir,
        live: false,
        graph,
        meta: Some(meta),
        summary: Some(summary),
        workers: vec![worker],
        left: Vec::new(),
        allocs: None,
    };
    (dir, run, source)
}

#[test]
fn the_data_model_of_a_small_run() {
    let (_dir, run, source) = small_run();
    let mut report = Report::build(&run, Some(&source)).expect("builds");
    report.run.flow_version = "[VERSION]".into();
    insta::assert_json_snapshot!(report);
}

#[test]
fn the_page_holds_every_section_and_no_external_reference() {
    let mut html = Vec::new();
    let (_dir, run, source) = small_run();
    render(&Report::build(&run, Some(&source)).expect("builds"), &mut html).expect("renders");
    let html = String::from_utf8(html).expect("UTF-8");
    for id in ["summary", "tasks", "failures", "timeline", "graph"] {
        assert!(html.contains(&format!(r#"<section id="{id}">"#)), "no section `{id}`");
    }
    assert!(html.contains("workflow.toml:4:8"), "no location of `dock`");
    assert!(html.contains("dock asked for 8 GiB, used at most 1.27 GiB"), "no use of `dock`");
    assert!(!html.contains("http://") && !html.contains("https://"));
}

#[test]
fn a_cluster_run_shows_its_allocations() {
    let allocation = |id: u32, state: AllocState, started: Option<u64>, ended: Option<u64>| AllocRecord {
        id,
        job_id: format!("{}", 1000 + id),
        state,
        workers: 1,
        connected: 0,
        joined: u32::from(started.is_some()),
        submitted_us: T0,
        started_us: started.map(|s| T0 + s * SECOND),
        ended_us: ended.map(|s| T0 + s * SECOND),
        reason: (state == AllocState::Failed).then(|| "exit code 1".to_owned()),
        script: format!("allocs/{id}.sh"),
        output: format!("allocs/{id}.out"),
    };
    let (_dir, mut run, source) = small_run();
    let allocations = vec![
        allocation(1, AllocState::Finished, Some(1), Some(6)),
        allocation(2, AllocState::Failed, Some(2), Some(3)),
    ];
    run.allocs = Some(AllocsFile { queue: None, allocations });
    let report = Report::build(&run, Some(&source)).expect("builds");
    let states: Vec<_> = report.allocations.iter().map(|a| (a.job_id.as_str(), a.state.as_str())).collect();
    assert_eq!(states, [("1001", "finished"), ("1002", "failed")]);
    let mut html = Vec::new();
    render(&report, &mut html).expect("renders");
    let html = String::from_utf8(html).expect("UTF-8");
    assert!(html.contains(r#"<section id="allocations">"#));
    assert_eq!(html.matches(r#"<rect class="running""#).count(), 2);
    assert!(html.contains("failed, 1 workers: exit code 1</title>"));
}
