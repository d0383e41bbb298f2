//! [`AllocQueue`]: the allocations of one run's queue and their states,
//! learned from workers connecting and leaving (and a rare poll of the
//! manager for allocations no worker came from). It decides nothing about
//! when to submit (that is [`super::planner`]) and runs no commands itself
//! (that is [`super::manager`]); it keeps the books and writes `allocs.json`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::manager::last_lines;
use super::manager_error::ManagerError;
use super::planner::{Fit, QueueLoad};
use super::script::{ScriptContext, job_name, script};
use crate::host::now_us;
use crate::log::{OutputRecord, OutputStream};
use crate::profile::Queue;
use crate::rundir::RunDir;
use crate::rundir::{AllocRecord, AllocState, AllocsFile, QueueRecord};

/// Allocations failing in a row before the queue pauses.
const FAILURES_TO_PAUSE: u32 = 3;
/// A worker that leaves uncleanly sooner than this after joining "died at once".
const QUICK_DEATH: Duration = Duration::from_secs(30);

/// What changed, for the run's display.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The allocation.
    pub record: AllocRecord,
    /// Set when this change paused the queue: why.
    pub paused: Option<String>,
}

/// The allocations of a run's queue.
#[derive(Debug)]
pub struct AllocQueue {
    /// The queue's settings.
    pub queue: Queue,
    /// How each group fits the queue's workers.
    pub fits: Vec<Fit>,
    record: QueueRecord,
    allocations: Vec<AllocRecord>,
    /// Per allocation: why one of its workers died at once while others ran
    /// on; it fails with that reason when the last one leaves.
    died: Vec<Option<String>>,
    failures_in_row: u32,
    run: RunDir,
    flow: String,
    last_poll: Instant,
}

impl AllocQueue {
    /// A queue with nothing submitted yet.
    pub fn new(profile: &str, queue: Queue, fits: Vec<Fit>, run: &RunDir) -> Self {
        let s = &queue.settings;
        let record = QueueRecord {
            profile: profile.to_owned(),
            manager: s.manager,
            time_limit_s: queue.time_limit,
            workers_per_allocation: s.workers_per_allocation,
            max_workers: s.max_workers,
            backlog: s.backlog,
            paused: None,
            unschedulable: Vec::new(),
        };
        let flow = queue.flow_command();
        AllocQueue {
            queue,
            fits,
            record,
            allocations: Vec::new(),
            died: Vec::new(),
            failures_in_row: 0,
            run: run.clone(),
            flow,
            last_poll: Instant::now(),
        }
    }

    /// The manager's job name for this run's allocations.
    pub fn job_name(&self) -> String {
        job_name(&self.run.id)
    }

    /// Why the queue stopped submitting, if it did.
    pub fn paused(&self) -> Option<&str> {
        self.record.paused.as_deref()
    }

    /// Stops submitting, saying why.
    pub fn pause(&mut self, reason: String) {
        self.record.paused = Some(reason);
        self.write();
    }

    /// The state of allocation `id`.
    pub fn record(&self, id: u32) -> AllocState {
        self.index(id).map_or(AllocState::Failed, |i| self.allocations[i].state)
    }

    /// Records tasks that can never run on this queue (shown once each).
    pub fn unschedulable(&mut self, lines: impl IntoIterator<Item = String>) {
        self.record.unschedulable.extend(lines);
        self.write();
    }

    /// Connected workers and allocations not yet started.
    pub fn load(&self) -> QueueLoad {
        let mut load = QueueLoad::default();
        for a in &self.allocations {
            match a.state {
                AllocState::Queued => load.queued += 1,
                AllocState::Running => load.connected += u64::from(a.connected),
                _ => {}
            }
        }
        load
    }

    /// Whether an allocation is still being submitted or waits in the manager's queue.
    pub fn has_active(&self) -> bool {
        self.allocations.iter().any(|a| a.state.is_active())
    }

    /// Allocations being submitted right now.
    pub fn submitting(&self) -> usize {
        self.allocations.iter().filter(|a| a.state == AllocState::Queued && a.job_id.is_empty()).count()
    }

