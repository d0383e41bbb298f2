//! [`Explainer`]: turns a [`RunView`] and its [`RunJournal`] into an
//! [`Explanation`] per task instance.
//!
//! An instance that has not finished is explained by the first of these
//! that holds: it waits for upstream instances; no worker fits it; its
//! time request outlives every worker that fits; there are no workers; it
//! is ready and waits for a free slot. The last four depend only on its
//! task, the first on its upstream instances, which are counted in ranges
//! through prefix sums, so explaining every instance of a large array stays
//! linear in its size.

use std::cell::OnceCell;
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use crate::ir::{GroupId, Resources, TaskId, Upstream};
use crate::log::{JournalEntry, State};
use crate::resources::{Capacity, ends_in_time, finishes_in, worker_time_limit};
use crate::rundir::{AllocState, QueueRecord, RunJournal, RunView};

use super::explanation::{
    Earlier, Explanation, QueueWait, QueuedAllocation, Ran, Reason, UpstreamInstance, UpstreamWait, WorkerRef,
};

/// Upstream instances listed per upstream task.
const EXAMPLES: usize = 3;

/// Explains the instances of one run.
pub struct Explainer<'a> {
    run: &'a RunView,
    journal: &'a RunJournal,
    /// When the run is explained (µs since the Unix epoch): worker
    /// lifetimes are measured from here.
    now_us: u64,
    /// Instance classes of every group some edge leaves from.
    classes: HashMap<GroupId, Classes>,
    /// Tasks running now.
    running: u64,
    /// Connected workers running at least one task.
    busy: usize,
    /// Per group, once asked: where its ready instances could run, and the
    /// queue's notes about it (the same for every instance).
    placements: Vec<OnceCell<Reason>>,
    notes: Vec<OnceCell<Vec<String>>>,
}

/// Where an upstream instance stands, as far as its dependents care.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Not finished and not running.
    Open,
    /// Succeeded or cached.
    Done,
    /// Failed or cancelled for good: its dependents will be cancelled.
    Failed,
    /// Running.
    Running,
}

/// Prefix counts of the classes of one group's instances: `done[p]` is how
/// many of the positions before `p` are [`Class::Done`], and so on.
struct Classes {
    done: Vec<u64>,
    failed: Vec<u64>,
    running: Vec<u64>,
}

impl Classes {
    fn new(classes: &[Class]) -> Self {
        let prefix = |class: Class| {
            let mut sums = Vec::with_capacity(classes.len() + 1);
            sums.push(0);
            let mut n = 0;
            for &c in classes {
                n += u64::from(c == class);
                sums.push(n);
            }
            sums
        };
        Self { done: prefix(Class::Done), failed: prefix(Class::Failed), running: prefix(Class::Running) }
    }

    /// How many positions before `p` are of `class`.
    fn before(&self, class: Class, p: u64) -> u64 {
        let p = p as usize;
        match class {
            Class::Done => self.done[p],
            Class::Failed => self.failed[p],
            Class::Running => self.running[p],
            Class::Open => p as u64 - self.done[p] - self.failed[p] - self.running[p],
        }
    }

    /// How many of `[start, end)` are of `class`.
    fn count(&self, class: Class, start: u64, end: u64) -> u64 {
        self.before(class, end) - self.before(class, start)
    }

    /// The first position in `[from, end)` of `class`, by binary search.
    fn next(&self, class: Class, from: u64, end: u64) -> Option<u64> {
        let base = self.before(class, from);
        if from >= end || self.before(class, end) == base {
            return None;
        }
        let (mut lo, mut hi) = (from, end - 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.before(class, mid + 1) > base { hi = mid } else { lo = mid + 1 }
        }
        Some(lo)
    }
}

