//! [`Outbox`]: what a remote worker has to tell its coordinator and has not
//! told yet — results, output, goodbyes — and the jobs it carries until
//! their results are delivered. While the connection is down it keeps all
//! of it (the batch whose write failed too), so a worker whose coordinator
//! was killed can rejoin the resumed run and say what it carries
//! ([`Outbox::carried`]), then deliver what it kept. Results and output
//! delivered in the last [`RECENT`] are kept too: a coordinator killed just
//! after they reached it may not have recorded them, so they are carried
//! and sent again after a loss — less the output the resumed run says its
//! log already has ([`Outbox::resume`]). The output it holds is counted in
//! an [`OutputBudget`], whose limit makes the tasks wait rather than the
//! worker's memory grow. `outbox_writer.rs` is the connection's writer
//! that drains it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hashbrown::{HashMap, HashSet};

use super::output_budget::OutputBudget;
use crate::ir::TaskId;
use crate::log::{OutputRecord, OutputStream};
use crate::runtime::protocol::job::Job;
use crate::runtime::protocol::messages::{CarriedTask, StoredOutput, ToCoordinator};
use crate::runtime::protocol::outcome::Status;

/// Output bytes at most taken into one batch (the channel writes up to 256 KiB at once).
const BATCH_BYTES: usize = 256 << 10;
/// Messages at most taken into one batch.
const BATCH_MESSAGES: usize = 1024;
/// How long a delivered result or chunk of output is kept, to be sent
/// again should the connection drop: a coordinator records a result, and
/// writes output, within milliseconds.
pub(super) const RECENT: Duration = Duration::from_secs(10);

/// A job started here, carried until its result is delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Carried {
    attempt: u32,
    label: String,
    cpus: Vec<u32>,
    gpus: Vec<u32>,
}

/// Messages not yet delivered, and the jobs whose results are not.
#[derive(Debug)]
pub(super) struct Outbox {
    /// Waiting to be sent, oldest first.
    queue: VecDeque<ToCoordinator>,
    /// Jobs started here and not yet reported to a coordinator that heard it.
    jobs: HashMap<TaskId, Carried>,
    /// Attempts the coordinator said to forget: whatever they still say is dropped.
    forgotten: HashSet<(TaskId, u32)>,
    /// Delivered lately, oldest first: when, and a result (with its job) or a chunk of output.
    recent: VecDeque<(Instant, Option<Carried>, ToCoordinator)>,
    /// Bytes of output in `recent`.
    recent_bytes: usize,
    /// Bytes of stdout and of stderr each attempt wrote so far (that reached the outbox).
    written: HashMap<(TaskId, u32), [u64; 2]>,
    /// Output held that the coordinator does not have yet, and its limit.
    budget: Arc<OutputBudget>,
    /// The connection was found lost: what the writer still manages to
    /// write into it counts as not delivered.
    down: bool,
}

/// An [`Outbox`] shared by the worker's loop and its connection's writer.
pub(super) type SharedOutbox = Arc<Mutex<Outbox>>;

impl Outbox {
    /// An empty outbox counting what it holds in `budget`.
    pub(super) fn new(budget: Arc<OutputBudget>) -> Self {
        Self {
            queue: VecDeque::new(),
            jobs: HashMap::new(),
            forgotten: HashSet::new(),
            recent: VecDeque::new(),
            recent_bytes: 0,
            written: HashMap::new(),
            budget,
            down: false,
        }
    }

    /// `job` was accepted here.
    pub(super) fn start(&mut self, job: &Job) {
        let carried =
            Carried { attempt: job.attempt, label: job.label.clone(), cpus: job.cpus.clone(), gpus: job.gpus.clone() };
        self.carry(job.task, carried);
    }

    /// Carries `job` of `task` until its result is delivered.
    fn carry(&mut self, task: TaskId, job: Carried) {
        if !self.forgotten.is_empty() {
            self.forgotten.remove(&(task, job.attempt));
        }
        self.jobs.insert(task, job);
    }