    /// Writes the script of a new allocation; returns its id and the script's path.
    pub fn prepare(&mut self) -> std::io::Result<(u32, PathBuf)> {
        let id = self.allocations.len() as u32 + 1;
        let dir = self.run.path.join("allocs");
        let script_path = dir.join(format!("{id}.sh"));
        let output = dir.join(format!("{id}.out"));
        let cx = ScriptContext { run_id: &self.run.id, access: &self.run.access(), output: &output, flow: &self.flow };
        self.run.write_file(&script_path, script(&self.queue, &cx).as_bytes())?;
        self.allocations.push(AllocRecord {
            id,
            job_id: String::new(),
            state: AllocState::Queued,
            workers: self.queue.settings.workers_per_allocation,
            connected: 0,
            joined: 0,
            submitted_us: now_us(),
            started_us: None,
            ended_us: None,
            reason: None,
            script: format!("allocs/{id}.sh"),
            output: format!("allocs/{id}.out"),
        });
        self.died.push(None);
        self.write();
        Ok((id, script_path))
    }

    /// The manager answered a submission.
    pub fn submitted(&mut self, id: u32, result: Result<String, ManagerError>) -> Option<Change> {
        let i = self.index(id)?;
        match result {
            Ok(job_id) => {
                self.allocations[i].job_id = job_id;
                self.write();
                Some(Change { record: self.allocations[i].clone(), paused: None })
            }
            Err(error) => Some(self.failed(i, error.to_string())),
        }
    }

    /// A worker of job `job_id` connected; `None` if the job is not ours.
    pub fn joined(&mut self, job_id: &str) -> Option<Change> {
        let i = self.allocations.iter().position(|a| a.job_id == job_id)?;
        let a = &mut self.allocations[i];
        a.connected += 1;
        a.joined += 1;
        let first = a.state == AllocState::Queued;
        if first {
            a.state = AllocState::Running;
            a.started_us = Some(now_us());
        }
        self.write();
        first.then(|| Change { record: self.allocations[i].clone(), paused: None })
    }

    /// A worker of job `job_id` left after `lived` connected; `clean` if it
    /// said why (idle, time limit, run over) rather than vanishing.
    pub fn left(&mut self, job_id: &str, lived: Duration, clean: bool, reason: &str) -> Option<Change> {
        let i = self.allocations.iter().position(|a| a.job_id == job_id)?;
        let a = &mut self.allocations[i];
        a.connected = a.connected.saturating_sub(1);
        if !clean && lived < QUICK_DEATH {
            let lived = crate::units::duration(lived.as_secs() * 1_000_000, crate::units::DurationStyle::Whole);
            let why = format!("its worker died {lived} after starting: {reason}");
            if a.connected == 0 {
                let why = self.died[i].take().unwrap_or(why);
                return Some(self.failed(i, why));
            }
            self.died[i] = Some(why);
            self.write();
            return None;
        }
        self.failures_in_row = 0;
        let a = &mut self.allocations[i];
        if a.connected > 0 || a.state != AllocState::Running {
            self.write();
            return None;
        }
        if let Some(why) = self.died[i].take() {
            return Some(self.failed(i, why));
        }
        let a = &mut self.allocations[i];
        a.state = AllocState::Finished;
        a.ended_us = Some(now_us());
        a.reason = Some(reason.to_owned());
        self.write();
        Some(Change { record: self.allocations[i].clone(), paused: None })
    }

    /// Whether it is time to ask the manager about allocations no worker came from.
    pub fn poll_due(&mut self) -> Option<Vec<String>> {
        if self.last_poll.elapsed() < Duration::from_secs(self.queue.poll_interval) {
            return None;
        }
        let ids: Vec<String> = self
            .allocations
            .iter()
            .filter(|a| a.state == AllocState::Queued && !a.job_id.is_empty())
            .map(|a| a.job_id.clone())
            .collect();
        if ids.is_empty() {
            return None;
        }
        self.last_poll = Instant::now();
        Some(ids)
    }

    /// The manager listed `alive` among the allocations polled (`ids`):
    /// the others ended before any worker connected.
    pub fn polled(&mut self, ids: &[String], alive: &HashSet<String>) -> Vec<Change> {
        let mut changes = Vec::new();
        for id in ids {
            if alive.contains(id) {
                continue;
            }
            let Some(i) = self.allocations.iter().position(|a| &a.job_id == id) else { continue };
            if self.allocations[i].state != AllocState::Queued {
                continue;
            }
            let tail = self.output_tail(i);
            let why = if tail.is_empty() {
                "it ended before any worker connected".to_owned()
            } else {
                format!("it ended before any worker connected; its output ends with: {tail}")
            };
            changes.push(self.failed(i, why));
        }
        changes
    }

