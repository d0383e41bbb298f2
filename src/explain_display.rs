//! `flow explain`'s text: one instance with its details, or the instances
//! of a task counted by reason. It is written to any [`Write`] from
//! [`Explanation`]s, so it is snapshot-tested on made-up ones.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::Duration;

use flow_engine::explain::{
    Earlier, Explanation, QueueWait, Ran, Reason, ReasonKind, State, UpstreamInstance, UpstreamWait, WorkerRef,
};
use flow_engine::host::{UtcStyle, utc};
use flow_engine::resources::{LARGEST, finishes_in, no_variant_fits};
use flow_engine::units::{DurationStyle, duration, plural};

/// Instances shown one by one when a selector names several.
const SHOWN: usize = 10;

/// One instance: its headline, then its details indented.
pub fn instance(out: &mut impl Write, text: &Text, ex: &Explanation) -> io::Result<()> {
    writeln!(out, "{}: {}", ex.label, text.headline(ex))?;
    text.details(ex).iter().try_for_each(|line| writeln!(out, "  {line}"))
}

/// Several instances of a task under `header`: counted by reason, each count
/// with up to [`SHOWN`] instances in all as examples.
pub fn summary(
    out: &mut impl Write,
    explanations: impl IntoIterator<Item = Explanation>,
    text: &Text,
    header: &str,
) -> io::Result<()> {
    // Per kind: how many, and enough examples to fill the list whatever the mix.
    let mut kinds: BTreeMap<(u8, ReasonKind), (u64, Vec<Explanation>)> = BTreeMap::new();
    for ex in explanations {
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
        ReasonKind::Retrying => (5, "failed, waiting to retry", false),
        ReasonKind::Running => (6, "running", false),
        ReasonKind::Failed => (7, "failed", false),
        ReasonKind::Cancelled => (8, "cancelled", false),
        ReasonKind::Lost => (9, "lost with their worker", false),
        ReasonKind::NotRun => (10, "never finished (the run stopped)", false),
        ReasonKind::Succeeded => (11, "succeeded", false),
        ReasonKind::Cached => (12, "unchanged since an earlier run", false),
        ReasonKind::Skipped => (13, "skipped by a condition", false),
    }
}

/// What explanations are rendered with, beyond themselves.
pub struct Text {
    /// The time the run was read at (µs since the Unix epoch).
    pub now_us: u64,
    /// The access file of a run that takes remote workers, relative to the current directory.
    pub access: Option<String>,
    /// For one instance the run skipped as unchanged: the run that did its work.
    pub origin: Option<String>,
}

