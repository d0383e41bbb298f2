//! Workers that come back with tasks: a remote worker whose run was killed
//! kept its tasks and rejoins this run, which resumed it. A task this run
//! holds for it (see `stranded.rs`) is adopted — it runs there, on the CPU
//! and GPU ids it was given, as if this run had started it, and its result
//! is recorded as any other; what the killed run's log held of its output
//! is copied into this run's log, and the worker is told how much that is,
//! so each byte is written once. The worker is told to forget the rest, so
//! that no task runs twice (and this run numbers its own attempts of them
//! after the forgotten ones). What this run held for that worker and it did
//! not bring back runs at once: nobody else can.

use std::collections::HashSet;

use tokio::sync::oneshot;

use super::Driver;
use crate::ir::TaskId;
use crate::log::{OutputRecord, OutputStream};
use crate::runtime::coordinator::killed::earlier_output::EarlierOutput;
use crate::runtime::coordinator::outgoing::{Outgoing, WorkerLink};
use crate::runtime::core::WorkerId;
use crate::runtime::event::Event;
use crate::runtime::protocol::messages::{CarriedTask, StoredOutput, ToWorker};

/// The earlier output of the adopted attempts, to copy into this run's log.
pub(super) type Copies = Vec<(TaskId, u32, EarlierOutput)>;

impl Driver {
    /// Remote worker `worker` joined carrying `carried`: adopts those held
    /// for it, and tells it (through `link`, before anything else) how much
    /// of their output this run has and which to forget. Returns the
    /// output to copy before the worker's own is written.
    pub(super) fn reattach(
        &mut self,
        worker: WorkerId,
        hostname: &str,
        carried: Vec<CarriedTask>,
        link: &WorkerLink,
    ) -> Copies {
        if carried.is_empty() {
            return Copies::new();
        }
        let (n, mut forget, mut stored, mut copies) = (carried.len(), Vec::new(), Vec::new(), Copies::new());
        let (mut came_back, mut moved, mut kept) = (HashSet::new(), Vec::new(), 0);
        for CarriedTask { task, attempt, label, cpus, gpus, .. } in carried {
            let held = self.held.take(task, &label);
            if let Some(held) = &held {
                came_back.insert(held.worker);
            }
            // A task of this run whose worker was lost without a word, back before it ran again.
            let fenced = self.fenced.get(&task) == Some(&attempt) && self.factory.label(task) == label;
            let adopted = (held.is_some() || fenced).then(|| self.core.adopt(task, worker, attempt, (&cpus, &gpus)));
            match adopted.flatten() {
                Some(adopted) => {
                    kept += usize::from(self.fenced.remove(&task).is_some());
                    if !adopted.same_ids {
                        moved.push(label.clone());
                    }
                    self.running.insert(task, (attempt, worker));
                    let ready_us = self.ready.take(task, self.factory.graph());
                    self.started(task, attempt, worker, label, ready_us);
                    if let Some(held) = held.filter(|held| held.attempt == attempt && !held.earlier.is_empty()) {
                        let (stdout, stderr) = (held.earlier.stdout, held.earlier.stderr);
                        stored.push(StoredOutput { task, attempt, stdout, stderr });
                        copies.push((task, attempt, held.earlier));
                    }
                }
                None => {
                    // Held for it but not adopted (it no longer fits there): it runs afresh.
                    self.core.end_wait(task);
                    self.core.number_after(task, attempt);
                    forget.push(task);
                }
            }
        }
        let adopted = n - forget.len();
        let mut message = match forget.len() {
            // All its own: it was lost to this run without a word, and came back in time.
            0 if kept == n => {
                format!("worker {} ({hostname}) rejoined with {n} task(s) it kept: they run on", worker.0)
            }
            0 => format!("worker {} ({hostname}) rejoined with {adopted} task(s) of the killed run", worker.0),
            f => format!(
                "worker {} ({hostname}) rejoined with {n} task(s) of the killed run: {adopted} run on, \
                 {f} stopped (this run did not hold them for it)",
                worker.0,
            ),
        };
        let left: Vec<TaskId> = self.held.take_left_by(&came_back);
        for &task in &left {
            self.core.end_wait(task);
        }
        if !left.is_empty() {
            message.push_str(&format!("; {} instance(s) it ran and did not bring back run again now", left.len()));
        }
        if !moved.is_empty() {
            message.push_str(&format!(
                "; the CPU or GPU ids of {} were no longer free there: counted on other ids",
                moved.join(", ")
            ));
        }
        self.recorder.event(Event::Warning { message });
        if !stored.is_empty() {
            let _ = link.send(Outgoing::Message(ToWorker::Stored(stored)));
        }
        let _ = link.send(Outgoing::Message(ToWorker::Forget(forget)));
        copies
    }

    /// Sends `id` on `reply` — which lets the worker's messages through —
    /// once `copies` are in this run's log (off the run loop: they are read
    /// from the killed runs' logs). Messages to the worker, heartbeats
    /// among them, do not wait for it: the worker hears the run meanwhile.
    pub(super) fn copy_then_reply(&self, copies: Copies, reply: oneshot::Sender<WorkerId>, id: WorkerId) {
        let Some(log) = self.earlier_log.clone().filter(|_| !copies.is_empty()) else {
            let _ = reply.send(id);
            return;
        };
        tokio::task::spawn_blocking(move || {
            for (task, attempt, earlier) in copies {
                if let Err(e) = earlier.copy(&log) {
                    let data = format!("flow: could not copy this attempt's earlier output from the killed run: {e}\n");
                    let stream = OutputStream::System;
                    let time_us = crate::host::now_us();
                    let _ = log.blocking_send(OutputRecord { task, attempt, stream, time_us, data: data.into_bytes() });
                }
            }
            let _ = reply.send(id);
        });
    }
}