    /// Cancels every allocation still queued or running (the run is over);
    /// returns the manager's error if cancelling failed.
    pub fn cancel_all(&mut self) -> Result<(), ManagerError> {
        let mut ids = Vec::new();
        for a in self.allocations.iter_mut().filter(|a| a.state.is_active()) {
            if !a.job_id.is_empty() {
                ids.push(a.job_id.clone());
            }
            a.state = if a.joined > 0 { AllocState::Finished } else { AllocState::Cancelled };
            a.connected = 0;
            a.ended_us = Some(now_us());
            a.reason.get_or_insert_with(|| "the run ended".to_owned());
        }
        let result = super::manager::cancel(self.queue.settings.manager, &ids);
        self.write();
        result
    }

    /// Each allocation's output file as run-log records (stream `allocation`).
    pub fn outputs(&self) -> Vec<OutputRecord> {
        let mut records = Vec::new();
        for a in &self.allocations {
            let Ok(data) = fs_err::read(self.run.path.join(&a.output)) else { continue };
            for chunk in data.chunks(1 << 20) {
                records.push(OutputRecord {
                    task: OutputRecord::allocation(a.id),
                    attempt: 0,
                    stream: OutputStream::Allocation,
                    time_us: a.ended_us.unwrap_or_else(now_us),
                    data: chunk.to_vec(),
                });
            }
        }
        records
    }

    /// Whether `job_id` is one of this queue's allocations.
    pub fn owns(&self, job_id: &str) -> bool {
        !job_id.is_empty() && self.allocations.iter().any(|a| a.job_id == job_id)
    }

    /// The job ids of every allocation submitted.
    pub fn job_ids(&self) -> Vec<String> {
        self.allocations.iter().filter(|a| !a.job_id.is_empty()).map(|a| a.job_id.clone()).collect()
    }

    /// Rewrites `allocs.json`, for `flow alloc` and `flow explain`.
    pub fn write(&self) {
        let file = AllocsFile { queue: Some(self.record.clone()), allocations: self.allocations.clone() };
        let _ = self.run.write_allocs(&file);
    }

    fn index(&self, id: u32) -> Option<usize> {
        let i = id.checked_sub(1)? as usize;
        (i < self.allocations.len()).then_some(i)
    }

    /// Allocation `i` failed: count it, and pause the queue after
    /// [`FAILURES_TO_PAUSE`] in a row.
    fn failed(&mut self, i: usize, reason: String) -> Change {
        let a = &mut self.allocations[i];
        if a.state.is_active() {
            a.state = AllocState::Failed;
            a.ended_us = Some(now_us());
            a.reason = Some(reason.clone());
            self.failures_in_row += 1;
        }
        let mut paused = None;
        if self.failures_in_row >= FAILURES_TO_PAUSE && self.record.paused.is_none() {
            let manager = self.queue.settings.manager.name();
            let why = format!(
                "the {manager} queue is paused after {} failed allocations in a row; the last one: {reason}",
                self.failures_in_row
            );
            self.record.paused = Some(why.clone());
            paused = Some(why);
        }
        self.write();
        Change { record: self.allocations[i].clone(), paused }
    }

