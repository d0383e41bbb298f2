//! `flow explain`: why a task instance is still waiting, or what happened
//! to it — one instance in detail, or every instance of a task summarised.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use flow_engine::host::{UtcStyle, utc};
use flow_engine::ir::Selector;
use flow_engine::ir::{Domain, Graph, TaskId};
use flow_engine::log::JournalStatus;
use flow_engine::resources::{LARGEST, no_variant_fits};
use flow_engine::runtime::explain::{
    Earlier, Explainer, Explanation, QueueWait, Ran, Reason, ReasonKind, RunSnapshot, State, UpstreamInstance,
    UpstreamState, UpstreamWait, WorkerRef,
};
use flow_engine::runtime::resume::origin;
use flow_engine::runtime::run_dir::{RunDir, locate};

use crate::log_cmd::format_duration;

/// Instances shown one by one when a selector names several.
const SHOWN: usize = 10;

/// `flow explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The task instance, `score[3]`, or a whole task, `score`.
    #[arg(value_name = "SELECTOR")]
    pub selector: String,
    /// The workflow whose runs to read [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
    /// The run: its id or a unique prefix of it [default: the latest].
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// One JSON object per instance, one per line: the reason's kind and details.
    #[arg(long)]
    pub json: bool,
}

/// Runs `flow explain`; the error is a message for `error: …`.
pub fn run(args: &ExplainArgs) -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let dir = locate(args.workflow.as_deref(), args.run.as_deref(), &cwd)?;
    let run = RunSnapshot::read(&dir, flow_engine::host::now_us()).map_err(|e| e.to_string())?;
    if let Some(text) = never_known(&run, &args.selector) {
        println!("{text}");
        return Ok(());
    }
    let tasks = select(&run.graph, &args.selector, &dir.id)?;
    if let Some(torn) = run.torn.filter(|_| !run.live) {
        eprintln!("warning: the journal ends with {} bytes of an incomplete record; ignored", torn.bytes);
    }
    let explainer = Explainer::new(&run);
    let origin = match tasks[..] {
        [task] => run.journal.get(task).filter(|e| e.status == JournalStatus::Cached).and_then(|e| {
            let state = dir.path.parent().and_then(Path::parent)?;
            let (from, _) = origin(state, &dir.id, &run.graph.label(task), e.fingerprint.as_ref()?)?;
            Some(from.id)
        }),
        _ => None,
    };
    let text = Text { now_us: run.now_us, access: access_hint(&dir, &cwd), origin };
    let mut out = BufWriter::new(io::stdout().lock());
    let result = if args.json {
        tasks.iter().try_for_each(|&task| {
            let ex = explainer.explain(task);
            crate::json::write_line(&mut out, &Explained { message: text.headline(&ex), explanation: &ex })
        })
    } else if let [task] = tasks[..] {
        let ex = explainer.explain(task);
        writeln!(out, "{}: {}", ex.label, text.headline(&ex))
            .and_then(|()| text.details(&ex).iter().try_for_each(|line| writeln!(out, "  {line}")))
    } else {
        let state = if run.live {
            "running"
        } else if dir.is_finished() {
            "finished"
        } else {
            "stopped"
        };
        let name = &run.graph.group(tasks[0].group).name;
        let header = format!("{name}: {} instances in run {} ({state})", tasks.len(), dir.id);
        summary(&mut out, &explainer, &tasks, &text, &header)
    };
    match result.and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}

/// A line of `flow explain --json`: the explanation and its headline.
#[derive(serde::Serialize)]
struct Explained<'a> {
    #[serde(flatten)]
    explanation: &'a Explanation,
    message: String,
}

/// For a dynamic stage whose instances this run never learned: why, from
/// where its writers got to.
fn never_known(run: &RunSnapshot, selector: &str) -> Option<String> {
    let graph = &run.graph;
    let group = graph.find(Selector::parse(selector).ok()?.name.as_str())?;
    let writers = graph.waits_for(group)?;
    let Domain::Deferred { expansion } = graph.base_domain(group) else { return None };
    let mut states = Vec::new();
    for w in writers {
        let count = graph.group(w).count;
        let of = |status: JournalStatus| {
            (0..count).filter(|&i| run.journal.get(TaskId::new(w, i)).is_some_and(|e| e.status == status)).count()
        };
        let state = match (of(JournalStatus::Failed), of(JournalStatus::Cancelled)) {
            (0, 0) if run.live => "has not finished".to_owned(),
            (0, 0) => "did not finish".to_owned(),
            (0, _) => "was cancelled".to_owned(),
            _ => "failed".to_owned(),
        };
        states.push(format!("`{}` {state}", graph.group(w).name));
    }
    let name = &graph.group(group).name;
    let file = expansion.file();
    let how = if run.live { "not known yet" } else { "never known" };
    Some(format!(
        "{name}: its instances are {how}: it expands over `{file}` once its writers are done, and {}",
        states.join(", ")
    ))
}

