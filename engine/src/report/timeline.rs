//! [`Timeline`]: the attempts of a run over time, one lane per worker, and
//! the CPUs they used. Up to [`MAX_BARS`] attempts are drawn one bar each;
//! beyond that each lane becomes [`BINS`] bins holding how many attempts ran.

use serde::Serialize;

use crate::ir::TaskId;

/// Attempts drawn one by one at most; a larger run is drawn in bins.
pub const MAX_BARS: usize = 2000;
/// Bins across the run, for the CPU chart and for lanes of a large run.
pub const BINS: usize = 200;

/// Attempts over time by worker, and CPU use.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    /// Where the time axis starts, µs since the Unix epoch.
    pub start_us: u64,
    /// Where it ends.
    pub end_us: u64,
    /// The width of one bin, µs.
    pub bin_us: u64,
    /// Whether lanes hold bins instead of bars.
    pub binned: bool,
    /// One per worker (host and worker id), in worker order.
    pub lanes: Vec<Lane>,
    /// CPUs kept busy in each bin, from the attempts' CPU time (empty when no attempt reported it).
    pub cpu_used: Vec<f64>,
    /// CPUs given to the attempts running in each bin.
    pub cpu_given: Vec<f64>,
    /// CPUs of all the run's workers together, if known.
    pub cpu_capacity: Option<f64>,
}

/// The attempts of one worker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lane {
    /// `host · worker N`.
    pub label: String,
    /// Rows its bars need so that none overlap.
    pub rows: u32,
    /// Its attempts, unless the timeline is binned.
    pub bars: Vec<Bar>,
    /// Attempts running on average in each bin, if the timeline is binned.
    pub busy: Vec<f64>,
}

/// One attempt in a lane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bar {
    /// Position of its task in the graph (for its colour).
    pub group: u32,
    /// `name[index]`, and `#attempt` after a retry.
    pub label: String,
    /// Start, µs after the timeline's start.
    pub start_us: u64,
    /// End, µs after the timeline's start.
    pub end_us: u64,
    /// Its row in the lane.
    pub row: u32,
    /// How it ended: `succeeded`, `failed`, `lost`, `cancelled` or `running`.
    pub state: &'static str,
}

/// One attempt as the report builder collects it.
#[derive(Debug, Clone)]
pub(super) struct Span {
    pub task: TaskId,
    pub attempt: u32,
    pub lane: usize,
    pub start_us: u64,
    pub end_us: u64,
    /// CPU time, if reported.
    pub cpu_us: Option<u64>,
    /// CPUs given to it.
    pub cpus: f64,
    pub state: &'static str,
}

impl Timeline {
    /// Lays out `spans` in lanes named `lanes`, between `start_us` and
    /// `end_us`; `label` names an attempt's task.
    pub(super) fn build(
        spans: &mut [Span],
        lanes: Vec<String>,
        (start_us, end_us): (u64, u64),
        cpu_capacity: Option<f64>,
        label: impl Fn(TaskId) -> String,
    ) -> Timeline {
        let end_us = end_us.max(start_us + 1);
        let bin_us = (end_us - start_us).div_ceil(BINS as u64);
        let binned = spans.len() > MAX_BARS;
        let mut lanes: Vec<Lane> = lanes
            .into_iter()
            .map(|label| Lane {
                label,
                rows: 0,
                bars: Vec::new(),
                busy: if binned { vec![0.0; BINS] } else { Vec::new() },
            })
            .collect();
        let (mut cpu_used, mut cpu_given) = (vec![0.0; BINS], vec![0.0; BINS]);
        let any_cpu = spans.iter().any(|s| s.cpu_us.is_some());
        spans.sort_by_key(|s| (s.lane, s.start_us, s.task, s.attempt));
        let mut row_ends: Vec<Vec<u64>> = vec![Vec::new(); lanes.len()];
        let spread = |bins: &mut [f64], s: &Span, weight: f64| {
            spread(bins, s.start_us - start_us, s.end_us - start_us, bin_us, weight)
        };
        for s in spans.iter().filter(|s| s.start_us >= start_us && s.end_us >= s.start_us) {
            let wall = (s.end_us - s.start_us).max(1) as f64;
            spread(&mut cpu_given, s, s.cpus);
            if let Some(cpu) = s.cpu_us {
                spread(&mut cpu_used, s, cpu as f64 / wall);
            }
            let lane = &mut lanes[s.lane];
            if binned {
                spread(&mut lane.busy, s, 1.0);
                continue;
            }
            let ends = &mut row_ends[s.lane];
            let row = match ends.iter().position(|&end| end <= s.start_us) {
                Some(row) => row,
                None => {
                    ends.push(0);
                    ends.len() - 1
                }
            };
            ends[row] = s.end_us;
            let retry = if s.attempt > 0 { format!(" #{}", s.attempt) } else { String::new() };
            lane.bars.push(Bar {
                group: s.task.group.0,
                label: format!("{}{retry}", label(s.task)),
                start_us: s.start_us - start_us,
                end_us: s.end_us - start_us,
                row: row as u32,
                state: s.state,
            });
        }
        for (lane, ends) in lanes.iter_mut().zip(&row_ends) {
            lane.rows = ends.len().max(1) as u32;
        }
        if !any_cpu {
            cpu_used.clear();
        }
        Timeline { start_us, end_us, bin_us, binned, lanes, cpu_used, cpu_given, cpu_capacity }
    }
}

