//! The reasons of [`Explainer`], on workflows compiled from text and
//! journals, workers and queues written by hand.

use crate::compile::testing::graph;
use crate::ir::{Amount, Graph, GroupId, TaskId};
use crate::log::{JournalEvent, JournalRecord, Wrote};
use crate::profile::Manager;
use crate::resources::{Deadline, Shortfall, WorkerShape};
use crate::rundir::{AllocRecord, AllocState, AllocsFile, QueueRecord, RunDir, RunJournal, RunView, WorkerInfo};

use super::*;

/// 2023-11-14T22:13:20Z, in µs.
const T0: u64 = 1_700_000_000_000_000;
const SECOND: u64 = 1_000_000;

/// A worker with these totals and no deadline.
fn worker(id: u32, cpus: usize, gpus: usize, memory: u64) -> WorkerInfo {
    WorkerInfo {
        id,
        hostname: format!("node{id}"),
        peer: String::new(),
        shape: WorkerShape::counted(cpus, gpus, memory, Default::default()),
        deadline: None,
        allocation: None,
        running: 0,
    }
}

/// Instance `instance` of group `group`.
fn t(group: u32, instance: u64) -> TaskId {
    TaskId::new(GroupId(group), instance)
}

fn at(task: TaskId, attempt: u32, second: u64, event: JournalEvent) -> JournalRecord {
    JournalRecord::new(T0 + second * SECOND, task, attempt, event)
}

/// Started at second 1, ready a quarter of a second before.
fn started(task: TaskId, attempt: u32, worker: u32) -> JournalRecord {
    at(task, attempt, 1, JournalEvent::Started { worker, ready_us: Some(T0 + SECOND - SECOND / 4) })
}

fn succeeded(task: TaskId) -> [JournalRecord; 2] {
    [started(task, 0, 0), at(task, 0, 3, JournalEvent::Succeeded { fingerprint: [0; 32], wrote: Wrote::default() })]
}

fn failed(task: TaskId, attempt: u32, code: i32) -> JournalRecord {
    at(
        task,
        attempt,
        2,
        JournalEvent::Failed { exit_code: Some(code), signal: None, reason: format!("exit code {code}") },
    )
}

/// A run as its files would describe it, as of `now_us`.
struct Snapshot {
    view: RunView,
    journal: RunJournal,
    now_us: u64,
}

impl Snapshot {
    fn new(
        graph: Graph,
        records: &[JournalRecord],
        workers: Vec<WorkerInfo>,
        allocs: Option<AllocsFile>,
        live: bool,
        now_us: u64,
    ) -> Self {
        let dir = RunDir { id: "run".into(), path: "run".into() };
        let view = RunView { dir, live, graph, meta: None, summary: None, workers, left: Vec::new(), allocs };
        Snapshot { view, journal: RunJournal::from_records(records, live), now_us }
    }

    fn explainer(&self) -> Explainer<'_> {
        Explainer::new(&self.view, &self.journal, self.now_us)
    }
}

/// A live run as of `T0 + 10 s`.
fn live(graph: Graph, records: &[JournalRecord], workers: Vec<WorkerInfo>, allocs: Option<AllocsFile>) -> Snapshot {
    Snapshot::new(graph, records, workers, allocs, true, T0 + 10 * SECOND)
}

const DOCK: &str = "[[tasks]]\nname = \"dock\"\nrange = \"1-10\"\nretries = 1\ncommand = \"x\"\n\
                    [[tasks]]\nname = \"score\"\nafter = [\"dock\"]\ncommand = \"y\"\n";

