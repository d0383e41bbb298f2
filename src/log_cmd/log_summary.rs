//! `flow log summary`: a run's counts, output sizes, durations per task,
//! what its attempts used (median and max of wall time, CPU time and peak
//! memory, per task) and how long they waited for a worker, and its
//! slowest instances, gathered into a
//! [`RunSummary`] and printed as text or as one JSON document.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::{self, Write};

use flow_engine::ir::{GroupId, TaskId};
use flow_engine::log::{JournalEvent, Latest, OutputStream};
use flow_engine::units::{BytesStyle, DurationStyle, bytes, duration};

use super::run::Run;
use crate::json::{Counts, OutputSizes, RunState, RunSummary, Slow, Spread, TaskUse};
use crate::table::Table;

/// Instances listed as the slowest.
const SLOWEST: usize = 5;

impl RunSummary {
    /// Reads `run`'s journal and output log.
    pub(super) fn gather(run: &Run) -> io::Result<RunSummary> {
        // One pass: the last attempt of each instance, and what every
        // attempt used, from the record that ended it.
        let mut latest = Latest::new(run.graph());
        let mut usage = BTreeMap::<GroupId, [Vec<u64>; 3]>::new();
        let mut waits = BTreeMap::<GroupId, Vec<u64>>::new();
        run.each_journal_record(|r| {
            if let JournalEvent::Started { ready_us: Some(ready), .. } = r.event {
                waits.entry(r.task.group).or_default().push(r.time_us.saturating_sub(ready));
            }
            if let Some(m) = &r.metrics {
                let [wall, cpu, rss] = usage.entry(r.task.group).or_default();
                wall.push(m.usage.wall_us);
                cpu.push(m.usage.user_us + m.usage.system_us);
                rss.push(m.usage.max_rss);
            }
            latest.apply(&r);
        })?;
        let mut output = OutputSizes::default();
        run.each_record(|r, _| {
            let bytes = r.data.len() as u64;
            match r.stream {
                OutputStream::Stdout => output.stdout_bytes += bytes,
                OutputStream::Stderr => output.stderr_bytes += bytes,
                OutputStream::System | OutputStream::Allocation => output.system_bytes += bytes,
            }
            output.records += 1;
            Ok(())
        })?;
        // Per task the durations' count, sum and maximum; the slowest
        // instances in a heap of a few.
        let mut durations = BTreeMap::<GroupId, (u64, u64, u64)>::new();
        let mut slowest = BinaryHeap::new();
        for last in latest.iter() {
            if let Some(us) = last.duration_us {
                let (n, total, max) = durations.entry(last.task.group).or_default();
                (*n, *total, *max) = (*n + 1, *total + us, (*max).max(us));
                slowest.push(Reverse((us, Reverse(last.task))));
                if slowest.len() > SLOWEST {
                    slowest.pop();
                }
            }
        }
        let groups: std::collections::BTreeSet<GroupId> =
            durations.keys().chain(usage.keys()).chain(waits.keys()).copied().collect();
        let tasks = groups
            .into_iter()
            .map(|group| {
                let (n, total, max) = durations.remove(&group).unwrap_or_default();
                let [wall, cpu, rss] = usage.remove(&group).unwrap_or_default();
                TaskUse {
                    task: run.graph().groups.get(group.index()).map_or("?", |g| &g.name).to_owned(),
                    timed: n,
                    total_us: total,
                    mean_us: total.checked_div(n).unwrap_or(0),
                    max_us: max,
                    measured: wall.len() as u64,
                    wall_us: Spread::of(wall),
                    cpu_us: Spread::of(cpu),
                    rss_bytes: Spread::of(rss),
                    queue_wait_us: Spread::of(waits.remove(&group).unwrap_or_default()),
                }
            })
            .collect();
        let mut slowest: Vec<(u64, TaskId)> =
            slowest.into_iter().map(|Reverse((us, Reverse(task)))| (us, task)).collect();
        slowest.sort_by_key(|&(us, task)| (Reverse(us), task));
        let slowest =
            slowest.into_iter().map(|(us, task)| Slow { task: run.task_ref(task), duration_us: us }).collect();
        Ok(RunSummary {
            run_id: run.dir().id.clone(),
            finished: run.view.is_finished(),
            state: RunState::of_view(&run.view),
            state_words: RunState::words(&run.view),
            counts: Counts::of_latest(run.graph(), &latest),
            output,
            tasks,
            slowest,
        })
    }