impl<'a> Explainer<'a> {
    /// Prepares to explain instances of `run`, whose journal is `journal`, as of `now_us`.
    pub fn new(run: &'a RunView, journal: &'a RunJournal, now_us: u64) -> Self {
        let graph = &run.graph;
        let sources: BTreeSet<GroupId> =
            graph.edges.iter().map(|e| e.from).filter(|g| g.index() < graph.groups.len()).collect();
        let mut dense: HashMap<GroupId, Vec<Class>> =
            sources.iter().map(|&g| (g, vec![Class::Open; graph.group(g).count as usize])).collect();
        let (mut running, mut busy) = (0, BTreeSet::new());
        for (&task, entry) in journal.state.iter() {
            if entry.status == State::Running {
                running += 1;
                busy.extend(entry.worker.filter(|w| run.workers.iter().any(|info| info.id == *w)));
            }
            if let Some(slot) = dense.get_mut(&task.group).and_then(|d| d.get_mut(task.instance as usize)) {
                *slot = Self::class_of(run, journal, task, entry);
            }
        }
        let classes = dense.into_iter().map(|(g, d)| (g, Classes::new(&d))).collect();
        let groups = run.graph.groups.len();
        Self {
            run,
            journal,
            now_us,
            classes,
            running: if run.live { running } else { 0 },
            busy: busy.len(),
            placements: (0..groups).map(|_| OnceCell::new()).collect(),
            notes: (0..groups).map(|_| OnceCell::new()).collect(),
        }
    }

    /// Explains instance `task` (which must be in the graph).
    pub fn explain(&self, task: TaskId) -> Explanation {
        let run = self.run;
        let group = run.graph.group(task.group);
        let (reason, earlier) = match self.journal.state.get(task) {
            None if run.live => (self.waiting(task), None),
            None => (Reason::NotRun { running: None }, None),
            Some(entry) => match entry.status {
                State::Succeeded => (Reason::Succeeded { attempt: entry.attempt, ran: self.ran(entry) }, None),
                State::Cached => (Reason::Cached { ran: self.ran(entry) }, None),
                State::Cancelled => {
                    (Reason::Cancelled { message: entry.reason.clone(), ended_us: entry.ended_us }, None)
                }
                State::Skipped => (Reason::Skipped { message: entry.reason.clone(), ended_us: entry.ended_us }, None),
                State::Running if run.live => (Reason::Running { attempt: entry.attempt, ran: self.ran(entry) }, None),
                State::Running => (Reason::NotRun { running: Some(self.ran(entry)) }, None),
                State::Failed if !self.journal.failed_for_good(&run.graph, task) => {
                    let left = group.retries.saturating_sub(self.journal.failures(task));
                    let reason = match entry.retry_at_us {
                        Some(until_us) => {
                            Reason::Retrying { attempt: entry.attempt + 1, attempts: group.retries + 1, until_us }
                        }
                        None => self.waiting(task),
                    };
                    (reason, Some(earlier(entry, State::Failed, Some(left))))
                }
                State::Failed => (
                    Reason::Failed {
                        attempt: entry.attempt,
                        retries: group.retries,
                        exit_code: entry.exit_code,
                        signal: entry.signal,
                        message: entry.reason.clone(),
                        ran: self.ran(entry),
                    },
                    None,
                ),
                State::Lost if run.live => (self.waiting(task), Some(earlier(entry, State::Lost, None))),
                State::Lost => (Reason::Lost { attempt: entry.attempt, ran: self.ran(entry) }, None),
                // Words for what a journal never records: as no record.
                State::Waiting | State::Retrying | State::NotRun if run.live => (self.waiting(task), None),
                State::Waiting | State::Retrying | State::NotRun => (Reason::NotRun { running: None }, None),
            },
        };
        let queue_notes = if reason.state() == State::Waiting { self.queue_notes(task.group) } else { Vec::new() };
        Explanation {
            task: group.name.clone(),
            index: run.graph.index(task.group, task.instance),
            label: run.graph.label(task),
            state: reason.state(),
            reason,
            earlier,
            queue_notes,
        }
    }

    /// Why an instance that may still run has not started.
    fn waiting(&self, task: TaskId) -> Reason {
        let mut upstream = Vec::new();
        let mut doomed = false;
        for up in self.run.graph.upstream(task) {
            if let Some(wait) = self.upstream_wait(&up) {
                doomed |= wait.failed > 0;
                upstream.push(wait);
            }
        }
        if upstream.is_empty() {
            self.placements[task.group.index()].get_or_init(|| self.placement(task.group)).clone()
        } else {
            Reason::Dependencies { upstream, doomed }
        }
    }