/// The instances `text` names, in order.
fn select(graph: &Graph, text: &str, run: &str) -> Result<Vec<TaskId>, String> {
    let selected = Selector::parse(text)?.resolve(graph).map_err(|e| format!("`{text}` in run {run}: {e}"))?;
    let count = graph.group(selected.group).count;
    match selected.positions {
        None if count == 0 => Err(format!("`{text}` has no instances")),
        None => Ok((0..count).map(|i| TaskId::new(selected.group, i)).collect()),
        Some(positions) => Ok(positions.into_iter().map(|i| TaskId::new(selected.group, i)).collect()),
    }
}

/// How to start a worker for a run that listens for them, if it does.
fn access_hint(dir: &RunDir, cwd: &Path) -> Option<String> {
    let access = dir.access();
    access.exists().then(|| access.strip_prefix(cwd).unwrap_or(&access).display().to_string())
}

/// Every instance counted by reason, each count with up to [`SHOWN`]
/// instances in all as examples.
fn summary(out: &mut impl Write, explainer: &Explainer, tasks: &[TaskId], text: &Text, header: &str) -> io::Result<()> {
    // Per kind: how many, and enough examples to fill the list whatever the mix.
    let mut kinds: BTreeMap<(u8, ReasonKind), (u64, Vec<Explanation>)> = BTreeMap::new();
    for &task in tasks {
        let ex = explainer.explain(task);
        let kind = ex.reason.kind();
        let (n, kept) = kinds.entry((heading(kind).0, kind)).or_default();
        *n += 1;
        if kept.len() < SHOWN {
            kept.push(ex);
        }
    }
    // One example of each kind first, then a second of each, and so on.
    let mut budget: BTreeMap<(u8, ReasonKind), usize> = BTreeMap::new();
    let mut left = SHOWN;
    for round in 0..SHOWN {
        for (&rank, (_, kept)) in &kinds {
            if left > 0 && round < kept.len() {
                *budget.entry(rank).or_default() += 1;
                left -= 1;
            }
        }
    }
    writeln!(out, "{header}")?;
    let width = kinds.values().map(|(n, _)| n.to_string().len()).max().unwrap_or(1);
    let mut omitted = false;
    for (key, (n, kept)) in &kinds {
        let (_, label, same_for_task) = heading(key.1);
        writeln!(out, "  {n:>width$} {label}")?;
        let headlines: Vec<String> = kept.iter().map(|ex| text.headline(ex)).collect();
        // A reason of the task (or the same words for every instance): one line for all.
        let same = headlines.iter().all(|h| *h == headlines[0]);
        if kept.len() > 1 && same && (kept.len() as u64 == *n || same_for_task) {
            let labels: Vec<&str> = kept.iter().take(3).map(|ex| ex.label.as_str()).collect();
            let more = n - labels.len() as u64;
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            writeln!(out, "  {:width$} {}{more}: {}", "", labels.join(", "), headlines[0])?;
            continue;
        }
        let shown = budget.get(key).copied().unwrap_or(0);
        for (ex, headline) in kept.iter().zip(&headlines).take(shown) {
            writeln!(out, "  {:width$} {}: {headline}", "", ex.label)?;
        }
        if *n > shown as u64 {
            writeln!(out, "  {:width$} … and {} more", "", n - shown as u64)?;
            omitted = true;
        }
    }
    if omitted {
        let name = &kinds.values().flat_map(|(_, kept)| kept).next().map_or("TASK", |ex| ex.task.as_str());
        writeln!(out, "`flow explain '{name}[INDEX]'` explains one instance in detail, `--json` every one")?;
    }
    Ok(())
}