    /// Job `task` was never started and will not be (it waited in line
    /// when the connection dropped): it is no longer carried.
    pub(super) fn drop_job(&mut self, task: TaskId) {
        self.jobs.remove(&task);
    }

    /// Queues `msg`, unless it is about an attempt to forget.
    pub(super) fn push(&mut self, msg: ToCoordinator) {
        if about(&msg).is_some_and(|of| self.forgotten.contains(&of)) {
            self.budget.give(output_len(&msg));
            return;
        }
        if let ToCoordinator::Output(record) = &msg
            && let Some(s) = stream_index(record.stream)
        {
            self.written.entry((record.task, record.attempt)).or_default()[s] += record.data.len() as u64;
        }
        self.queue.push_back(msg);
    }

    /// Forgets job `task`: drops what is kept about it and what it says
    /// later; returns its attempt if it was carried.
    pub(super) fn forget(&mut self, task: TaskId) -> Option<u32> {
        let attempt = self.jobs.remove(&task)?.attempt;
        let of = Some((task, attempt));
        self.forgotten.insert((task, attempt));
        self.written.remove(&(task, attempt));
        let mut dropped = 0;
        self.queue.retain(|msg| {
            let keep = about(msg) != of;
            dropped += if keep { 0 } else { output_len(msg) };
            keep
        });
        self.budget.give(dropped);
        let mut recent = 0;
        self.recent.retain(|(_, _, msg)| {
            let keep = about(msg) != of;
            recent += if keep { 0 } else { output_len(msg) };
            keep
        });
        self.recent_bytes -= recent;
        Some(attempt)
    }

    /// The jobs carried that have no result of their own queued: still
    /// running, or killed (the guard may have stopped them while the worker
    /// could not hear its coordinator). A fenced worker forgets them; the
    /// others, which ended on their own, are late results.
    pub(super) fn without_result(&self) -> Vec<TaskId> {
        let ended: HashSet<(TaskId, u32)> = self
            .queue
            .iter()
            .filter_map(|msg| match msg {
                ToCoordinator::Finished { task, attempt, outcome }
                    if !matches!(outcome.status, Status::Failed { signal: Some(_), .. } | Status::Stopped) =>
                {
                    Some((*task, *attempt))
                }
                _ => None,
            })
            .collect();
        let mut tasks: Vec<TaskId> =
            self.jobs.iter().filter(|(task, job)| !ended.contains(&(**task, job.attempt))).map(|(t, _)| *t).collect();
        tasks.sort_unstable();
        tasks
    }

    /// The jobs carried, for a hello to a coordinator after losing one:
    /// each running, or ended with its report still queued.
    pub(super) fn carried(&self) -> Vec<CarriedTask> {
        let ended: HashSet<(TaskId, u32)> = self
            .queue
            .iter()
            .filter_map(|msg| match msg {
                ToCoordinator::Finished { task, attempt, .. } => Some((*task, *attempt)),
                _ => None,
            })
            .collect();
        let mut carried: Vec<CarriedTask> = self
            .jobs
            .iter()
            .map(|(&task, job)| CarriedTask {
                task,
                attempt: job.attempt,
                label: job.label.clone(),
                finished: ended.contains(&(task, job.attempt)),
                cpus: job.cpus.clone(),
                gpus: job.gpus.clone(),
            })
            .collect();
        carried.sort_unstable_by_key(|c| c.task);
        carried
    }

    /// Takes the next batch to send: messages from the front, up to about
    /// [`BATCH_BYTES`] of output.
    pub(super) fn take_batch(&mut self) -> Vec<ToCoordinator> {
        let mut bytes = 0;
        let mut n = 0;
        for msg in self.queue.iter().take(BATCH_MESSAGES) {
            n += 1;
            bytes += output_len(msg);
            if bytes >= BATCH_BYTES {
                break;
            }
        }
        self.queue.drain(..n).collect()
    }

