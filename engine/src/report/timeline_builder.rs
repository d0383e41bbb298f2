//! [`TimelineBuilder`]: lays the attempts of a run out as a [`Timeline`] as
//! they are read. It keeps up to [`MAX_BARS`] attempts to draw as bars; past
//! that it spreads them into [`BINS`] bins as they come, so its size does
//! not grow with the run's.

use std::collections::BTreeMap;

use super::timeline::{BINS, Bar, Capacity, Lane, MAX_BARS, Timeline};
use crate::ir::TaskId;

/// One attempt as the report builder collects it.
#[derive(Debug, Clone)]
pub(super) struct Span {
    pub task: TaskId,
    pub attempt: u32,
    /// The id of the worker it ran on.
    pub worker: u32,
    pub start_us: u64,
    pub end_us: u64,
    /// CPU time, if reported.
    pub cpu_us: Option<u64>,
    /// CPUs given to it.
    pub cpus: f64,
    /// GPUs given to it.
    pub gpus: f64,
    /// Bytes of memory it asked for.
    pub mem_asked: u64,
    /// Its peak RSS, if reported.
    pub max_rss: Option<u64>,
    pub state: &'static str,
}

/// A [`Timeline`] being built, one attempt at a time.
pub(super) struct TimelineBuilder {
    start_us: u64,
    end_us: u64,
    bin_us: u64,
    /// Attempts pushed, drawn or not.
    count: usize,
    /// The attempts to draw as bars, until there are too many.
    spans: Vec<Span>,
    /// Per worker, attempts running on average in each bin, once binned.
    busy: Option<BTreeMap<u32, Vec<f64>>>,
    /// Per worker, failed attempts ending and retries starting in each bin, once binned.
    marks: BTreeMap<u32, Marks>,
    cpu_used: Vec<f64>,
    cpu_given: Vec<f64>,
    gpu_given: Vec<f64>,
    mem_asked: Vec<f64>,
    mem_used: Vec<f64>,
    any_cpu: bool,
    any_gpu: bool,
    any_mem: bool,
    any_rss: bool,
}

impl TimelineBuilder {
    /// A timeline from `start_us` to `end_us`.
    pub fn new((start_us, end_us): (u64, u64)) -> Self {
        let end_us = end_us.max(start_us + 1);
        TimelineBuilder {
            start_us,
            end_us,
            bin_us: (end_us - start_us).div_ceil(BINS as u64),
            count: 0,
            spans: Vec::new(),
            busy: None,
            marks: BTreeMap::new(),
            cpu_used: vec![0.0; BINS],
            cpu_given: vec![0.0; BINS],
            gpu_given: vec![0.0; BINS],
            mem_asked: vec![0.0; BINS],
            mem_used: vec![0.0; BINS],
            any_cpu: false,
            any_gpu: false,
            any_mem: false,
            any_rss: false,
        }
    }

    /// Adds one attempt; one that starts before the timeline or ends
    /// before it starts is counted, not drawn.
    pub fn push(&mut self, s: Span) {
        self.count += 1;
        self.any_cpu |= s.cpu_us.is_some();
        self.any_gpu |= s.gpus > 0.0;
        self.any_mem |= s.mem_asked > 0;
        self.any_rss |= s.max_rss.is_some();
        if s.start_us < self.start_us || s.end_us < s.start_us {
            return;
        }
        let wall = (s.end_us - s.start_us).max(1) as f64;
        self.spread(Bins::CpuGiven, &s, s.cpus);
        if let Some(cpu) = s.cpu_us {
            self.spread(Bins::CpuUsed, &s, cpu as f64 / wall);
        }
        self.spread(Bins::GpuGiven, &s, s.gpus);
        self.spread(Bins::MemAsked, &s, s.mem_asked as f64);
        if let Some(rss) = s.max_rss {
            self.spread(Bins::MemUsed, &s, rss as f64);
        }
        if self.busy.is_some() {
            self.spread(Bins::Busy, &s, 1.0);
            self.mark(&s);
        } else {
            self.spans.push(s);
            self.bin_if_too_many();
        }
    }

    /// Past [`MAX_BARS`] attempts, spreads the kept ones into bins.
    fn bin_if_too_many(&mut self) {
        if self.count > MAX_BARS && self.busy.is_none() {
            self.busy = Some(BTreeMap::new());
            for s in std::mem::take(&mut self.spans) {
                self.spread(Bins::Busy, &s, 1.0);
                self.mark(&s);
            }
        }
    }

    /// Counts `s` in its worker's marks if it failed or is a retry.
    fn mark(&mut self, s: &Span) {
        let (failed, retry) = (s.state == "failed", s.attempt > 0);
        if !failed && !retry {
            return;
        }
        let bin = |us: u64| (((us - self.start_us) / self.bin_us) as usize).min(BINS - 1);
        let (end, start) = (bin(s.end_us), bin(s.start_us));
        let marks = self.marks.entry(s.worker).or_insert_with(Marks::new);
        if failed {
            marks.failed[end] += 1;
        }
        if retry {
            marks.retried[start] += 1;
        }
    }

