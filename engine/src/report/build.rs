//! Builds a [`Report`] from a [`RunView`] in one pass over the journal, read
//! record by record and never held whole, keeping per task only samples of
//! numbers, per run only the few instances it names (the failures, the
//! slowest attempts) and a timeline whose size does not grow with the run;
//! a second pass reads the records of the failures (and, for a run without
//! a start or an end on record, a first pass finds its span).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

use super::counts::Counts;
use super::graph_view::GraphView;
use super::report::{AllocationSpan, FailureReport, Report, RunInfo, SlowAttempt, TaskReport, VariantUse};
use super::stats::Stats;
use super::stderr_tails::stderr_tails;
use super::timeline::Capacity;
use super::timeline_builder::{Span, TimelineBuilder};
use super::{MAX_FAILURES, MAX_SLOWEST, ReportError};

use crate::diag::{Part, Source};
use crate::ir::{Graph, TaskId};
use crate::log::{AttemptMetrics, JournalEvent, JournalRecord, LastAttempt, Latest, State};
use crate::rundir::{JournalHealth, RunDir, RunView, WorkerInfo};
use crate::shell_word::shell_word;
use crate::units::{BytesStyle, bytes};

impl Report {
    /// The report of the run in `run`, with the stderr tails of its failures.
    pub fn from_run(dir: &RunDir) -> Result<Report, ReportError> {
        let run = RunView::read(dir)?;
        // The workflow file as it is now, with the files it includes (the
        // graph's spans count through them all), for `file:line:col` of
        // tasks; each named by its file name.
        let source = run.meta.as_ref().and_then(|meta| {
            let text = fs_err::read_to_string(&meta.workflow).ok()?;
            let root = Source::new(meta.workflow.file_name()?.to_string_lossy(), text);
            let format = crate::spec::Format::from_path(&meta.workflow).unwrap_or(crate::spec::Format::Toml);
            let source = crate::spec::load(&root, &meta.workflow, format).1;
            Some(relative_names(&source, meta.workflow.parent()?))
        });
        let mut report = Report::build(&run, source.as_deref())?;
        let wanted: Vec<(TaskId, u32)> = report.failures.iter().filter_map(|f| f.key).collect();
        let mut tails = stderr_tails(&run, &wanted, &mut report.warnings)?;
        for failure in &mut report.failures {
            if let Some(tail) = failure.key.and_then(|key| tails.remove(&key)) {
                failure.stderr_tail = tail;
            }
        }
        Ok(report)
    }

    /// The report of `run` (without stderr tails), with `file:line:col`
    /// of its tasks in `source`, the workflow file, if given.
    pub fn build(run: &RunView, source: Option<&Source>) -> Result<Report, ReportError> {
        let graph = &run.graph;
        let (started_us, ended_us) = run_span(run)?;
        let mut latest = Latest::new(graph);
        let axis = (started_us.unwrap_or_default(), ended_us.unwrap_or_default());
        let mut attempts = Attempts::new(graph, axis);
        let health = run.each_journal_record(|r| {
            latest.apply(&r);
            attempts.apply(&r);
        })?;
        let warnings = journal_warnings(&health);
        let counts = Counts::per_group(graph, &latest);
        let failed: Vec<(TaskId, u32)> = latest
            .iter()
            .filter(|last| last.status == State::Failed && !last.retrying)
            .take(MAX_FAILURES)
            .map(|LastAttempt { task, attempt, .. }| (task, attempt))
            .collect();
        let location = |group: usize| {
            let start = graph.groups[group].span.start;
            source.filter(|s| start < s.text.len()).map(|s| s.position(start))
        };
        attempts.finish(ended_us.unwrap_or_default());
        let workers = every_worker(run);
        let lanes = attempts.lanes(&workers);
        let failures_total = counts.iter().map(|c| c.failed).sum();
        let failures = failures(run, &failed, location)?;
        let tasks = graph
            .groups
            .iter()
            .enumerate()
            .map(|(g, group)| {
                let samples = &mut attempts.samples[g];
                let usage = samples
                    .usage
                    .iter()
                    .filter_map(|(&variant, used)| {
                        let asked = group.variants.get(variant as usize)?;
                        Some(variant_use(variant, asked.cpus.as_f64(), asked.memory, used))
                    })
                    .collect();
                TaskReport {
                    name: group.name.clone(),
                    location: location(g),
                    counts: counts[g],
                    attempts: samples.attempts,
                    wall_us: Stats::of(&mut samples.wall),
                    cpu_us: Stats::of(&mut samples.cpu),
                    max_rss: Stats::of(&mut samples.rss),
                    usage,
                }
            })
            .collect();
        let total = Counts::sum(&counts);
        let workers = &workers;
        let sum = |of: fn(&WorkerInfo) -> f64| (!workers.is_empty()).then(|| workers.iter().map(of).sum());
        let capacity = Capacity {
            cpus: sum(|w| w.shape.cpus.len() as f64),
            gpus: sum(|w| w.shape.gpus.len() as f64),
            memory: sum(|w| w.shape.memory as f64),
        };
        let lane = |worker: u32| lanes.iter().find(|(id, _)| *id == worker).map(|(_, label)| label.clone());
        let slowest = attempts
            .slowest
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse((wall_us, task, attempt, worker))| SlowAttempt {
                task: graph.label(task),
                attempt,
                wall_us,
                lane: lane(worker).unwrap_or_default(),
            })
            .collect();
        let timeline = attempts.timeline.finish(&lanes, capacity, |t| graph.label(t));
        Ok(Report {
            run: run_info(run, started_us, ended_us),
            counts: total,
            graph: GraphView::new(graph, &counts),
            tasks,
            failures,
            failures_total,
            slowest,
            timeline,
            allocations: allocations(run),
            warnings,
        })
    }
}