    /// `batch[..sent]` reached the coordinator at `now`: results delivered
    /// end their jobs here; they and the output delivered are kept as
    /// recent (output as long as what is held stays under the budget's
    /// limit); the rest of the batch goes back to the front of the queue.
    pub(super) fn sent(&mut self, mut batch: Vec<ToCoordinator>, sent: usize, now: Instant) {
        if self.down {
            // Written after the loss was found: the coordinator may be gone.
            self.put_back(batch);
            return;
        }
        while let Some((at, job, msg)) = self.recent.front() {
            if now.duration_since(*at) <= RECENT {
                break;
            }
            self.recent_bytes -= output_len(msg);
            if let (Some(job), Some((task, _))) = (job, about(msg)) {
                // Its result is in for good: nothing of it is sent again.
                self.written.remove(&(task, job.attempt));
            }
            self.recent.pop_front();
        }
        for msg in batch.drain(..sent.min(batch.len())) {
            match &msg {
                ToCoordinator::Finished { task, attempt, .. } => {
                    if self.jobs.get(task).is_some_and(|job| job.attempt == *attempt)
                        && let Some(job) = self.jobs.remove(task)
                    {
                        self.recent.push_back((now, Some(job), msg));
                    }
                }
                ToCoordinator::Output(record) => {
                    self.budget.give(record.data.len());
                    self.recent_bytes += record.data.len();
                    self.recent.push_back((now, None, msg));
                }
                _ => {}
            }
        }
        self.put_back(batch);
        self.trim_recent();
    }

    /// Drops the oldest output kept as recent while what is held, with it,
    /// is over the budget's limit: it was delivered, and new output comes first.
    fn trim_recent(&mut self) {
        let mut excess = (self.budget.held() + self.recent_bytes).saturating_sub(self.budget.limit());
        if excess == 0 {
            return;
        }
        let mut dropped = 0;
        self.recent.retain(|(_, _, msg)| {
            let bytes = output_len(msg);
            if excess == 0 || bytes == 0 {
                return true;
            }
            excess = excess.saturating_sub(bytes);
            dropped += bytes;
            false
        });
        self.recent_bytes -= dropped;
    }

    /// The connection dropped at `now`: the results delivered in the last
    /// [`RECENT`] go back to the front of the queue, their jobs carried
    /// again — the coordinator may have died before it recorded them — and
    /// with them the output of carried jobs delivered then, which it may
    /// not have written.
    pub(super) fn lost(&mut self, now: Instant) {
        self.down = true;
        let recent: Vec<_> =
            std::mem::take(&mut self.recent).into_iter().filter(|(at, ..)| now.duration_since(*at) <= RECENT).collect();
        self.recent_bytes = 0;
        let mut back = Vec::with_capacity(recent.len());
        for (_, job, msg) in &recent {
            if let (Some(job), Some((task, _))) = (job, about(msg))
                && !self.jobs.contains_key(&task)
            {
                self.jobs.insert(task, job.clone());
            }
        }
        for (_, _, msg) in recent {
            if about(&msg).is_some_and(|(task, attempt)| self.jobs.get(&task).is_some_and(|j| j.attempt == attempt)) {
                self.budget.add(output_len(&msg));
                back.push(msg);
            }
        }
        for msg in back.into_iter().rev() {
            self.queue.push_front(msg);
        }
    }