/// Where summaries list a reason kind, its label, and whether the reason is
/// the same for every instance of a task.
fn heading(kind: ReasonKind) -> (u8, &'static str, bool) {
    match kind {
        ReasonKind::Dependencies => (0, "waiting for dependencies", false),
        ReasonKind::Resources => (1, "waiting: no worker fits", true),
        ReasonKind::TimeRequest => (2, "waiting: time request longer than workers last", true),
        ReasonKind::NoWorkers => (3, "waiting for a worker", true),
        ReasonKind::Ready => (4, "ready, waiting for a free slot", true),
        ReasonKind::Running => (5, "running", false),
        ReasonKind::Failed => (6, "failed", false),
        ReasonKind::Cancelled => (7, "cancelled", false),
        ReasonKind::Lost => (8, "lost with their worker", false),
        ReasonKind::NotRun => (9, "never finished (the run stopped)", false),
        ReasonKind::Succeeded => (10, "succeeded", false),
        ReasonKind::Cached => (11, "unchanged since an earlier run", false),
    }
}

/// Renders explanations as text.
struct Text {
    now_us: u64,
    /// The access file of a run that takes remote workers, relative to the current directory.
    access: Option<String>,
    /// For one instance the run skipped as unchanged: the run that did its work.
    origin: Option<String>,
}

impl Text {
    /// One line: where the instance stands and the main reason.
    fn headline(&self, ex: &Explanation) -> String {
        match &ex.reason {
            Reason::Dependencies { upstream, doomed } => {
                let each: Vec<String> = upstream.iter().map(|u| self.upstream(u)).collect();
                let mut line = format!("waiting for {}", each.join("; and for "));
                if *doomed {
                    line.push_str(" — one failed, so it will be cancelled");
                }
                line
            }
            Reason::Resources { nodes, fitting, workers, variants } => match variants.as_slice() {
                [] => format!("no worker can run it: needs {nodes} workers at once, {fitting} of the {workers} fit"),
                shortfalls => format!("no worker can run it: {}", no_variant_fits(shortfalls, LARGEST)),
            },
            Reason::TimeRequest { seconds, longest_left_s, queue_limit_s } => {
                let asked = format_duration(seconds * 1_000_000);
                match (longest_left_s, queue_limit_s) {
                    (Some(left), None) => format!(
                        "its time request ({asked}) is longer than any worker that fits has left (at most {})",
                        format_duration(left * 1_000_000)
                    ),
                    (Some(left), Some(limit)) => {
                        let later = if limit >= seconds { "long enough for it" } else { "not long enough either" };
                        format!(
                            "its time request ({asked}) is longer than any worker that fits has left (at most {}); \
                             allocations of the queue last {}, {later}",
                            format_duration(left * 1_000_000),
                            format_duration(limit * 1_000_000)
                        )
                    }
                    (None, Some(limit)) => format!(
                        "its time request ({asked}) is longer than allocations of the queue last ({})",
                        format_duration(limit * 1_000_000)
                    ),
                    (None, None) => format!("its time request ({asked}) is longer than any worker has left"),
                }
            }
            Reason::NoWorkers { queue: None } => "waiting for a worker: none is connected".to_owned(),
            Reason::NoWorkers { queue: Some(queue) } => format!("waiting for a worker: {}", self.queue(queue)),
            Reason::Ready { running, workers, busy, nodes } => {
                let wait = if *nodes > 1 { format!("{nodes} idle workers") } else { "a free slot".to_owned() };
                let tasks = if *running == 1 { "task" } else { "tasks" };
                let noun = if *workers == 1 { "worker" } else { "workers" };
                format!("ready, waiting for {wait}: {running} {tasks} running, {busy} of {workers} {noun} busy")
            }
            Reason::Running { attempt, ran } => {
                let since = ran.started_us.map(|s| format!(" for {}", format_duration(self.now_us.saturating_sub(s))));
                format!("running{}{}{}", on(ran.worker.as_ref()), since.unwrap_or_default(), attempt_note(*attempt))
            }
            Reason::Succeeded { attempt, ran } => {
                format!("succeeded{}{}{}", took("in", ran), attempt_note(*attempt), ended(ran.ended_us))
            }
            Reason::Cached { ran } => {
                let since = self.origin.as_ref().map_or_else(|| "an earlier run".to_owned(), |id| format!("run {id}"));
                format!("unchanged since {since}, so skipped{}{}", on(ran.worker.as_ref()), ended(ran.ended_us))
            }
            Reason::Failed { attempt, retries, exit_code, signal, message, ran } => {
                let why = message.clone().unwrap_or_else(|| exit(*exit_code, *signal));
                let tries = if *retries > 0 { format!(", after {} attempts", attempt + 1) } else { String::new() };
                format!("failed ({why}){}{tries}{}", took("after", ran), ended(ran.ended_us))
            }
            Reason::Cancelled { message, ended_us } => {
                let at = ended_us.map(|us| format!(" at {}", utc(us, UtcStyle::Readable))).unwrap_or_default();
                format!("cancelled{at}: {}", message.as_deref().unwrap_or("no reason recorded"))
            }
            Reason::Lost { ran, .. } => {
                format!("lost: its worker{} went away and the run ended before it ran again", on(ran.worker.as_ref()))
            }
            Reason::NotRun { running: Some(ran) } => {
                format!("was running{} when the run stopped; how it ended is unknown", on(ran.worker.as_ref()))
            }
            Reason::NotRun { running: None } => "never ran: the run stopped before it could".to_owned(),
        }
    }