#[test]
fn finished_instances_say_how_they_ended() {
    let g = graph(DOCK);
    let mut records = Vec::new();
    records.extend(succeeded(t(0, 0)));
    records.push(started(t(0, 1), 0, 0));
    records.push(at(t(0, 1), 0, 2, JournalEvent::Cached { fingerprint: [1; 32], wrote: Wrote::default() }));
    records.extend([started(t(0, 2), 0, 1), failed(t(0, 2), 0, 3)]);
    records.push(at(t(1, 0), 0, 2, JournalEvent::Cancelled { reason: "dock[3] failed".into() }));
    records.extend([started(t(0, 3), 0, 1), at(t(0, 3), 0, 4, JournalEvent::Lost { worker: 1 })]);
    records.push(started(t(0, 4), 0, 0));
    let run = Snapshot::new(g, &records, vec![worker(0, 2, 0, 0)], None, false, T0 + 60 * SECOND);
    let ex = run.explainer();

    let ok = ex.explain(t(0, 0));
    assert_eq!((ok.label.as_str(), ok.index, ok.state), ("dock[1]", 1, State::Succeeded));
    let node0 = Some(WorkerRef { id: 0, host: Some("node0".into()), allocation: None });
    let ran = Ran {
        worker: node0.clone(),
        started_us: Some(T0 + SECOND),
        queue_wait_us: Some(SECOND / 4),
        ended_us: Some(T0 + 3 * SECOND),
        duration_us: Some(2 * SECOND),
    };
    assert_eq!(ok.reason, Reason::Succeeded { attempt: 0, ran });
    assert_eq!(ex.explain(t(0, 1)).state, State::Cached);
    let Reason::Failed { exit_code, retries, message, ran, .. } = ex.explain(t(0, 2)).reason else { panic!() };
    assert_eq!((exit_code, retries, message.as_deref()), (Some(3), 1, Some("exit code 3")));
    // Worker 1 is not in workers.json any more: only its id is known.
    assert_eq!(ran.worker, Some(WorkerRef { id: 1, host: None, allocation: None }));
    assert_eq!(
        ex.explain(t(1, 0)).reason,
        Reason::Cancelled { message: Some("dock[3] failed".into()), ended_us: Some(T0 + 2 * SECOND) }
    );
    assert_eq!(ex.explain(t(0, 3)).state, State::Lost);
    let Reason::NotRun { running: Some(ran) } = ex.explain(t(0, 4)).reason else { panic!() };
    assert_eq!(ran.worker, node0);
    assert_eq!(ex.explain(t(0, 5)).reason, Reason::NotRun { running: None });
}

#[test]
fn a_waiting_instance_lists_failed_upstream_instances_first() {
    let g = graph(DOCK);
    let mut records = Vec::new();
    for i in 0..5 {
        records.extend(succeeded(t(0, i)));
    }
    records.push(started(t(0, 5), 0, 0));
    // dock[7] used up its retry; dock[8] failed once and will run again.
    records.extend([started(t(0, 6), 0, 0), failed(t(0, 6), 0, 1), started(t(0, 6), 1, 0), failed(t(0, 6), 1, 2)]);
    records.extend([started(t(0, 7), 0, 0), failed(t(0, 7), 0, 1)]);
    let run = live(g, &records, vec![worker(0, 4, 0, 0)], None);
    let ex = run.explainer();

    let score = ex.explain(t(1, 0));
    assert_eq!((score.label.as_str(), score.state), ("score", State::Waiting));
    let Reason::Dependencies { upstream, doomed } = score.reason else { panic!("{score:?}") };
    assert!(doomed);
    assert_eq!(upstream.len(), 1);
    let dock = &upstream[0];
    assert_eq!((dock.task.as_str(), dock.total, dock.not_done, dock.failed), ("dock", 10, 5, 1));
    let examples: Vec<_> = dock.examples.iter().map(|e| (e.label.as_str(), e.state, e.exit_code)).collect();
    assert_eq!(
        examples,
        [("dock[7]", State::Failed, Some(2)), ("dock[6]", State::Running, None), ("dock[8]", State::Retrying, Some(1)),]
    );

    // dock[8] waits to run again: its failed attempt is the earlier one.
    let retrying = ex.explain(t(0, 7));
    assert_eq!(retrying.reason, Reason::Ready { running: 1, workers: 1, busy: 1, nodes: 1 });
    let earlier = retrying.earlier.expect("an earlier attempt");
    assert_eq!((earlier.status, earlier.exit_code, earlier.retries_left), (State::Failed, Some(1), Some(0)));
    assert_eq!(ex.explain(t(0, 6)).state, State::Failed);
}

#[test]
fn instance_dependencies_count_only_the_instances_waited_for() {
    let g = graph(
        "[[tasks]]\nname = \"dock\"\nrange = \"1-4\"\ncommand = \"x\"\n\
         [[tasks]]\nname = \"score\"\nrange = \"1-4\"\nafter = [\"dock[{{ index }}]\"]\ncommand = \"y\"\n\
         [[tasks]]\nname = \"sim\"\nrange = \"1-3\"\n\
         after = [\"{% if index > 1 %}sim[{{ index - 1 }}]{% endif %}\"]\ncommand = \"z\"\n",
    );
    let mut records = Vec::new();
    records.extend(succeeded(t(0, 0)));
    records.push(started(t(0, 1), 0, 0));
    records.push(started(t(2, 0), 0, 0));
    let run = live(g, &records, vec![worker(0, 2, 0, 0)], None);
    let ex = run.explainer();
    assert_eq!(ex.explain(t(1, 0)).reason, Reason::Ready { running: 2, workers: 1, busy: 1, nodes: 1 });
    let Reason::Dependencies { upstream, doomed } = ex.explain(t(1, 1)).reason else { panic!() };
    assert!(!doomed);
    assert_eq!((upstream[0].total, upstream[0].not_done, upstream[0].examples[0].state), (1, 1, State::Running));
    assert_eq!(upstream[0].examples[0].worker, Some(0));
    let Reason::Dependencies { upstream, .. } = ex.explain(t(2, 2)).reason else { panic!() };
    assert_eq!((upstream[0].task.as_str(), upstream[0].examples[0].label.as_str()), ("sim", "sim[2]"));
    assert_eq!(upstream[0].examples[0].state, State::Waiting);
}