    /// Writes the summary for people.
    pub fn render(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "run {}: {}", self.run_id, self.state_words)?;
        let c = &self.counts;
        let states = [(c.succeeded, "succeeded"), (c.cached, "cached"), (c.failed, "failed")]
            .into_iter()
            .chain([(c.cancelled, "cancelled"), (c.skipped, "skipped"), (c.running, "running")])
            .filter(|&(n, _)| n > 0)
            .map(|(n, word)| format!("{n} {word}"))
            .collect::<Vec<_>>();
        let instances = flow_engine::units::plural(c.done() + c.running, "instance");
        writeln!(out, "tasks: {instances} with records: {}", states.join(", "))?;
        let o = &self.output;
        let sizes = [(o.stdout_bytes, "stdout"), (o.stderr_bytes, "stderr"), (o.system_bytes, "system")]
            .map(|(n, stream)| format!("{} {stream}", bytes(n, BytesStyle::Tenths)));
        writeln!(out, "output: {} in {} records", sizes.join(", "), o.records)?;

        let timed: Vec<&TaskUse> = self.tasks.iter().filter(|t| t.timed > 0).collect();
        if !timed.is_empty() {
            let mut rows = vec![["TASK", "TIMED", "TOTAL", "MEAN", "MAX"].map(String::from).to_vec()];
            for t in timed {
                let times = [t.total_us, t.mean_us, t.max_us].map(|us| duration(us, DurationStyle::Hundredths));
                rows.push([vec![t.task.clone(), t.timed.to_string()], times.to_vec()].concat());
            }
            write!(out, "\ndurations:\n{}", Table::new().indent("  ").render(&rows))?;
        }
        let measured: Vec<&TaskUse> =
            self.tasks.iter().filter(|t| t.measured > 0 || t.queue_wait_us.is_some()).collect();
        if !measured.is_empty() {
            let spread = |s: Option<Spread>, f: fn(u64) -> String| {
                s.map_or_else(|| "-".to_owned(), |s| format!("{} / {}", f(s.median), f(s.max)))
            };
            let header = ["TASK", "ATTEMPTS", "WALL", "CPU", "RSS", "QUEUE WAIT"];
            let mut rows = vec![header.map(String::from).to_vec()];
            for t in measured {
                rows.push(vec![
                    t.task.clone(),
                    t.measured.to_string(),
                    spread(t.wall_us, |us| duration(us, DurationStyle::Hundredths)),
                    spread(t.cpu_us, |us| duration(us, DurationStyle::Hundredths)),
                    spread(t.rss_bytes, |n| bytes(n, BytesStyle::Tenths)),
                    spread(t.queue_wait_us, |us| duration(us, DurationStyle::Hundredths)),
                ]);
            }
            write!(out, "\nper attempt (median / max):\n{}", Table::new().indent("  ").render(&rows))?;
        }
        if !self.slowest.is_empty() {
            let rows: Vec<_> = self
                .slowest
                .iter()
                .map(|s| vec![s.task.label.clone(), duration(s.duration_us, DurationStyle::Hundredths)])
                .collect();
            write!(out, "\nslowest:\n{}", Table::new().indent("  ").render(&rows))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::TaskRef;

    fn task(task: &str, index: i64) -> TaskRef {
        TaskRef::labelled(task, format!("{task}[{index}]"))
    }

    /// A run with a measured task, a cached one and a failure.
    fn summary() -> RunSummary {
        let spread = |median, max| Some(Spread { median, max });
        RunSummary {
            run_id: "20261125-010203-004".to_owned(),
            finished: true,
            state: RunState::Failed,
            state_words: "failed",
            counts: Counts { total: 7, succeeded: 3, cached: 2, failed: 1, cancelled: 1, ..Counts::default() },
            output: OutputSizes { stdout_bytes: 43, stderr_bytes: 12_000, system_bytes: 12, records: 7 },
            tasks: vec![
                TaskUse {
                    task: "prep".to_owned(),
                    timed: 1,
                    total_us: 1_500_000,
                    mean_us: 1_500_000,
                    max_us: 1_500_000,
                    measured: 0,
                    wall_us: None,
                    cpu_us: None,
                    rss_bytes: None,
                    queue_wait_us: spread(20_000, 20_000),
                },
                TaskUse {
                    task: "score".to_owned(),
                    timed: 4,
                    total_us: 190_000_000,
                    mean_us: 47_500_000,
                    max_us: 185_000_000,
                    measured: 5,
                    wall_us: spread(2_000_000, 185_000_000),
                    cpu_us: spread(1_250_000, 170_000_000),
                    rss_bytes: spread(3 << 20, 2 << 30),
                    queue_wait_us: None,
                },
            ],
            slowest: vec![
                Slow { task: task("score", 30), duration_us: 185_000_000 },
                Slow { task: task("score", 10), duration_us: 2_000_000 },
            ],
        }
    }

    #[test]
    fn summary_text_on_synthetic_data() {
        let mut out = Vec::new();
        summary().render(&mut out).unwrap();
        insta::assert_snapshot!(String::from_utf8_lossy(&out));
    }

    #[test]
    fn medians_take_the_lower_middle() {
        assert_eq!(Spread::of(vec![5, 1, 3, 2]), Some(Spread { median: 2, max: 5 }));
        assert_eq!(Spread::of(vec![]), None);
    }
}