    /// Lines under the headline of a single instance.
    fn details(&self, ex: &Explanation) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(earlier) = &ex.earlier {
            lines.push(earlier_note(earlier));
        }
        match &ex.reason {
            Reason::Dependencies { upstream, .. } => {
                if let Some(first) = upstream.iter().flat_map(|u| &u.examples).next() {
                    lines.push(format!("`flow explain {}` says why that one has not finished", quoted(&first.label)));
                }
            }
            Reason::NoWorkers { queue: None } => match &self.access {
                Some(access) => lines.push(format!("start one: flow worker --access {access}")),
                None => lines.push("the run takes no remote workers (it was started without --listen)".to_owned()),
            },
            Reason::NoWorkers { queue: Some(queue) } => {
                if let Some(failure) = &queue.last_failure {
                    lines.push(format!("the last allocation failed: {failure}"));
                }
            }
            Reason::Running { ran, .. } | Reason::Succeeded { ran, .. } | Reason::Failed { ran, .. } => {
                if let Some(started) = ran.started_us {
                    lines.push(format!("started at {}", utc(started, UtcStyle::Readable)));
                }
                if ex.state == State::Failed {
                    lines.push(format!("its output: flow log cat {}", quoted(&ex.label)));
                }
            }
            _ => {}
        }
        lines.extend(ex.queue_notes.iter().map(|note| format!("the queue reports: {note}")));
        lines
    }

    /// `3 of 10 `dock` instances: dock[7] failed (exit code 1), dock[4] running on worker 2, and 1 more`,
    /// or `prep (running on worker 0)` for a single upstream instance.
    fn upstream(&self, u: &UpstreamWait) -> String {
        if let ([only], 1) = (u.examples.as_slice(), u.total) {
            return format!("{} ({})", only.label, upstream_state(only));
        }
        let each: Vec<String> = u.examples.iter().map(|e| format!("{} {}", e.label, upstream_state(e))).collect();
        let more = u.not_done.saturating_sub(u.examples.len() as u64);
        let more = if more > 0 { format!(", and {more} more") } else { String::new() };
        format!("{} of {} `{}` instances: {}{more}", u.not_done, u.total, u.task, each.join(", "))
    }

    /// What the queue is doing about workers.
    fn queue(&self, q: &QueueWait) -> String {
        if let Some(paused) = &q.paused {
            return format!("none is connected and the {} queue is paused: {paused}", q.manager);
        }
        let mut parts = Vec::new();
        if !q.queued.is_empty() {
            let jobs: Vec<String> = q
                .queued
                .iter()
                .take(3)
                .map(|a| {
                    format!("job {} for {}", a.job_id, format_duration(self.now_us.saturating_sub(a.submitted_us)))
                })
                .collect();
            let more = q.queued.len().saturating_sub(3);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            let n = q.queued.len();
            let noun = if n == 1 { "allocation is" } else { "allocations are" };
            parts.push(format!("{n} {noun} queued in {}: {}{more}", q.manager, jobs.join(", ")));
        }
        if q.starting > 0 {
            let noun = if q.starting == 1 { "allocation has" } else { "allocations have" };
            parts.push(format!("{} {noun} started, its workers not connected yet", q.starting));
        }
        if parts.is_empty() {
            let submitted = if q.submitted == 0 {
                "none submitted yet".to_owned()
            } else {
                format!("none active of the {} submitted", q.submitted)
            };
            return format!("none is connected; {} allocations: {submitted}", q.manager);
        }
        format!("none is connected; {}", parts.join("; "))
    }
}

/// ` in 1.25s on worker 0 (local)` (`word` is `in` or `after`).
fn took(word: &str, ran: &Ran) -> String {
    let time = ran.duration_us.map(|d| format!(" {word} {}", format_duration(d))).unwrap_or_default();
    format!("{time}{}", on(ran.worker.as_ref()))
}

/// `, ended 2026-11-23 16:09:29 UTC`.
fn ended(us: Option<u64>) -> String {
    us.map(|us| format!(", ended {}", utc(us, UtcStyle::Readable))).unwrap_or_default()
}