    /// The run this worker rejoined has the first bytes of the output of
    /// the tasks it adopted (`stored`): what is kept of those is dropped,
    /// so each byte reaches its log once. Bytes the run lacks that are no
    /// longer kept are said to be lost, in the task's output.
    pub(super) fn resume(&mut self, stored: &[StoredOutput]) {
        let has: HashMap<(TaskId, u32), [u64; 2]> =
            stored.iter().map(|s| ((s.task, s.attempt), [s.stdout, s.stderr])).collect();
        // Where what is kept of each stream starts: all written, less what is queued.
        let mut at: HashMap<(TaskId, u32), [u64; 2]> =
            has.keys().map(|key| (*key, self.written.get(key).copied().unwrap_or_default())).collect();
        for msg in &self.queue {
            if let ToCoordinator::Output(r) = msg
                && let (Some(s), Some(at)) = (stream_index(r.stream), at.get_mut(&(r.task, r.attempt)))
            {
                at[s] -= r.data.len() as u64;
            }
        }
        let mut notes = Vec::new();
        for (key, from) in &at {
            for (s, stream) in [OutputStream::Stdout, OutputStream::Stderr].into_iter().enumerate() {
                let gap = from[s].saturating_sub(has[key][s]);
                if gap > 0 {
                    let data = format!(
                        "flow worker: {gap} bytes of this attempt's {} are lost: its coordinator was killed \
                         before writing them, and the worker no longer kept them\n",
                        stream.as_str()
                    );
                    let time_us = crate::host::now_us();
                    let (task, attempt) = *key;
                    let record =
                        OutputRecord { task, attempt, stream: OutputStream::System, time_us, data: data.into() };
                    notes.push(ToCoordinator::Output(record));
                }
            }
        }
        let mut dropped = 0;
        self.queue.retain_mut(|msg| {
            let ToCoordinator::Output(r) = msg else { return true };
            let (Some(s), Some(at)) = (stream_index(r.stream), at.get_mut(&(r.task, r.attempt))) else { return true };
            let (start, len) = (at[s], r.data.len() as u64);
            at[s] += len;
            let have = has[&(r.task, r.attempt)][s];
            let cut = have.saturating_sub(start).min(len) as usize;
            r.data.drain(..cut);
            dropped += cut;
            !r.data.is_empty()
        });
        self.budget.give(dropped);
        notes.sort_by_key(about);
        for note in notes.into_iter().rev() {
            self.budget.add(output_len(&note));
            self.queue.push_front(note);
        }
    }

    /// The write of `batch` failed: it goes back to the front of the
    /// queue, less what was forgotten meanwhile, to be sent again.
    pub(super) fn put_back(&mut self, batch: Vec<ToCoordinator>) {
        for msg in batch.into_iter().rev() {
            if about(&msg).is_some_and(|of| self.forgotten.contains(&of)) {
                self.budget.give(output_len(&msg));
            } else {
                self.queue.push_front(msg);
            }
        }
    }

    /// Whether the connection was found lost and no new one came yet.
    pub(super) fn is_down(&self) -> bool {
        self.down
    }

    /// A new connection takes what is kept.
    pub(super) fn reconnected(&mut self) {
        self.down = false;
    }

    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Whether the next message is a result.
    pub(super) fn result_first(&self) -> bool {
        matches!(self.queue.front(), Some(ToCoordinator::Finished { .. }))
    }
}

/// The attempt a message is about, if it is about one.
fn about(msg: &ToCoordinator) -> Option<(TaskId, u32)> {
    match msg {
        ToCoordinator::Finished { task, attempt, .. } => Some((*task, *attempt)),
        ToCoordinator::Output(record) => Some((record.task, record.attempt)),
        _ => None,
    }
}

/// The bytes of output a message carries.
fn output_len(msg: &ToCoordinator) -> usize {
    match msg {
        ToCoordinator::Output(record) => record.data.len(),
        _ => 0,
    }
}

/// Where `stream` is counted in [`Outbox::written`]: stdout and stderr only
/// (a worker's own messages are not the task's output).
fn stream_index(stream: OutputStream) -> Option<usize> {
    match stream {
        OutputStream::Stdout => Some(0),
        OutputStream::Stderr => Some(1),
        OutputStream::System | OutputStream::Allocation => None,
    }
}

/// Locks `outbox` (a panic elsewhere while it was held leaves it usable).
pub(super) fn lock(outbox: &SharedOutbox) -> std::sync::MutexGuard<'_, Outbox> {
    outbox.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