    /// What the queue noted about `group` (the tasks it can never run).
    fn queue_notes(&self, group: GroupId) -> Vec<String> {
        let notes = self.notes[group.index()].get_or_init(|| {
            let Some(queue) = self.queue() else { return Vec::new() };
            // Lines read "`task`: why"; a name inside another task's reason is no match.
            let name = format!("`{}`: ", self.run.graph.group(group).name);
            queue.unschedulable.iter().filter(|line| line.starts_with(&name)).cloned().collect()
        });
        notes.clone()
    }

    /// The instances of `up` that have not succeeded, if any.
    fn upstream_wait(&self, up: &Upstream) -> Option<UpstreamWait> {
        let classes = self.classes.get(&up.group)?;
        let sum = |class| up.instances.iter().map(|r| classes.count(class, r.start, r.end)).sum::<u64>();
        let total = up.count();
        let not_done = total - sum(Class::Done);
        if not_done == 0 {
            return None;
        }
        let mut examples = Vec::new();
        for class in [Class::Failed, Class::Running, Class::Open] {
            for r in &up.instances {
                let mut from = r.start;
                while examples.len() < EXAMPLES
                    && let Some(p) = classes.next(class, from, r.end)
                {
                    examples.push(self.upstream_instance(TaskId::new(up.group, p)));
                    from = p + 1;
                }
            }
        }
        let task = self.run.graph.group(up.group).name.clone();
        Some(UpstreamWait { task, total, not_done, failed: sum(Class::Failed), examples })
    }

    fn upstream_instance(&self, task: TaskId) -> UpstreamInstance {
        let entry = self.journal.state.get(task);
        let state = match entry.map(|e| e.status) {
            None | Some(State::Succeeded | State::Cached | State::Skipped | State::Waiting | State::NotRun) => {
                State::Waiting
            }
            Some(State::Retrying) => State::Retrying,
            Some(State::Running) => State::Running,
            Some(State::Failed) if self.journal.failed_for_good(&self.run.graph, task) => State::Failed,
            Some(State::Failed) => State::Retrying,
            Some(State::Cancelled) => State::Cancelled,
            Some(State::Lost) => State::Lost,
        };
        UpstreamInstance {
            label: self.run.graph.label(task),
            state,
            worker: entry.and_then(|e| e.worker),
            exit_code: entry.and_then(|e| e.exit_code),
            signal: entry.and_then(|e| e.signal),
            message: entry.and_then(|e| e.reason.clone()),
        }
    }

    /// Why a ready instance of `group` is not running: workers, their
    /// resources and lifetimes, the queue — in that order.
    fn placement(&self, group: GroupId) -> Reason {
        let run = self.run;
        let group = run.graph.group(group);
        let default = [Resources::default()];
        let variants = if group.variants.is_empty() { &default[..] } else { &group.variants[..] };
        let nodes = group.nodes.max(1);
        let workers = &run.workers;
        if workers.is_empty() {
            if let Some(queue) = self.queue() {
                let limit = worker_time_limit(queue.time_limit_s);
                let times: Vec<Option<u64>> = variants.iter().map(|v| v.time_request).collect();
                let late = |t: u64| !finishes_in(Some(Duration::from_secs(t)), Some(Duration::from_secs(limit)));
                if times.iter().all(|t| t.is_some_and(late)) {
                    let seconds = times.iter().flatten().copied().min().unwrap_or(0);
                    return Reason::TimeRequest { seconds, longest_left_s: None, queue_worker_s: Some(limit) };
                }
            }
            return Reason::NoWorkers { queue: self.queue_wait() };
        }
        let capacities: Vec<Capacity> = workers.iter().map(|w| w.shape.capacity()).collect();
        let fits = |c: &Capacity| variants.iter().any(|v| c.fits(v));
        let fitting = capacities.iter().filter(|c| fits(c)).count();
        if fitting < nodes as usize {
            let shortfalls = if fitting == 0 {
                variants.iter().map(|v| Capacity::shortfall_among(&capacities, v)).collect()
            } else {
                Vec::new()
            };
            return Reason::Resources { nodes, fitting, workers: workers.len(), variants: shortfalls };
        }
        let now = self.now_us;
        let timely = workers
            .iter()
            .zip(&capacities)
            .filter(|(w, c)| {
                variants
                    .iter()
                    .any(|v| c.fits(v) && ends_in_time(v.time_request.map(Duration::from_secs), w.deadline, now))
            })
            .count();
        if timely < nodes as usize {
            let seconds = variants
                .iter()
                .filter(|v| capacities.iter().any(|c| c.fits(v)))
                .filter_map(|v| v.time_request)
                .min()
                .unwrap_or(0);
            let longest_left_s = workers
                .iter()
                .zip(&capacities)
                .filter(|(_, c)| fits(c))
                .filter_map(|(w, _)| w.deadline)
                .map(|d| d.left(now).as_secs())
                .max();
            let queue_worker_s = self.queue().map(|q| worker_time_limit(q.time_limit_s));
            return Reason::TimeRequest { seconds, longest_left_s, queue_worker_s };
        }
        Reason::Ready { running: self.running, workers: workers.len(), busy: self.busy, nodes }
    }