/// `failed (exit code 1)`, `running on worker 2`, `waiting`.
fn upstream_state(u: &UpstreamInstance) -> String {
    let worker = u.worker.map(|w| format!(" on worker {w}")).unwrap_or_default();
    let why = u.message.clone().unwrap_or_else(|| exit(u.exit_code, u.signal));
    match u.state {
        UpstreamState::Running => format!("running{worker}"),
        UpstreamState::Failed => format!("failed ({why})"),
        UpstreamState::Retrying => format!("to run again after {why}"),
        UpstreamState::Cancelled => format!("cancelled ({why})"),
        UpstreamState::Lost => format!("to run again, its worker{worker} lost"),
        UpstreamState::Waiting => "not started".to_owned(),
    }
}

/// `attempt 1 failed (exit code 1); 1 retry left`.
fn earlier_note(e: &Earlier) -> String {
    let attempt = e.attempt;
    match e.retries_left {
        Some(left) => {
            let why = e.message.clone().unwrap_or_else(|| exit(e.exit_code, e.signal));
            let noun = if left == 1 { "retry" } else { "retries" };
            format!("attempt {attempt} failed ({why}); it runs again, {left} {noun} left after that")
        }
        None => {
            let worker = e.worker.map(|w| format!(" {w}")).unwrap_or_default();
            format!("attempt {attempt} was lost with its worker{worker}; it runs again")
        }
    }
}

/// ` on worker 2 (node17, job 4711)`.
fn on(worker: Option<&WorkerRef>) -> String {
    let Some(w) = worker else { return String::new() };
    let about: Vec<&str> = w.hostname.iter().chain(&w.allocation).map(String::as_str).collect();
    match (about.as_slice(), &w.allocation) {
        ([], _) => format!(" on worker {}", w.id),
        ([host, job], Some(_)) => format!(" on worker {} ({host}, job {job})", w.id),
        _ => format!(" on worker {} ({})", w.id, about.join(", ")),
    }
}

/// A label as a shell word: `'score[3]'` (brackets are glob characters), `prep`.
fn quoted(label: &str) -> String {
    if label.contains('[') { format!("'{label}'") } else { label.to_owned() }
}

/// `, attempt 1` for attempts after the first (numbered from 0, as `FLOW_INSTANCE` and the log do).
fn attempt_note(attempt: u32) -> String {
    if attempt > 0 { format!(", attempt {attempt}") } else { String::new() }
}

/// `exit code 1`, `signal 9`.
fn exit(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "no exit code".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 13: `flow explain` listed the variants of a task no worker
    /// fits in its own words; it now uses the scheduler's.
    #[test]
    fn a_task_no_worker_fits_is_worded_as_the_scheduler_words_it() {
        use flow_engine::ir::Amount;
        use flow_engine::resources::Shortfall;
        let explain = |variants: Vec<Shortfall>| Explanation {
            task: "big".into(),
            index: 0,
            label: "big".into(),
            state: State::Waiting,
            reason: Reason::Resources { nodes: 1, fitting: 0, workers: 1, variants },
            earlier: None,
            queue_notes: Vec::new(),
        };
        let text = Text { now_us: 0, access: None, origin: None };
        let cpus = Shortfall::Cpus { needs: Amount::whole(8), largest: Amount::whole(4) };
        let gpus = Shortfall::Gpus { needs: Amount::whole(1), largest: Amount::ZERO };
        assert_eq!(
            text.headline(&explain(vec![cpus.clone()])),
            "no worker can run it: needs 8 cpus, the largest worker has 4"
        );
        assert_eq!(
            text.headline(&explain(vec![gpus, cpus])),
            "no worker can run it: no variant fits: variant 1 needs 1 gpu, the largest worker has 0; \
             variant 2 needs 8 cpus, the largest worker has 4"
        );
    }

    #[test]
    fn workers_are_named_with_what_is_known() {
        let w = |hostname: Option<&str>, allocation: Option<&str>| WorkerRef {
            id: 2,
            hostname: hostname.map(str::to_owned),
            allocation: allocation.map(str::to_owned),
        };
        assert_eq!(on(None), "");
        assert_eq!(on(Some(&w(None, None))), " on worker 2");
        assert_eq!(on(Some(&w(Some("node17"), None))), " on worker 2 (node17)");
        assert_eq!(on(Some(&w(Some("node17"), Some("4711")))), " on worker 2 (node17, job 4711)");
    }
}