    /// Adds `weight` times the part of each bin of `which` that `s` covers.
    fn spread(&mut self, which: Bins, s: &Span, weight: f64) {
        let bins = match which {
            Bins::CpuGiven => &mut self.cpu_given,
            Bins::CpuUsed => &mut self.cpu_used,
            Bins::GpuGiven => &mut self.gpu_given,
            Bins::MemAsked => &mut self.mem_asked,
            Bins::MemUsed => &mut self.mem_used,
            Bins::Busy => match &mut self.busy {
                Some(busy) => busy.entry(s.worker).or_insert_with(|| vec![0.0; BINS]),
                None => return,
            },
        };
        spread(bins, s.start_us - self.start_us, s.end_us - self.start_us, self.bin_us, weight);
    }

    /// The timeline, one lane per `(worker id, label)` of `lanes`, in that
    /// order, against what the workers offered; `label` names an attempt's task.
    pub fn finish(mut self, lanes: &[(u32, String)], capacity: Capacity, label: impl Fn(TaskId) -> String) -> Timeline {
        self.bin_if_too_many();
        let mut busy = self.busy.take();
        let binned = busy.is_some();
        let mut out: Vec<Lane> = lanes
            .iter()
            .map(|(id, label)| {
                let marks = self.marks.remove(id).filter(|_| binned).unwrap_or_else(|| Marks::new().or_empty(binned));
                Lane {
                    label: label.clone(),
                    rows: 1,
                    bars: Vec::new(),
                    busy: busy.as_mut().map(|b| b.remove(id).unwrap_or_else(|| vec![0.0; BINS])).unwrap_or_default(),
                    failed: marks.failed,
                    retried: marks.retried,
                }
            })
            .collect();
        let lane_of: BTreeMap<u32, usize> = lanes.iter().enumerate().map(|(i, (id, _))| (*id, i)).collect();
        self.spans.sort_by_key(|s| (s.worker, s.start_us, s.task, s.attempt));
        let mut row_ends: Vec<Vec<u64>> = vec![Vec::new(); out.len()];
        for s in &self.spans {
            let Some(&lane) = lane_of.get(&s.worker) else { continue };
            let ends = &mut row_ends[lane];
            let row = match ends.iter().position(|&end| end <= s.start_us) {
                Some(row) => row,
                None => {
                    ends.push(0);
                    ends.len() - 1
                }
            };
            ends[row] = s.end_us;
            // Named as `flow explain` and `flow log` name an attempt (from 0).
            let retry = if s.attempt > 0 { format!(", attempt {}", s.attempt) } else { String::new() };
            out[lane].bars.push(Bar {
                group: s.task.group.0,
                label: format!("{}{retry}", label(s.task)),
                start_us: s.start_us - self.start_us,
                end_us: s.end_us - self.start_us,
                row: row as u32,
                state: s.state,
            });
        }
        for (lane, ends) in out.iter_mut().zip(&row_ends) {
            lane.rows = ends.len().max(1) as u32;
        }
        if !self.any_cpu {
            self.cpu_used.clear();
        }
        if !self.any_gpu {
            self.gpu_given.clear();
        }
        if !self.any_rss {
            self.mem_used.clear();
        }
        if !self.any_mem && !self.any_rss {
            self.mem_asked.clear();
        }
        Timeline {
            start_us: self.start_us,
            end_us: self.end_us,
            bin_us: self.bin_us,
            binned,
            lanes: out,
            cpu_used: self.cpu_used,
            cpu_given: self.cpu_given,
            cpu_capacity: capacity.cpus,
            gpu_given: self.gpu_given,
            gpu_capacity: capacity.gpus.filter(|_| self.any_gpu),
            mem_asked: self.mem_asked,
            mem_used: self.mem_used,
            mem_capacity: capacity.memory.filter(|_| self.any_mem || self.any_rss),
        }
    }
}

/// A worker's failures and retries per bin.
struct Marks {
    failed: Vec<u32>,
    retried: Vec<u32>,
}

impl Marks {
    fn new() -> Self {
        Marks { failed: vec![0; BINS], retried: vec![0; BINS] }
    }

    /// These marks, or none for a timeline drawn as bars.
    fn or_empty(self, binned: bool) -> Self {
        if binned { self } else { Marks { failed: Vec::new(), retried: Vec::new() } }
    }
}

/// Which bins an attempt is spread into.
#[derive(Clone, Copy)]
enum Bins {
    CpuGiven,
    CpuUsed,
    GpuGiven,
    MemAsked,
    MemUsed,
    Busy,
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

    fn span(worker: u32, start_us: u64, end_us: u64) -> Span {
        let task = TaskId::new(GroupId(0), start_us);
        Span {
            task,
            attempt: 0,
            worker,
            start_us,
            end_us,
            cpu_us: Some(end_us - start_us),
            cpus: 1.0,
            gpus: 0.0,
            mem_asked: 0,
            max_rss: None,
            state: "succeeded",
        }
    }