    fn queue(&self) -> Option<&'a QueueRecord> {
        self.run.allocs.as_ref()?.queue.as_ref()
    }

    /// What the queue is doing, if the run has one.
    fn queue_wait(&self) -> Option<QueueWait> {
        let queue = self.queue()?;
        let allocations = self.run.allocs.as_ref().map_or(&[][..], |a| &a.allocations[..]);
        let queued = allocations
            .iter()
            .filter(|a| a.state == AllocState::Queued)
            .map(|a| QueuedAllocation { job_id: a.job_id.clone(), submitted_us: a.submitted_us })
            .collect();
        let last_failure = allocations
            .iter()
            .rev()
            .find(|a| a.state == AllocState::Failed)
            .map(|a| a.reason.clone().unwrap_or_else(|| "no reason recorded".to_owned()));
        Some(QueueWait {
            manager: queue.manager,
            paused: queue.paused.clone(),
            queued,
            starting: allocations.iter().filter(|a| a.state == AllocState::Running).count(),
            submitted: allocations.len(),
            last_failure,
        })
    }

    fn class_of(run: &RunView, journal: &RunJournal, task: TaskId, entry: &JournalEntry) -> Class {
        match entry.status {
            // A skipped instance counts as done for what waits on it.
            State::Succeeded | State::Cached | State::Skipped => Class::Done,
            State::Cancelled => Class::Failed,
            State::Failed if journal.failed_for_good(&run.graph, task) => Class::Failed,
            State::Failed => Class::Open,
            State::Running => Class::Running,
            State::Lost | State::Waiting | State::Retrying | State::NotRun => Class::Open,
        }
    }

    /// Where and when an attempt ran.
    fn ran(&self, entry: &JournalEntry) -> Ran {
        let worker = entry.worker.map(|id| {
            // A worker that left before the end is only in `left`.
            let info = self.run.workers.iter().chain(&self.run.left).find(|w| w.id == id);
            WorkerRef {
                id,
                host: info.map(|w| w.hostname.clone()),
                allocation: info.and_then(|w| w.allocation.clone()),
            }
        });
        Ran {
            worker,
            started_us: entry.started_us,
            queue_wait_us: entry.queue_wait_us(),
            ended_us: entry.ended_us,
            duration_us: entry.duration_us(),
        }
    }
}

/// The attempt that ended before a wait to run again.
fn earlier(entry: &JournalEntry, status: State, retries_left: Option<u32>) -> Earlier {
    Earlier {
        attempt: entry.attempt,
        status,
        exit_code: entry.exit_code,
        signal: entry.signal,
        message: entry.reason.clone(),
        worker: entry.worker,
        retries_left,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_count_and_find_in_ranges() {
        use Class::{Done, Failed, Open, Running};
        let classes = Classes::new(&[Done, Open, Failed, Done, Running, Open, Done]);
        assert_eq!(classes.count(Done, 0, 7), 3);
        assert_eq!(classes.count(Open, 1, 6), 2);
        assert_eq!(classes.count(Failed, 3, 7), 0);
        assert_eq!(classes.next(Open, 0, 7), Some(1));
        assert_eq!(classes.next(Open, 2, 7), Some(5));
        assert_eq!(classes.next(Open, 2, 5), None);
        assert_eq!(classes.next(Running, 0, 7), Some(4));
        assert_eq!(classes.next(Done, 4, 7), Some(6));
        assert_eq!(classes.next(Done, 7, 7), None);
    }
}