/// What the one instance of a task with `keys` waits for, given the workers and queue.
fn placement(keys: &str, workers: Vec<WorkerInfo>, allocs: Option<AllocsFile>) -> Explanation {
    let g = graph(&format!("[[tasks]]\nname = \"big\"\ncommand = \"x\"\n{keys}\n"));
    let run = live(g, &[], workers, allocs);
    run.explainer().explain(t(0, 0))
}

fn queue(time_limit_s: u64, paused: Option<&str>, allocations: Vec<AllocRecord>) -> AllocsFile {
    let queue = QueueRecord {
        profile: "cluster".into(),
        manager: Manager::Slurm,
        time_limit_s,
        workers_per_allocation: 1,
        max_workers: 4,
        backlog: 1,
        paused: paused.map(str::to_owned),
        unschedulable: vec!["`big`: needs 64 cpus, the queue's workers have 32".into()],
    };
    AllocsFile { queue: Some(queue), allocations }
}

fn allocation(id: u32, state: AllocState, reason: Option<&str>) -> AllocRecord {
    AllocRecord {
        id,
        job_id: format!("{}", 1000 + id),
        state,
        workers: 1,
        connected: 0,
        joined: 0,
        submitted_us: T0 + u64::from(id) * SECOND,
        started_us: None,
        ended_us: None,
        reason: reason.map(str::to_owned),
        script: format!("allocs/{id}.sh"),
        output: format!("allocs/{id}.out"),
    }
}

#[test]
fn without_workers_the_queue_says_what_comes() {
    assert_eq!(placement("", vec![], None).reason, Reason::NoWorkers { queue: None });
    let allocs = queue(
        3600,
        None,
        vec![
            allocation(1, AllocState::Failed, Some("sbatch: error: invalid account")),
            allocation(2, AllocState::Queued, None),
            allocation(3, AllocState::Queued, None),
        ],
    );
    let waiting = placement("", vec![], Some(allocs));
    let Reason::NoWorkers { queue: Some(q) } = waiting.reason else { panic!() };
    assert_eq!((q.manager, q.submitted, q.starting, q.paused), (Manager::Slurm, 3, 0, None));
    let jobs: Vec<_> = q.queued.iter().map(|a| (a.job_id.as_str(), a.submitted_us)).collect();
    assert_eq!(jobs, [("1002", T0 + 2 * SECOND), ("1003", T0 + 3 * SECOND)]);
    assert_eq!(q.last_failure.as_deref(), Some("sbatch: error: invalid account"));
    assert_eq!(waiting.queue_notes, ["`big`: needs 64 cpus, the queue's workers have 32"]);

    let paused = placement("", vec![], Some(queue(3600, Some("sbatch: command not found"), vec![])));
    let Reason::NoWorkers { queue: Some(q) } = paused.reason else { panic!() };
    assert_eq!((q.paused.as_deref(), q.submitted), (Some("sbatch: command not found"), 0));

    let long = placement("time_request = \"2h\"", vec![], Some(queue(3600, None, vec![])));
    assert_eq!(long.reason, Reason::TimeRequest { seconds: 7200, longest_left_s: None, queue_worker_s: Some(3540) });
    // Issue 18: exactly what a worker of the queue gets is too long as well.
    let equal = placement("time_request = \"59m\"", vec![], Some(queue(3600, None, vec![])));
    assert_eq!(equal.reason, Reason::TimeRequest { seconds: 3540, longest_left_s: None, queue_worker_s: Some(3540) });
    let less = placement("time_request = \"58m59s\"", vec![], Some(queue(3600, None, vec![])));
    assert!(matches!(less.reason, Reason::NoWorkers { .. }), "{:?}", less.reason);
}

#[test]
fn no_worker_fits_its_resources() {
    let small = || vec![worker(0, 1, 0, 1 << 30), worker(1, 2, 0, 1 << 30)];
    let cpus = placement("cpus = 4", small(), None);
    let needs = Shortfall::Cpus { needs: Amount::whole(4), largest: Amount::whole(2) };
    assert_eq!(cpus.reason, Reason::Resources { nodes: 1, fitting: 0, workers: 2, variants: vec![needs] });
    let variants =
        placement("[[tasks.variants]]\ngpus = 1\n[[tasks.variants]]\ncpus = 2\nmemory = \"4 GiB\"\n", small(), None);
    let Reason::Resources { variants, .. } = variants.reason else { panic!() };
    let text: Vec<String> = variants.iter().map(ToString::to_string).collect();
    assert_eq!(text, ["needs 1 gpu, the largest worker has 0", "needs 4 GiB of memory, the largest worker has 1 GiB"]);
    let nodes = placement("nodes = 2\ncpus = 2", small(), None);
    assert_eq!(nodes.reason, Reason::Resources { nodes: 2, fitting: 1, workers: 2, variants: vec![] });
}

