//! Workers that come back with tasks: a remote worker whose run was killed
//! kept its tasks and rejoins this run, which resumed it. A task this run
//! holds for it (see `stranded.rs`) is adopted — it runs there, as if this
//! run had started it, and its result is recorded as any other; the worker
//! is told to forget the rest, so that no task runs twice (and this run
//! numbers its own attempts of them after the forgotten ones).

use tokio::sync::mpsc;

use super::Driver;
use crate::runtime::core::WorkerId;
use crate::runtime::event::Event;
use crate::runtime::protocol::messages::{CarriedTask, ToWorker};

impl Driver {
    /// Remote worker `worker` joined carrying `carried`: adopts those held
    /// for it, and tells it (through `link`, before anything else) which to
    /// forget.
    pub(super) fn reattach(
        &mut self,
        worker: WorkerId,
        hostname: &str,
        carried: Vec<CarriedTask>,
        link: &mpsc::UnboundedSender<ToWorker>,
    ) {
        if carried.is_empty() {
            return;
        }
        let mut forget = Vec::new();
        let mut adopted = 0;
        for CarriedTask { task, attempt, label, .. } in carried {
            let held = self.held.get(&task).is_some_and(|held| *held == label);
            match held.then(|| self.core.adopt(task, worker, attempt)).flatten() {
                Some(alloc) => {
                    self.held.remove(&task);
                    self.running.insert(task, (attempt, worker));
                    self.placements.start(task, &alloc);
                    self.started(task, attempt, worker, label);
                    adopted += 1;
                }
                None => {
                    self.core.number_after(task, attempt);
                    forget.push(task);
                }
            }
        }
        let message = match forget.len() {
            0 => format!("worker {} ({hostname}) rejoined with {adopted} task(s) of the killed run", worker.0),
            n => format!(
                "worker {} ({hostname}) rejoined with {} task(s) of the killed run: {adopted} run on, \
                 {n} stopped (this run did not hold them for it)",
                worker.0,
                adopted + n
            ),
        };
        self.recorder.event(Event::Warning { message });
        let _ = link.send(ToWorker::Forget(forget));
    }
}