impl Text {
    /// One line: where the instance stands and the main reason.
    pub fn headline(&self, ex: &Explanation) -> String {
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
            Reason::TimeRequest { seconds, longest_left_s, queue_worker_s } => {
                let asked = duration(seconds * 1_000_000, DurationStyle::Hundredths);
                match (longest_left_s, queue_worker_s) {
                    (Some(left), None) => format!(
                        "its time request ({asked}) does not fit in what any worker that fits has left (at most {})",
                        duration(left * 1_000_000, DurationStyle::Hundredths)
                    ),
                    (Some(left), Some(limit)) => {
                        let fits = finishes_in(Some(Duration::from_secs(*seconds)), Some(Duration::from_secs(*limit)));
                        let later = if fits { "long enough for it" } else { "not long enough either" };
                        format!(
                            "its time request ({asked}) does not fit in what any worker that fits has left (at most {}); \
                             a new worker of the queue gets {}, {later}",
                            duration(left * 1_000_000, DurationStyle::Hundredths),
                            duration(limit * 1_000_000, DurationStyle::Hundredths)
                        )
                    }
                    (None, Some(limit)) => format!(
                        "its time request ({asked}) does not fit in the {} a worker of the queue gets \
                         (its time_limit less a margin for starting and stopping)",
                        duration(limit * 1_000_000, DurationStyle::Hundredths)
                    ),
                    (None, None) => format!("its time request ({asked}) does not fit in what any worker has left"),
                }
            }
            Reason::NoWorkers { queue: None } => "waiting for a worker: none is connected".to_owned(),
            Reason::NoWorkers { queue: Some(queue) } => format!("waiting for a worker: {}", self.queue(queue)),
            Reason::Ready { running, workers, busy, nodes } => {
                let wait = if *nodes > 1 { format!("{nodes} idle workers") } else { "a free slot".to_owned() };
                let (running, workers) = (plural(*running, "task"), plural(*workers as u64, "worker"));
                format!("ready, waiting for {wait}: {running} running, {busy} of {workers} busy")
            }
            Reason::Running { attempt, ran } => {
                let since = ran
                    .started_us
                    .map(|s| format!(" for {}", duration(self.now_us.saturating_sub(s), DurationStyle::Hundredths)));
                format!("running{}{}{}", on(ran.worker.as_ref()), since.unwrap_or_default(), attempt_note(*attempt))
            }
            Reason::Retrying { attempt, attempts, until_us } => {
                let wait = until_us.saturating_sub(self.now_us);
                format!(
                    "retries at {}, in {}, attempt {} of {attempts}",
                    utc(*until_us, UtcStyle::Readable),
                    duration(wait, DurationStyle::Whole),
                    attempt + 1
                )
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
                let tries = match *retries > 0 {
                    true => format!(", after {}", plural(u64::from(*attempt) + 1, "attempt")),
                    false => String::new(),
                };
                format!("failed ({why}){}{tries}{}", took("after", ran), ended(ran.ended_us))
            }
            Reason::Cancelled { message, ended_us } => {
                let at = ended_us.map(|us| format!(" at {}", utc(us, UtcStyle::Readable))).unwrap_or_default();
                format!("cancelled{at}: {}", message.as_deref().unwrap_or("no reason recorded"))
            }
            Reason::Skipped { message, ended_us } => {
                let at = ended_us.map(|us| format!(" at {}", utc(us, UtcStyle::Readable))).unwrap_or_default();
                format!("skipped{at}: {}", message.as_deref().unwrap_or("no reason recorded"))
            }
            Reason::Lost { ran, .. } => {
                format!("lost{}: its worker went away and the run ended before it ran again", on(ran.worker.as_ref()))
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
                match (ran.started_us, ran.queue_wait_us) {
                    (Some(started), Some(wait)) => lines.push(format!(
                        "started at {}, {} after it was ready",
                        utc(started, UtcStyle::Readable),
                        duration(wait, DurationStyle::Hundredths)
                    )),
                    (Some(started), None) => lines.push(format!("started at {}", utc(started, UtcStyle::Readable))),
                    _ => {}
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
            return format!("none is connected and the {} queue is paused: {paused}", q.manager.name());
        }
        let mut parts = Vec::new();
        if !q.queued.is_empty() {
            let jobs: Vec<String> = q
                .queued
                .iter()
                .take(3)
                .map(|a| {
                    format!(
                        "job {} for {}",
                        a.job_id,
                        duration(self.now_us.saturating_sub(a.submitted_us), DurationStyle::Hundredths)
                    )
                })
                .collect();
            let more = q.queued.len().saturating_sub(3);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            let n = q.queued.len();
            let noun = if n == 1 { "allocation is" } else { "allocations are" };
            parts.push(format!("{n} {noun} queued in {}: {}{more}", q.manager.name(), jobs.join(", ")));
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
            return format!("none is connected; {} allocations: {submitted}", q.manager.name());
        }
        format!("none is connected; {}", parts.join("; "))
    }
}

/// ` in 1.25s on worker 0 (local)` (`word` is `in` or `after`).
fn took(word: &str, ran: &Ran) -> String {
    let time =
        ran.duration_us.map(|d| format!(" {word} {}", duration(d, DurationStyle::Hundredths))).unwrap_or_default();
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
        State::Running => format!("running{worker}"),
        State::Failed => format!("failed ({why})"),
        State::Retrying => format!("to run again after {why}"),
        State::Cancelled => format!("cancelled ({why})"),
        State::Lost => format!("to run again, its worker{worker} lost"),
        State::Waiting | State::NotRun => "not started".to_owned(),
        // Done: an upstream instance that has not succeeded is never one of these.
        State::Succeeded | State::Cached | State::Skipped => u.state.as_str().to_owned(),
    }
}