/// When the run started and ended: as `meta.json` and `summary.json` say,
/// else from the first and the last record of the journal.
fn run_span(run: &RunView) -> Result<(Option<u64>, Option<u64>), ReportError> {
    let (mut first, mut last) = (None::<u64>, None::<u64>);
    let meta_started = run.meta.as_ref().map(|m| m.started_us);
    if meta_started.is_none() || run.summary.is_none() {
        run.each_journal_record(|r| {
            first = Some(first.map_or(r.time_us, |t| t.min(r.time_us)));
            last = Some(last.map_or(r.time_us, |t| t.max(r.time_us)));
        })?;
    }
    let started_us = meta_started.or(first);
    let ended_us = match (&run.summary, started_us) {
        (Some(s), Some(start)) => Some(start + (s.seconds * 1e6) as u64),
        _ => last,
    };
    Ok((started_us, ended_us))
}

/// The failures of `failed` (instances and their last attempt), in that
/// order, from the last record of each attempt: a second pass over the journal.
fn failures(
    run: &RunView,
    failed: &[(TaskId, u32)],
    location: impl Fn(usize) -> Option<String>,
) -> Result<Vec<FailureReport>, ReportError> {
    let wanted: HashSet<(TaskId, u32)> = failed.iter().copied().collect();
    let mut last: HashMap<(TaskId, u32), JournalRecord> = HashMap::new();
    run.each_journal_record(|r| {
        if wanted.contains(&(r.task, r.attempt)) {
            last.insert((r.task, r.attempt), r);
        }
    })?;
    Ok(failed
        .iter()
        .map(|&(task, attempt)| {
            let record = last.get(&(task, attempt));
            let reason = match record.map(|r| &r.event) {
                Some(JournalEvent::Failed { reason, .. }) => reason.clone(),
                _ => String::new(),
            };
            FailureReport {
                task: run.graph.label(task),
                attempt,
                reason,
                location: location(task.group.index()),
                host: record.and_then(|r| r.metrics.as_ref()).map(|m| m.host.clone()),
                stderr_tail: Vec::new(),
                key: Some((task, attempt)),
            }
        })
        .collect())
}

/// The run's status line fields.
fn run_info(run: &RunView, started_us: Option<u64>, ended_us: Option<u64>) -> RunInfo {
    let exit_code = run.summary.as_ref().map(crate::rundir::Summary::exit_code);
    let status = match (&run.summary, exit_code) {
        (Some(s), _) if s.interrupted => "interrupted",
        (Some(_), Some(0)) => "succeeded",
        (Some(_), _) => "failed",
        (None, _) => "unfinished",
    };
    RunInfo {
        id: run.dir.id.clone(),
        workflow: run.graph.name.clone(),
        workflow_file: run.meta.as_ref().map(|m| m.workflow.display().to_string()),
        command_line: run
            .meta
            .as_ref()
            .filter(|m| !m.command.is_empty())
            .map(|m| m.command.iter().map(|w| shell_word(w)).collect::<Vec<_>>().join(" ")),
        dry_exec: run.meta.as_ref().is_some_and(|m| m.dry_exec),
        flow_version: env!("CARGO_PKG_VERSION").to_owned(),
        started_us,
        ended_us,
        status: status.to_owned(),
        exit_code,
    }
}

