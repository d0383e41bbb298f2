//! What `flow run` shows of a run's events: a progress bar on a terminal,
//! plain lines otherwise, NDJSON with `--json`. Apart from running: it
//! renders events into the writers it is given, so it is tested on
//! synthetic events.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use flow_engine::host::{UtcStyle, utc};
use flow_engine::ir::Graph;
use flow_engine::runtime::{AllocState, Event, MoveReason, Status, Summary};
use flow_engine::shell_word::shell_word;
use flow_engine::units::{DurationStyle, duration};
use indicatif::{ProgressBar, ProgressStyle};

use crate::json::{self, RunEvent};

/// How events are shown.
pub enum Display {
    /// NDJSON in the shared vocabulary; the graph names the instances.
    Json(Box<Graph>),
    Bar {
        bar: ProgressBar,
        running: u64,
        failed: u64,
    },
    Plain,
}

impl Display {
    /// NDJSON when given the run's graph, else a bar on a terminal, else plain lines.
    pub fn new(json: Option<Graph>) -> Self {
        if let Some(graph) = json {
            Display::Json(Box::new(graph))
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} · {msg} · {per_sec} · ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            Display::Bar { bar, running: 0, failed: 0 }
        } else {
            Display::Plain
        }
    }

    /// Shows one event: JSON lines go to `out`, text to `err`.
    pub fn show(&mut self, event: &Event, out: &mut impl Write, err: &mut impl Write) {
        match self {
            Display::Json(graph) => {
                let _ = crate::json::write_line(out, &RunEvent::new(event, graph));
            }
            Display::Bar { bar, running, failed } => {
                match event {
                    Event::RunStarted { total, .. } => {
                        bar.set_length(*total);
                        if let Some(text) = notice(event) {
                            bar.println(text);
                        }
                    }
                    Event::TaskStarted { .. } => *running += 1,
                    Event::TaskFinished { retrying, status, .. } => {
                        *running = running.saturating_sub(1);
                        if !retrying {
                            bar.inc(1);
                        }
                        if matches!(status, Status::Failed { .. }) && !retrying {
                            *failed += 1;
                        }
                        if let Some(text) = failure_text(event) {
                            bar.println(text);
                        }
                    }
                    Event::TaskCancelled { .. } | Event::TaskSkipped { .. } => bar.inc(1),
                    Event::RestCancelled { count, .. } => bar.inc(*count),
                    Event::PartExpanded { count, .. } => bar.inc_length(*count),
                    Event::Expanded { count, .. } => {
                        bar.inc_length(*count);
                        if let Some(text) = notice(event) {
                            bar.println(text);
                        }
                    }
                    Event::RunFinished { .. } => bar.finish_and_clear(),
                    other => {
                        if let Some(text) = notice(other) {
                            bar.println(text);
                        }
                    }
                }
                bar.set_message(format!("{running} running · {failed} failed"));
            }
            Display::Plain => {
                if let Some(text) = notice(event).or_else(|| failure_text(event)) {
                    let _ = writeln!(err, "{text}");
                }
            }
        }
    }

    /// The closing lines, once the run has ended, to `err`: where the
    /// results are and how to read the log and write the report
    /// (`commands` says how the run's workflow is named to them), then the
    /// counts — last, where `tail -1` and a reader's eye find them.
    pub fn finish(&self, summary: &Summary, commands: &Commands, err: &mut impl Write) {
        if matches!(self, Display::Json(_)) {
            return;
        }
        let _ = write!(err, "{}", commands.closing(summary));
        let mut parts = vec![format!("{} succeeded", summary.succeeded)];
        for (n, what) in [
            (summary.cached, "unchanged (skipped)"),
            (summary.failed, "failed"),
            (summary.ignored, "failed (ignored)"),
            (summary.cancelled, "cancelled"),
            (summary.skipped, "skipped by a condition"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        match &summary.finally {
            Some(f) if f.succeeded => {
                let _ =
                    writeln!(err, "finally: succeeded in {}", duration(json::micros(f.seconds), DurationStyle::Tenths));
            }
            Some(f) => {
                let why = f.reason.as_deref().unwrap_or("failed");
                let _ = writeln!(err, "finally failed: {why} (flow log cat finally)");
            }
            None => {}
        }
        let how = if summary.interrupted { "; interrupted after" } else { " in" };
        let dry = if summary.dry_exec { " (--dry-exec: nothing was executed)" } else { "" };
        let took = duration(json::micros(summary.seconds), DurationStyle::Tenths);
        let _ = writeln!(err, "run {}: {}{how} {took}{dry}", summary.run_id, parts.join(", "));
        for error in &summary.io_errors {
            let _ = writeln!(err, "error: {error}");
        }
    }
}

/// How the closing lines name the run's results and its workflow: paths
/// relative to the current directory, and `-w FILE` when `flow log` and
/// `flow report` would not find the run from here.
pub struct Commands {
    /// The current directory.
    pub cwd: PathBuf,
    /// The workflow as `-w` names it, when the commands need it.
    pub workflow: Option<PathBuf>,
}

impl Commands {
    /// `results: …`, `log: …` and `report: …`.
    fn closing(&self, summary: &Summary) -> String {
        let mut text = String::new();
        if !summary.results.is_empty() {
            let paths: Vec<String> = summary.results.iter().map(|p| self.show(p)).collect();
            let more = match summary.more_results {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            text.push_str(&format!("results: {}{more}\n", paths.join(", ")));
        }
        let w =
            self.workflow.as_ref().map(|w| format!(" -w {}", shell_word(&w.display().to_string()))).unwrap_or_default();
        let log = if summary.failed > 0 { "cat --failed" } else { "list" };
        text.push_str(&format!("log:     flow log{w} {log}\n"));
        text.push_str(&format!("report:  flow report{w}\n"));
        text
    }

    /// `path` relative to the current directory when it is under it.
    fn show(&self, path: &Path) -> String {
        path.strip_prefix(&self.cwd).unwrap_or(path).display().to_string()
    }
}

/// A line about the run or its workers, if the event deserves one.
fn notice(event: &Event) -> Option<String> {
    match event {
        Event::RunStarted { run_id, total, tasks, dynamic, dropped, access, .. } => {
            let (instances, tasks) =
                (flow_engine::units::plural(*total, "instance"), flow_engine::units::plural(*tasks, "task"));
            let mut text = format!("run {run_id}: {instances} of {tasks}");
            match dynamic.len() {
                0 => {}
                1..=3 => {
                    let names: Vec<String> = dynamic.iter().map(|name| format!("`{name}`")).collect();
                    text.push_str(&format!(", + the instances of {} (known at run time)", names.join(", ")));
                }
                n => text.push_str(&format!(", + the instances of {n} tasks (known at run time)")),
            }
            match dropped.len() {
                0 => {}
                1..=3 => {
                    let names: Vec<String> = dropped.iter().map(|name| format!("`{name}`")).collect();
                    text.push_str(&format!("; dropped by `when`: {}", names.join(", ")));
                }
                n => text.push_str(&format!("; {n} tasks dropped by `when` (see flow plan)")),
            }
            if let Some(access) = access {
                text.push_str(&format!("\nworkers join with: flow worker --access {}", access.display()));
            }
            Some(text)
        }
        Event::Expanded { name, file, count, .. } => {
            Some(format!("+ {name}: {} from {file}", flow_engine::units::plural(*count, "instance")))
        }
        Event::WorkerJoined { worker, hostname, peer, cpus, gpus, .. } => {
            let (cpus, gpus) =
                (flow_engine::units::plural(*cpus as u64, "cpu"), flow_engine::units::plural(*gpus as u64, "gpu"));
            Some(format!("+ worker {worker} joined: {hostname} ({peer}), {cpus}, {gpus}"))
        }
        Event::WorkerLost { worker, hostname, reason, tasks, .. } => {
            let again = match tasks {
                0 => String::new(),
                1 => "; 1 task runs again elsewhere".to_owned(),
                n => format!("; {n} tasks run again elsewhere"),
            };
            Some(format!("- worker {worker} ({hostname}) left: {reason}{again}"))
        }
        Event::WorkerRefused { peer, reason, more } => Some(match more {
            0 => format!("! refused a connection from {peer}: {reason}"),
            n => format!("! refused a connection from {peer}: {reason} ({n} more from this address before it)"),
        }),
        Event::RefusedQuietly { address, count } => {
            Some(format!("! refused {count} more connections from {address} (said once a minute per address)"))
        }
        Event::Allocation { id, job_id, state, reason } => allocation_text(*id, job_id, *state, reason.as_deref()),
        Event::QueuePaused { reason } => Some(format!("✗ {reason}")),
        Event::Warning { message } => Some(format!("warning: {message}")),
        Event::OutputsMoved { task, reason, labels, files, changed, dir, dry } => {
            Some(outputs_moved(task, *reason, labels, files, changed.len(), dir, *dry))
        }
        Event::QueueUnschedulable { task, reason } => Some(format!("! the queue can never run `{task}`: {reason}")),
        _ => None,
    }
}

/// What was moved out of the way for instances that no longer exist, or
/// that did not succeed in this run; `changed` of them were changed since
/// flow wrote them.
fn outputs_moved(
    task: &str,
    reason: MoveReason,
    labels: &[String],
    files: &[String],
    changed: usize,
    dir: &str,
    dry: bool,
) -> String {
    let few = |names: &[String]| {
        let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
        match names.len() {
            n if n > 3 => format!("{} and {} more", shown.join(", "), n - 3),
            _ => shown.join(", "),
        }
    };
    let outputs = flow_engine::units::plural(files.len() as u64, "output");
    let which = match reason {
        MoveReason::Vanished => format!("{outputs} no instance writes any more (left by {})", few(labels)),
        MoveReason::Skipped => format!("{outputs} an earlier run left for instances skipped now ({})", few(labels)),
        MoveReason::Failed => format!("{outputs} of instances that failed ({})", few(labels)),
        MoveReason::Cancelled => format!("{outputs} an earlier run left for instances cancelled ({})", few(labels)),
        MoveReason::Unfinished => {
            format!("{outputs} of attempts a stopped run did not finish ({})", few(labels))
        }
    };
    let by_hand = match changed {
        0 => String::new(),
        n => format!(" ({n} changed since flow wrote {})", if n == 1 { "it" } else { "them" }),
    };
    if dry {
        format!("~ {task}: would move {which} out of the way (--dry-exec: left in place): {}{by_hand}", few(files))
    } else {
        format!("~ {task}: moved {which} to {dir}/: {}{by_hand}", few(files))
    }
}

/// One line about an allocation's new state (none while it is being submitted).
fn allocation_text(id: u32, job_id: &str, state: AllocState, reason: Option<&str>) -> Option<String> {
    let job = if job_id.is_empty() { String::new() } else { format!(" (job {job_id})") };
    let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
    Some(match state {
        AllocState::Queued if job_id.is_empty() => return None,
        AllocState::Queued => format!("+ allocation {id}{job} queued"),
        AllocState::Running => format!("+ allocation {id}{job} started"),
        AllocState::Finished => format!("- allocation {id}{job} finished{why}"),
        AllocState::Failed => format!("✗ allocation {id}{job} failed{why}"),
        AllocState::Cancelled => format!("- allocation {id}{job} cancelled"),
    })
}

/// The report of a failed attempt: name, reason, source line, stderr tail.
fn failure_text(event: &Event) -> Option<String> {
    let Event::TaskFinished {
        label,
        status: Status::Failed { reason, .. },
        retrying,
        retry_at_us,
        stderr_tail,
        location,
        attempt,
        ..
    } = event
    else {
        return None;
    };
    let mut text = if let Some(at) = retry_at_us {
        format!("! {label} failed ({reason}), retrying at {} (attempt {})", utc(*at, UtcStyle::Readable), attempt + 1)
    } else if *retrying {
        format!("! {label} failed ({reason}), retrying (attempt {})", attempt + 1)
    } else {
        format!("✗ {label} failed: {reason} ({location})")
    };
    if !*retrying {
        let lines: Vec<&str> = stderr_tail.lines().collect();
        for line in &lines[lines.len().saturating_sub(10)..] {
            text.push_str("\n  │ ");
            text.push_str(line);
        }
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use flow_engine::ir::{GroupId, TaskId};

    use super::*;

    fn task(group: u32, instance: u64) -> TaskId {
        TaskId::new(GroupId(group), instance)
    }

    /// A run with a dynamic stage, a retried failure, a cancellation, a
    /// worker coming and going and an allocation.
    fn events() -> Vec<Event> {
        let finished = |t: TaskId, label: &str, attempt: u32, status: Status, retrying: bool| Event::TaskFinished {
            task: t,
            label: label.to_owned(),
            attempt,
            status,
            retrying,
            retry_at_us: None,
            duration: Duration::from_millis(40),
            stderr_tail: "Traceback (most recent call last):\nValueError: bad SMILES\n".to_owned(),
            location: "workflow.toml:9:8".into(),
            metrics: None,
        };
        let failed = || Status::failed(Some(1), None, "exit code 1".to_owned());
        vec![
            Event::RunStarted {
                run_id: "20261125-010203-004".into(),
                run_dir: PathBuf::from(".flow/runs/x"),
                total: 3,
                tasks: 3,
                dynamic: vec!["refine".into()],
                dropped: vec!["notify".into()],
                access: None,
            },
            Event::WorkerJoined {
                worker: 1,
                hostname: "node7".into(),
                allocation: None,
                peer: "10.0.0.7:4242".into(),
                cpus: 1,
                gpus: 0,
            },
            Event::TaskStarted { task: task(0, 0), label: "select".into(), attempt: 0 },
            finished(task(0, 0), "select", 0, Status::Succeeded, false),
            Event::Expanded { group: GroupId(1), name: "refine".into(), file: "hits.txt".into(), count: 2 },
            finished(task(1, 0), "refine[0]", 0, failed(), true),
            finished(task(1, 0), "refine[0]", 1, failed(), false),
            finished(task(1, 1), "refine[1]", 0, Status::Cached, false),
            Event::TaskCancelled { task: task(2, 0), label: "report".into(), reason: "refine[0] failed".into() },
            Event::Allocation {
                id: 2,
                job_id: "4711".into(),
                state: AllocState::Failed,
                reason: Some("node failure".into()),
            },
            Event::WorkerLost {
                worker: 1,
                hostname: "node7".into(),
                allocation: None,
                reason: "silent for 10 s".into(),
                tasks: 2,
            },
            Event::Warning { message: "run 20261124-000000-000: journal: 12 damaged bytes".into() },
        ]
    }

    fn summary() -> Summary {
        Summary {
            run_id: "20261125-010203-004".into(),
            total: 5,
            succeeded: 1,
            cached: 1,
            failed: 1,
            cancelled: 1,
            seconds: 1.25,
            results: vec![PathBuf::from("/work/screen/report.txt")],
            ..Summary::default()
        }
    }

    fn here() -> Commands {
        Commands { cwd: PathBuf::from("/work/screen"), workflow: None }
    }

    #[test]
    fn plain_lines_on_synthetic_events() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut display = Display::Plain;
        for event in events() {
            display.show(&event, &mut out, &mut err);
        }
        display.finish(&summary(), &here(), &mut err);
        assert!(out.is_empty());
        insta::assert_snapshot!(String::from_utf8_lossy(&err));
    }

    #[test]
    fn a_dry_run_says_nothing_was_executed() {
        let mut err = Vec::new();
        let dry = Summary { dry_exec: true, succeeded: 3, seconds: 0.5, results: Vec::new(), ..summary() };
        Display::Plain.finish(&dry, &here(), &mut err);
        insta::assert_snapshot!(String::from_utf8_lossy(&err));
    }

    #[test]
    fn the_closing_lines_name_the_results_the_log_and_the_report() {
        let mut err = Vec::new();
        let results = ["ranked.csv", "top/0.sdf", "top/1.sdf"].map(|p| PathBuf::from("/work/screen").join(p));
        let done = Summary {
            succeeded: 13,
            failed: 0,
            cancelled: 0,
            cached: 0,
            results: results.to_vec(),
            more_results: 9,
            ..summary()
        };
        let elsewhere =
            Commands { cwd: PathBuf::from("/work"), workflow: Some(PathBuf::from("my screen/workflow.toml")) };
        Display::Plain.finish(&done, &here(), &mut err);
        Display::Plain.finish(&Summary { results: Vec::new(), ..done.clone() }, &elsewhere, &mut err);
        insta::assert_snapshot!(String::from_utf8_lossy(&err), @r"
        results: ranked.csv, top/0.sdf, top/1.sdf and 9 more
        log:     flow log list
        report:  flow report
        run 20261125-010203-004: 13 succeeded in 1.2s
        log:     flow log -w 'my screen/workflow.toml' list
        report:  flow report -w 'my screen/workflow.toml'
        run 20261125-010203-004: 13 succeeded in 1.2s
        ");
    }

    #[test]
    fn json_lines_go_to_stdout_only() {
        let graph = crate::json::test_graph(
            "[[tasks]]\nname = \"select\"\ncommand = \"true\"\n\n\
             [[tasks]]\nname = \"refine\"\nrange = \"0-1\"\ncommand = \"true\"\n\n\
             [[tasks]]\nname = \"report\"\ncommand = \"true\"\n",
        );
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut display = Display::Json(Box::new(graph));
        for event in events() {
            display.show(&event, &mut out, &mut err);
        }
        display.show(&Event::RunFinished { summary: summary() }, &mut out, &mut err);
        display.finish(&summary(), &here(), &mut err);
        assert!(err.is_empty());
        insta::assert_snapshot!(String::from_utf8_lossy(&out));
    }
}