#[test]
fn a_time_request_must_fit_a_worker_that_fits() {
    let leaving = |id, cpus, secs| WorkerInfo {
        deadline: Some(Deadline(T0 + 10 * SECOND + secs * SECOND)),
        ..worker(id, cpus, 0, 0)
    };
    // Worker 1 has a day left but only one cpu; worker 0 fits, for an hour.
    let long = placement("cpus = 2\ntime_request = \"2h\"", vec![leaving(0, 2, 3600), leaving(1, 1, 90_000)], None);
    assert_eq!(long.reason, Reason::TimeRequest { seconds: 7200, longest_left_s: Some(3600), queue_worker_s: None });
    let with_queue = placement("time_request = \"2h\"", vec![leaving(0, 1, 60)], Some(queue(14_400, None, vec![])));
    assert_eq!(
        with_queue.reason,
        Reason::TimeRequest { seconds: 7200, longest_left_s: Some(60), queue_worker_s: Some(14_340) }
    );
    let fits = placement("time_request = \"2h\"", vec![leaving(0, 1, 60), worker(1, 1, 0, 0)], None);
    assert_eq!(fits.reason, Reason::Ready { running: 0, workers: 2, busy: 0, nodes: 1 });
}

#[test]
fn a_lost_attempt_waits_to_run_again() {
    let g = graph("[[tasks]]\nname = \"a\"\ncommand = \"x\"\n");
    let records = [started(t(0, 0), 0, 3), at(t(0, 0), 0, 5, JournalEvent::Lost { worker: 3 })];
    let run = live(g, &records, vec![], None);
    let lost = run.explainer().explain(t(0, 0));
    assert_eq!(lost.reason, Reason::NoWorkers { queue: None });
    let earlier = lost.earlier.expect("the lost attempt");
    assert_eq!((earlier.status, earlier.worker, earlier.retries_left), (State::Lost, Some(3), None));
}

#[test]
fn explanations_serialize_with_their_kind() {
    let waiting = placement("cpus = 4", vec![worker(0, 2, 0, 0)], None);
    let json = serde_json::to_value(&waiting).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "task": "big", "index": 0, "label": "big", "state": "waiting",
            "reason": {
                "kind": "resources", "nodes": 1, "fitting": 0, "workers": 1,
                "variants": [{ "resource": "cpus", "needs": 4.0, "largest": 2.0 }],
            },
        })
    );
}

#[test]
fn queue_notes_are_only_the_tasks_own() {
    let g = graph("[[tasks]]\nname = \"fpga\"\ncommand = \"x\"\n");
    let mut allocs = queue(3600, None, vec![]);
    if let Some(q) = allocs.queue.as_mut() {
        q.unschedulable = vec!["`big`: needs 2 `fpga`, the queue's workers have 0 `fpga`".into()];
    }
    let run = live(g, &[], vec![], Some(allocs));
    assert_eq!(run.explainer().explain(t(0, 0)).queue_notes, Vec::<String>::new());
}

#[test]
fn a_failure_waiting_for_its_retry_delay_says_when_it_runs_again() {
    let g = graph(
        "[[tasks]]\nname = \"fetch\"\ncommand = \"x\"\nretries = 4\nretry_delay = \"1m\"\n\
         [[tasks]]\nname = \"strict\"\ncommand = \"x\"\nretries = 4\nretry_on = [75]\n",
    );
    let until = T0 + 70 * SECOND;
    let records = [
        started(t(0, 0), 0, 0),
        failed(t(0, 0), 0, 1),
        at(t(0, 0), 0, 2, JournalEvent::RetryAt { until_us: until }),
        started(t(1, 0), 0, 0),
        failed(t(1, 0), 0, 3),
    ];
    let run = live(g, &records, vec![worker(0, 4, 0, 0)], None);
    let ex = run.explainer();
    let fetch = ex.explain(t(0, 0));
    assert_eq!(fetch.reason, Reason::Retrying { attempt: 1, attempts: 5, until_us: until });
    assert_eq!(fetch.state, State::Waiting);
    assert_eq!(fetch.earlier.map(|e| e.retries_left), Some(Some(3)));
    // Exit code 3 is not in `retry_on`: failed for good, retries left or not.
    assert_eq!(ex.explain(t(1, 0)).state, State::Failed);
}