/// The workers that joined the run, connected or gone, by id.
fn every_worker(run: &RunView) -> Vec<WorkerInfo> {
    let mut workers: Vec<WorkerInfo> = run.workers.iter().chain(&run.left).cloned().collect();
    workers.sort_by_key(|w| w.id);
    workers.dedup_by_key(|w| w.id);
    workers
}

/// What of the journal could not be read, as the report says it.
fn journal_warnings(health: &JournalHealth) -> Vec<String> {
    let torn = health
        .torn
        .iter()
        .map(|torn| format!("the journal ends with {} bytes of an incomplete record; ignored", torn.bytes));
    torn.chain(health.damage.iter().map(|d| format!("the journal is damaged: {d}"))).collect()
}

/// `source` with the files it includes named as a run names them: from
/// the workflow's directory `dir`, not from the root of the file system.
fn relative_names(source: &Source, dir: &std::path::Path) -> Arc<Source> {
    let parts = source
        .parts
        .iter()
        .map(|part| {
            let name = std::path::Path::new(&part.source.name);
            let name = name.strip_prefix(dir).unwrap_or(name).display().to_string();
            Part { source: Source::new(name, part.source.text.clone()), ..part.clone() }
        })
        .collect();
    Source::with_parts(source.name.clone(), source.text.clone(), parts)
}

/// The allocations of `allocs.json`, if the run has one.
fn allocations(run: &RunView) -> Vec<AllocationSpan> {
    let Some(allocs) = &run.allocs else { return Vec::new() };
    allocs
        .allocations
        .iter()
        .map(|a| AllocationSpan {
            id: a.id,
            job_id: a.job_id.clone(),
            state: format!("{:?}", a.state).to_lowercase(),
            workers: a.workers,
            submitted_us: a.submitted_us,
            started_us: a.started_us,
            ended_us: a.ended_us,
            reason: a.reason.clone(),
        })
        .collect()
}

/// What one variant's attempts used.
#[derive(Debug, Default)]
struct Used {
    attempts: u64,
    max_cpus: f64,
    max_rss: u64,
}

/// "asked for 8 GiB, used at most 1.3 GiB; asked for 4 cpus, kept at most 1.2 busy".
fn variant_use(variant: u32, cpus: f64, memory: u64, used: &Used) -> VariantUse {
    let memory_text = match memory {
        0 => format!("asked for no memory, used at most {}", bytes(used.max_rss, BytesStyle::Trimmed)),
        asked => format!(
            "asked for {}, used at most {}",
            bytes(asked, BytesStyle::Trimmed),
            bytes(used.max_rss, BytesStyle::Trimmed)
        ),
    };
    let plural = if cpus == 1.0 { "" } else { "s" };
    let summary = format!("{memory_text}; asked for {cpus} cpu{plural}, kept at most {:.1} busy", used.max_cpus);
    VariantUse {
        variant,
        attempts: used.attempts,
        cpus,
        memory,
        max_cpus_used: (used.max_cpus * 100.0).round() / 100.0,
        max_rss: used.max_rss,
        summary,
    }
}

/// A task's numbers, one per ended attempt.
#[derive(Debug, Default)]
struct Samples {
    attempts: u64,
    wall: Vec<u64>,
    cpu: Vec<u64>,
    rss: Vec<u64>,
    usage: BTreeMap<u32, Used>,
}

/// The attempts of the journal: the timeline, samples per task.
struct Attempts {
    samples: Vec<Samples>,
    timeline: TimelineBuilder,
    /// The workers that started an attempt.
    workers: BTreeSet<u32>,
    /// Attempts started and not ended yet: when, and on which worker.
    open: HashMap<(TaskId, u32), (u64, u32)>,
    /// The longest attempts: wall time, instance, attempt, worker.
    slowest: BinaryHeap<Reverse<(u64, TaskId, u32, u32)>>,
    /// CPUs each group's first variant asks for, for attempts without metrics.
    cpus: Vec<f64>,
    /// The GPUs and bytes of memory each variant of each group asks for.
    asks: Vec<Vec<(f64, u64)>>,
}

impl Attempts {
    /// No attempt yet, of a run that spans `axis`.
    fn new(graph: &Graph, axis: (u64, u64)) -> Self {
        Attempts {
            samples: graph.groups.iter().map(|_| Samples::default()).collect(),
            timeline: TimelineBuilder::new(axis),
            workers: BTreeSet::new(),
            open: HashMap::new(),
            slowest: BinaryHeap::new(),
            cpus: graph.groups.iter().map(|g| g.variants.first().map_or(1.0, |v| v.cpus.as_f64())).collect(),
            asks: graph
                .groups
                .iter()
                .map(|g| g.variants.iter().map(|v| (v.gpus.as_f64(), v.memory)).collect())
                .collect(),
        }
    }