    fn timeline(spans: Vec<Span>, lanes: &[(u32, String)], axis: (u64, u64), capacity: Option<f64>) -> Timeline {
        let mut builder = TimelineBuilder::new(axis);
        spans.into_iter().for_each(|s| builder.push(s));
        builder.finish(lanes, Capacity { cpus: capacity, ..Capacity::default() }, |t| t.instance.to_string())
    }

    #[test]
    fn overlapping_attempts_take_separate_rows() {
        let spans = vec![span(0, 0, 100), span(0, 50, 150), span(0, 100, 200), span(1, 0, 10)];
        let t = timeline(spans, &[(0, "a".into()), (1, "b".into())], (0, 200), Some(2.0));
        let rows: Vec<_> = t.lanes[0].bars.iter().map(|b| (b.start_us, b.row)).collect();
        assert_eq!(rows, [(0, 0), (50, 1), (100, 0)]);
        assert_eq!((t.lanes[0].rows, t.lanes[1].rows, t.binned), (2, 1, false));
        // 310 µs of attempts given one CPU each, and one or two running at a time.
        let given: f64 = t.cpu_given.iter().map(|c| c * t.bin_us as f64).sum();
        assert!((given - 310.0).abs() < 1e-6, "{given}");
        assert!(t.cpu_given.iter().all(|&c| (1.0..=2.0).contains(&c)), "{:?}", t.cpu_given);
    }

    #[test]
    fn gpus_and_memory_are_charted_only_when_used() {
        let mut with = span(0, 0, 100);
        (with.gpus, with.mem_asked, with.max_rss) = (2.0, 1000, Some(600));
        let capacity = Capacity { cpus: Some(4.0), gpus: Some(4.0), memory: Some(8000.0) };
        let mut builder = TimelineBuilder::new((0, 100));
        builder.push(with);
        let t = builder.finish(&[(0, "a".into())], capacity, |t| t.instance.to_string());
        let total = |v: &[f64]| v.iter().map(|x| x * t.bin_us as f64).sum::<f64>();
        assert!((total(&t.gpu_given) - 200.0).abs() < 1e-6, "{:?}", t.gpu_given);
        assert!((total(&t.mem_asked) - 100_000.0).abs() < 1e-3 && (total(&t.mem_used) - 60_000.0).abs() < 1e-3);
        assert_eq!((t.gpu_capacity, t.mem_capacity), (Some(4.0), Some(8000.0)));
        let t = timeline(vec![span(0, 0, 100)], &[(0, "a".into())], (0, 100), Some(4.0));
        assert!(t.gpu_given.is_empty() && t.mem_asked.is_empty() && t.mem_used.is_empty());
        assert_eq!((t.gpu_capacity, t.mem_capacity), (None, None));
    }

    #[test]
    fn many_attempts_are_binned_as_they_come() {
        let spans: Vec<Span> = (0..MAX_BARS as u64 + 1).map(|i| span(0, i, i + 1)).collect();
        let t = timeline(spans, &[(0, "a".into()), (7, "idle".into())], (0, MAX_BARS as u64 + 1), None);
        assert!(t.binned && t.lanes[0].bars.is_empty());
        let busy: f64 = t.lanes[0].busy.iter().map(|b| b * t.bin_us as f64).sum();
        assert!((busy - (MAX_BARS as f64 + 1.0)).abs() < 1e-6, "{busy}");
        assert_eq!(t.lanes[1].busy, vec![0.0; BINS]);
    }

    #[test]
    fn a_binned_lane_marks_where_attempts_failed_and_retries_started() {
        let n = MAX_BARS as u64 + 1;
        let mut spans: Vec<Span> = (0..n).map(|i| span(0, i, i + 1)).collect();
        // Attempt 0 fails early (one kept as a bar before binning), its retry
        // runs at the end; another worker's attempt fails at the end.
        spans[3].state = "failed";
        spans.push(Span { attempt: 1, ..span(0, n - 2, n - 1) });
        spans.push(Span { state: "failed", ..span(1, n - 2, n - 1) });
        let t = timeline(spans, &[(0, "a".into()), (1, "b".into())], (0, n), None);
        let at = |counts: &[u32]| {
            counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, &c)| (i, c)).collect::<Vec<_>>()
        };
        assert_eq!(at(&t.lanes[0].failed), [(0, 1)]);
        let end = ((n - 2) / t.bin_us) as usize;
        assert_eq!(at(&t.lanes[0].retried), [(end, 1)]);
        assert_eq!((at(&t.lanes[1].failed), at(&t.lanes[1].retried)), (vec![(end, 1)], vec![]));
        // Drawn as bars, a failure is its bar's colour: no marks.
        let t = timeline(vec![Span { state: "failed", ..span(0, 0, 1) }], &[(0, "a".into())], (0, 1), None);
        assert!(t.lanes[0].failed.is_empty() && t.lanes[0].retried.is_empty());
    }
}