    /// The last lines of allocation `i`'s output file, on one line.
    fn output_tail(&self, i: usize) -> String {
        let path = self.run.path.join(&self.allocations[i].output);
        last_lines(&fs_err::read_to_string(path).unwrap_or_default(), 3)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::diag::Source;
    use crate::profile;
    use crate::rundir::ALLOCS_FILE;

    fn queue(dir: &Path) -> AllocQueue {
        let text = "[profile.p.queue]\nmanager = \"slurm\"\ntime_limit = \"1h\"\nbacklog = 2\n";
        let q = profile::load(&Source::new("p.toml", text), "p").unwrap().queue.unwrap();
        AllocQueue::new("p", q, Vec::new(), &RunDir { id: "run1".to_owned(), path: dir.to_path_buf() })
    }

    fn invalid_account() -> ManagerError {
        ManagerError::FailedSaying {
            program: "sbatch".into(),
            status: "exit code 1".into(),
            said: "sbatch: error: Invalid account".into(),
        }
    }

    fn saved(dir: &Path) -> AllocsFile {
        serde_json::from_str(&fs_err::read_to_string(dir.join(ALLOCS_FILE)).unwrap()).unwrap()
    }

    #[test]
    fn an_allocation_goes_from_queued_to_running_to_finished() {
        let dir = tempfile::tempdir().unwrap();
        let mut q = queue(dir.path());
        let (id, script) = q.prepare().unwrap();
        assert!(fs_err::read_to_string(script).unwrap().contains("#SBATCH --job-name=flow-run1"));
        assert_eq!(q.load(), QueueLoad { connected: 0, queued: 1 });
        assert_eq!(q.submitting(), 1);
        q.submitted(id, Ok("42".into()));
        assert_eq!(q.submitting(), 0);
        assert_eq!(q.joined("42").map(|c| c.record.state), Some(AllocState::Running));
        assert!(q.joined("7").is_none(), "not our job");
        assert_eq!(q.load(), QueueLoad { connected: 1, queued: 0 });
        let change = q.left("42", Duration::ZERO, true, "it had no work for its idle timeout").unwrap();
        assert_eq!(change.record.state, AllocState::Finished);
        assert!(change.paused.is_none());
        assert_eq!(saved(dir.path()).allocations[0].state, AllocState::Finished);
    }

    #[test]
    fn three_failures_in_a_row_pause_the_queue_quoting_the_last_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut q = queue(dir.path());
        for n in 0..3 {
            let (id, _) = q.prepare().unwrap();
            let change = q.submitted(id, Err(invalid_account())).unwrap();
            assert_eq!(change.record.state, AllocState::Failed);
            assert_eq!(change.paused.is_some(), n == 2);
        }
        let paused = q.paused().unwrap();
        assert!(
            paused.contains("3 failed allocations") && paused.ends_with("sbatch: error: Invalid account"),
            "{paused}"
        );
        assert_eq!(saved(dir.path()).queue.unwrap().paused.as_deref(), Some(paused));
    }

    #[test]
    fn a_worker_dying_at_once_counts_as_a_failure_and_a_good_one_resets_the_count() {
        let dir = tempfile::tempdir().unwrap();
        let mut q = queue(dir.path());
        let start = |q: &mut AllocQueue, job: &str| {
            let (id, _) = q.prepare().unwrap();
            q.submitted(id, Ok(job.into()));
            q.joined(job);
        };
        start(&mut q, "1");
        let change = q.left("1", Duration::ZERO, false, "disconnected").unwrap();
        assert_eq!(change.record.state, AllocState::Failed);
        assert!(change.record.reason.unwrap().contains("died 0s after starting: disconnected"));
        start(&mut q, "2");
        q.left("2", Duration::ZERO, false, "disconnected");
        start(&mut q, "3");
        // A planned leave resets the count: the third failure in this sequence is only the first in a row.
        q.left("3", Duration::ZERO, true, "idle");
        start(&mut q, "4");
        assert!(q.left("4", Duration::ZERO, false, "disconnected").unwrap().paused.is_none());
    }

    #[test]
    fn a_worker_dying_at_once_fails_its_allocation_only_when_the_others_have_left() {
        let dir = tempfile::tempdir().unwrap();
        let mut q = queue(dir.path());
        let (id, _) = q.prepare().unwrap();
        q.submitted(id, Ok("7".into()));
        q.joined("7");
        q.joined("7");
        assert!(q.left("7", Duration::ZERO, false, "disconnected").is_none(), "its sibling still runs");
        assert_eq!(q.load(), QueueLoad { connected: 1, queued: 0 });
        let change = q.left("7", Duration::ZERO, true, "it had no work for its idle timeout").unwrap();
        assert_eq!(change.record.state, AllocState::Failed);
        assert!(change.record.reason.unwrap().contains("died 0s after starting: disconnected"));
    }

    #[test]
    fn polling_fails_queued_allocations_the_manager_no_longer_lists() {
        let dir = tempfile::tempdir().unwrap();
        let mut q = queue(dir.path());
        for job in ["10", "11"] {
            let (id, _) = q.prepare().unwrap();
            q.submitted(id, Ok(job.into()));
        }
        fs_err::write(dir.path().join("allocs/1.out"), "module: command not found\n").unwrap();
        let ids = vec!["10".to_owned(), "11".to_owned()];
        let changes = q.polled(&ids, &HashSet::from(["11".to_owned()]));
        assert_eq!(changes.len(), 1);
        let reason = changes[0].record.reason.clone().unwrap();
        assert!(reason.ends_with("its output ends with: module: command not found"), "{reason}");
        assert_eq!(q.load().queued, 1);
    }
}