/// `attempt 1 failed (exit code 1); 1 retry left`.
fn earlier_note(e: &Earlier) -> String {
    let attempt = e.attempt;
    match e.retries_left {
        Some(left) => {
            let why = e.message.clone().unwrap_or_else(|| exit(e.exit_code, e.signal));
            let left = plural(u64::from(left), "retry");
            format!("attempt {attempt} failed ({why}); it runs again, {left} left after that")
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
    let about: Vec<&str> = w.host.iter().chain(&w.allocation).map(String::as_str).collect();
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
    use flow_engine::explain::{QueuedAllocation, State};
    use flow_engine::ir::Amount;
    use flow_engine::resources::Shortfall;

    use super::*;

    /// Issue 13: `flow explain` listed the variants of a task no worker
    /// fits in its own words; it now uses the scheduler's.
    #[test]
    fn a_task_no_worker_fits_is_worded_as_the_scheduler_words_it() {
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
        let w = |host: Option<&str>, allocation: Option<&str>| WorkerRef {
            id: 2,
            host: host.map(str::to_owned),
            allocation: allocation.map(str::to_owned),
        };
        assert_eq!(on(None), "");
        assert_eq!(on(Some(&w(None, None))), " on worker 2");
        assert_eq!(on(Some(&w(Some("node17"), None))), " on worker 2 (node17)");
        assert_eq!(on(Some(&w(Some("node17"), Some("4711")))), " on worker 2 (node17, job 4711)");
    }

    /// 2026-11-25 01:02:03 UTC.
    const NOW: u64 = 1_795_568_523_000_000;

    fn explanation(label: &str, reason: Reason) -> Explanation {
        let task = label.split('[').next().unwrap_or(label).to_owned();
        Explanation {
            task,
            index: 0,
            label: label.into(),
            state: reason.state(),
            reason,
            earlier: None,
            queue_notes: Vec::new(),
        }
    }

    fn ran(worker: Option<WorkerRef>, seconds: u64) -> Ran {
        Ran {
            worker,
            started_us: Some(NOW - seconds * 1_000_000),
            queue_wait_us: (seconds > 60).then_some(1_500_000),
            ended_us: Some(NOW),
            duration_us: Some(seconds * 1_000_000),
        }
    }

    fn node17() -> Option<WorkerRef> {
        Some(WorkerRef { id: 2, host: Some("node17".into()), allocation: Some("4711".into()) })
    }

    fn upstream(label: &str, state: State, worker: Option<u32>) -> UpstreamInstance {
        let exit_code = (state == State::Failed).then_some(1);
        UpstreamInstance { label: label.into(), state, worker, exit_code, signal: None, message: None }
    }

    /// One instance of every kind, each as `flow explain 'task[i]'` shows it.
    #[test]
    fn one_instance_of_each_kind_in_detail() {
        let dock = UpstreamWait {
            task: "dock".into(),
            total: 10,
            not_done: 3,
            failed: 1,
            examples: vec![upstream("dock[7]", State::Failed, Some(1)), upstream("dock[4]", State::Running, Some(2))],
        };
        let prep = UpstreamWait {
            task: "prep".into(),
            total: 1,
            not_done: 1,
            failed: 0,
            examples: vec![upstream("prep", State::Waiting, None)],
        };
        let queue = QueueWait {
            manager: flow_engine::profile::Manager::Slurm,
            paused: None,
            queued: vec![QueuedAllocation { job_id: "4712".into(), submitted_us: NOW - 90_000_000 }],
            starting: 1,
            submitted: 3,
            last_failure: Some("node failure".into()),
        };
        let mut retried = explanation("score[5]", Reason::Ready { running: 4, workers: 2, busy: 2, nodes: 1 });
        retried.earlier = Some(Earlier {
            attempt: 0,
            status: State::Failed,
            exit_code: Some(2),
            signal: None,
            message: None,
            worker: Some(1),
            retries_left: Some(1),
        });
        let mut big = explanation(
            "big",
            Reason::Resources {
                nodes: 1,
                fitting: 0,
                workers: 2,
                variants: vec![Shortfall::Cpus { needs: Amount::whole(8), largest: Amount::whole(4) }],
            },
        );
        big.queue_notes.push("task `big` needs 8 cpus, the queue's workers have 4".into());
        let explanations = [
            explanation(
                "score[3]",
                Reason::Failed {
                    attempt: 1,
                    retries: 1,
                    exit_code: Some(1),
                    signal: None,
                    message: None,
                    ran: ran(node17(), 2),
                },
            ),
            explanation("report", Reason::Dependencies { upstream: vec![dock, prep], doomed: true }),
            retried,
            big,
            explanation(
                "long",
                Reason::TimeRequest { seconds: 7200, longest_left_s: Some(1800), queue_worker_s: Some(3600) },
            ),
            explanation("score[6]", Reason::NoWorkers { queue: None }),
            explanation("score[7]", Reason::NoWorkers { queue: Some(queue) }),
            explanation("score[8]", Reason::Running { attempt: 1, ran: Ran { ended_us: None, ..ran(node17(), 65) } }),
            explanation("score[1]", Reason::Succeeded { attempt: 0, ran: ran(node17(), 1) }),
            explanation("prep", Reason::Cached { ran: ran(None, 0) }),
            explanation("merge", Reason::Cancelled { message: Some("score[3] failed".into()), ended_us: Some(NOW) }),
            explanation("score[9]", Reason::Lost { attempt: 0, ran: ran(node17(), 3) }),
            explanation("score[10]", Reason::NotRun { running: Some(ran(None, 4)) }),
            explanation("score[11]", Reason::NotRun { running: None }),
        ];
        let text = Text {
            now_us: NOW,
            access: Some(".flow/runs/20261125-010203-004/access.json".into()),
            origin: Some("20261124-235959-001".into()),
        };
        let mut out = Vec::new();
        for ex in &explanations {
            instance(&mut out, &text, ex).unwrap();
        }
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }

    /// A task's instances counted by reason: the same words once for all,
    /// different ones as up to ten examples in all.
    #[test]
    fn a_task_summarised_by_reason() {
        let prep = UpstreamWait {
            task: "prep".into(),
            total: 1,
            not_done: 1,
            failed: 0,
            examples: vec![upstream("prep", State::Running, Some(0))],
        };
        let mut explanations = Vec::new();
        for i in 0..12 {
            explanations
                .push(explanation(&format!("score[{i}]"), Reason::Succeeded { attempt: 0, ran: ran(node17(), i) }));
        }
        for i in 12..16 {
            let reason = Reason::Failed {
                attempt: 0,
                retries: 0,
                exit_code: Some(i),
                signal: None,
                message: None,
                ran: ran(None, 1),
            };
            explanations.push(explanation(&format!("score[{i}]"), reason));
        }
        for i in 16..40 {
            explanations.push(explanation(
                &format!("score[{i}]"),
                Reason::Dependencies { upstream: vec![prep.clone()], doomed: false },
            ));
        }
        let text = Text { now_us: NOW, access: None, origin: None };
        let mut out = Vec::new();
        summary(&mut out, explanations, &text, "score: 40 instances in run 20261125-010203-004 (running)").unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }
}