    /// Folds in the next record: a start opens an attempt, an end closes it.
    fn apply(&mut self, r: &JournalRecord) {
        if r.task.group.index() >= self.samples.len() {
            return;
        }
        let key = (r.task, r.attempt);
        let state = match &r.event {
            JournalEvent::Started { worker, .. } => {
                // A task sent ahead is recorded when sent and again when it starts.
                if self.open.insert(key, (r.time_us, *worker)).is_none() {
                    self.samples[r.task.group.index()].attempts += 1;
                }
                self.workers.insert(*worker);
                return;
            }
            // The wait before a retry is no time on a worker.
            JournalEvent::Cached { .. }
            | JournalEvent::RetryAt { .. }
            | JournalEvent::Skipped { .. }
            | JournalEvent::Untrusted { .. }
            | JournalEvent::Read { .. }
            | JournalEvent::CancelledRest { .. } => return,
            JournalEvent::Succeeded { .. } => "succeeded",
            JournalEvent::Failed { .. } => "failed",
            JournalEvent::Cancelled { .. } => "cancelled",
            JournalEvent::Lost { .. } => "lost",
        };
        if let Some((start, worker)) = self.open.remove(&key) {
            self.ended(key, worker, (start, r.time_us), state, r.metrics.as_deref());
        }
    }

    /// Attempts that never ended run until `end_us`.
    fn finish(&mut self, end_us: u64) {
        let mut unfinished: Vec<_> = std::mem::take(&mut self.open).into_iter().collect();
        unfinished.sort_unstable();
        for (key, (start, worker)) in unfinished {
            self.ended(key, worker, (start, end_us.max(start)), "running", None);
        }
    }

    /// One lane per worker that started an attempt, in id order, named
    /// after its host when `workers` knows it.
    fn lanes(&self, workers: &[WorkerInfo]) -> Vec<(u32, String)> {
        let hosts: HashMap<u32, &str> = workers.iter().map(|w| (w.id, w.hostname.as_str())).collect();
        self.workers
            .iter()
            .map(|&id| match hosts.get(&id) {
                Some(host) => (id, format!("{host} · worker {id}")),
                None => (id, format!("worker {id}")),
            })
            .collect()
    }

    /// Records one attempt that ended (or is cut at the run's end).
    fn ended(
        &mut self,
        (task, attempt): (TaskId, u32),
        worker: u32,
        (start_us, end_us): (u64, u64),
        state: &'static str,
        metrics: Option<&AttemptMetrics>,
    ) {
        let samples = &mut self.samples[task.group.index()];
        let (start_us, end_us, wall) = match metrics {
            Some(m) if m.usage.ended_us >= m.usage.started_us && m.usage.started_us > 0 => {
                (m.usage.started_us, m.usage.ended_us, m.usage.wall_us)
            }
            _ => (start_us, end_us, end_us - start_us),
        };
        let mut cpu_us = None;
        if state != "running" {
            samples.wall.push(wall);
            self.slowest.push(Reverse((wall, task, attempt, worker)));
            if self.slowest.len() > MAX_SLOWEST {
                self.slowest.pop();
            }
        }
        let mut cpus = self.cpus[task.group.index()];
        let variant = metrics.map_or(0, |m| m.variant as usize);
        let (mut gpus, mem_asked) = self.asks[task.group.index()].get(variant).copied().unwrap_or_default();
        if let Some(m) = metrics {
            gpus = m.gpus.len() as f64;
            let cpu = m.usage.user_us + m.usage.system_us;
            samples.cpu.push(cpu);
            samples.rss.push(m.usage.max_rss);
            cpu_us = Some(cpu);
            if !m.cpus.is_empty() {
                cpus = m.cpus.len() as f64;
            }
            let used = samples.usage.entry(m.variant).or_default();
            used.attempts += 1;
            used.max_rss = used.max_rss.max(m.usage.max_rss);
            used.max_cpus = used.max_cpus.max(cpu as f64 / wall.max(1) as f64);
        }
        let max_rss = metrics.map(|m| m.usage.max_rss);
        let span = Span { task, attempt, worker, start_us, end_us, cpu_us, cpus, gpus, mem_asked, max_rss, state };
        self.timeline.push(span);
    }
}