/// Adds `weight` times the part of each bin that `[start, end)` covers.
fn spread(bins: &mut [f64], start: u64, end: u64, bin_us: u64, weight: f64) {
    let last = bins.len() - 1;
    let (first_bin, last_bin) = ((start / bin_us) as usize, ((end.max(start + 1) - 1) / bin_us) as usize);
    for (b, bin) in bins.iter_mut().enumerate().take(last_bin.min(last) + 1).skip(first_bin.min(last)) {
        let (lo, hi) = (b as u64 * bin_us, (b as u64 + 1) * bin_us);
        let covered = end.min(hi).saturating_sub(start.max(lo)).max(u64::from(end == start));
        *bin += weight * covered as f64 / bin_us as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::GroupId;

    fn span(lane: usize, start_us: u64, end_us: u64) -> Span {
        let task = TaskId::new(GroupId(0), start_us);
        Span {
            task,
            attempt: 0,
            lane,
            start_us,
            end_us,
            cpu_us: Some(end_us - start_us),
            cpus: 1.0,
            state: "succeeded",
        }
    }

    #[test]
    fn overlapping_attempts_take_separate_rows() {
        let mut spans = [span(0, 0, 100), span(0, 50, 150), span(0, 100, 200), span(1, 0, 10)];
        let t =
            Timeline::build(&mut spans, vec!["a".into(), "b".into()], (0, 200), Some(2.0), |t| t.instance.to_string());
        let rows: Vec<_> = t.lanes[0].bars.iter().map(|b| (b.start_us, b.row)).collect();
        assert_eq!(rows, [(0, 0), (50, 1), (100, 0)]);
        assert_eq!((t.lanes[0].rows, t.lanes[1].rows, t.binned), (2, 1, false));
        // 310 µs of attempts given one CPU each, and one or two running at a time.
        let given: f64 = t.cpu_given.iter().map(|c| c * t.bin_us as f64).sum();
        assert!((given - 310.0).abs() < 1e-6, "{given}");
        assert!(t.cpu_given.iter().all(|&c| (1.0..=2.0).contains(&c)), "{:?}", t.cpu_given);
    }

    #[test]
    fn many_attempts_are_binned() {
        let mut spans: Vec<Span> = (0..MAX_BARS as u64 + 1).map(|i| span(0, i, i + 1)).collect();
        let t = Timeline::build(&mut spans, vec!["a".into()], (0, MAX_BARS as u64 + 1), None, |_| String::new());
        assert!(t.binned && t.lanes[0].bars.is_empty());
        let busy: f64 = t.lanes[0].busy.iter().map(|b| b * t.bin_us as f64).sum();
        assert!((busy - (MAX_BARS as f64 + 1.0)).abs() < 1e-6, "{busy}");
    }
}
