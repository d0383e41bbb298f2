//! [`Outbox`]: what a remote worker has to tell its coordinator and has not
//! told yet — results, output, goodbyes — and the jobs it carries until
//! their results are delivered. While the connection is down it keeps all
//! of it (the batch whose write failed too), so a worker whose coordinator
//! was killed can rejoin the resumed run and say what it carries
//! ([`Outbox::carried`]), then deliver what it kept. Results delivered in
//! the last [`RECENT`] are kept too: a coordinator killed just after they
//! reached it may not have recorded them, so they are carried and sent
//! again after a loss. [`write`] is the connection's writer that drains it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::ir::TaskId;
use crate::log::OutputRecord;
use crate::net;
use crate::runtime::protocol::messages::{CarriedTask, HEARTBEAT, REPORT_HOLD, ToCoordinator};

/// Output bytes at most taken into one batch (the channel writes up to 256 KiB at once).
const BATCH_BYTES: usize = 256 << 10;
/// Messages at most taken into one batch.
const BATCH_MESSAGES: usize = 1024;
/// How long a delivered result is kept, to be sent again should the
/// connection drop: a coordinator records a result within milliseconds.
pub(super) const RECENT: Duration = Duration::from_secs(10);

/// Messages not yet delivered, and the jobs whose results are not.
#[derive(Debug, Default)]
pub(super) struct Outbox {
    /// Waiting to be sent, oldest first.
    queue: VecDeque<ToCoordinator>,
    /// Jobs started here and not yet reported to a coordinator that heard
    /// it: attempt and label, by task.
    jobs: HashMap<TaskId, (u32, String)>,
    /// Attempts the coordinator said to forget: whatever they still say is dropped.
    forgotten: HashSet<(TaskId, u32)>,
    /// Results delivered lately, oldest first: when, the job's label, and the result.
    recent: VecDeque<(Instant, String, ToCoordinator)>,
}

/// An [`Outbox`] shared by the worker's loop and its connection's writer.
pub(super) type SharedOutbox = Arc<Mutex<Outbox>>;

impl Outbox {
    /// Job `task` (attempt `attempt`, labelled `label`) was accepted here.
    pub(super) fn start(&mut self, task: TaskId, attempt: u32, label: String) {
        self.forgotten.remove(&(task, attempt));
        self.jobs.insert(task, (attempt, label));
    }

    /// Job `task` was never started and will not be (it waited in line
    /// when the connection dropped): it is no longer carried.
    pub(super) fn drop_job(&mut self, task: TaskId) {
        self.jobs.remove(&task);
    }

    /// Queues `msg`, unless it is about an attempt to forget.
    pub(super) fn push(&mut self, msg: ToCoordinator) {
        if about(&msg).is_none_or(|of| !self.forgotten.contains(&of)) {
            self.queue.push_back(msg);
        }
    }

    /// Forgets job `task`: drops what is queued about it and what it says
    /// later; returns its attempt if it was carried.
    pub(super) fn forget(&mut self, task: TaskId) -> Option<u32> {
        let (attempt, _) = self.jobs.remove(&task)?;
        self.forgotten.insert((task, attempt));
        self.queue.retain(|msg| about(msg) != Some((task, attempt)));
        Some(attempt)
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
            .map(|(&task, (attempt, label))| CarriedTask {
                task,
                attempt: *attempt,
                label: label.clone(),
                finished: ended.contains(&(task, *attempt)),
            })
            .collect();
        carried.sort_unstable_by_key(|c| c.task);
        carried
    }

    /// Takes the next batch to send: messages from the front, up to about
    /// [`BATCH_BYTES`] of output.
    fn take_batch(&mut self) -> Vec<ToCoordinator> {
        let mut bytes = 0;
        let mut n = 0;
        for msg in self.queue.iter().take(BATCH_MESSAGES) {
            n += 1;
            if let ToCoordinator::Output(record) = msg {
                bytes += record.data.len();
            }
            if bytes >= BATCH_BYTES {
                break;
            }
        }
        self.queue.drain(..n).collect()
    }

    /// `batch[..sent]` reached the coordinator at `now`: results delivered
    /// end their jobs here (kept as recent); the rest of the batch goes back
    /// to the front of the queue.
    fn sent(&mut self, mut batch: Vec<ToCoordinator>, sent: usize, now: Instant) {
        while self.recent.front().is_some_and(|(at, ..)| now.duration_since(*at) > RECENT) {
            self.recent.pop_front();
        }
        for msg in batch.drain(..sent.min(batch.len())) {
            if let ToCoordinator::Finished { task, attempt, .. } = &msg
                && self.jobs.get(task).is_some_and(|(a, _)| a == attempt)
                && let Some((_, label)) = self.jobs.remove(task)
            {
                self.recent.push_back((now, label, msg));
            }
        }
        self.put_back(batch);
    }

    /// The connection dropped at `now`: the results delivered in the last
    /// [`RECENT`] go back to the front of the queue, their jobs carried
    /// again — the coordinator may have died before it recorded them.
    pub(super) fn lost(&mut self, now: Instant) {
        for (at, label, msg) in std::mem::take(&mut self.recent).into_iter().rev() {
            let Some((task, attempt)) = about(&msg) else { continue };
            if now.duration_since(at) <= RECENT && !self.jobs.contains_key(&task) {
                self.jobs.insert(task, (attempt, label));
                self.queue.push_front(msg);
            }
        }
    }

    /// The write of `batch` failed: it goes back to the front of the
    /// queue, less what was forgotten meanwhile, to be sent again.
    fn put_back(&mut self, batch: Vec<ToCoordinator>) {
        for msg in batch.into_iter().rev() {
            if about(&msg).is_none_or(|of| !self.forgotten.contains(&of)) {
                self.queue.push_front(msg);
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Whether the next message is a result.
    fn result_first(&self) -> bool {
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

/// Locks `outbox` (a panic elsewhere while it was held leaves it usable).
pub(super) fn lock(outbox: &SharedOutbox) -> std::sync::MutexGuard<'_, Outbox> {
    outbox.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the writer needs besides its channels.
pub(super) struct Writer {
    /// The connection, while there is one.
    pub(super) tx: Option<net::Sender>,
    /// New connections after the worker rejoins.
    pub(super) connections: mpsc::UnboundedReceiver<net::Sender>,
    /// Told when a write fails: the connection is lost.
    pub(super) lost: mpsc::UnboundedSender<()>,
    /// What is to be sent.
    pub(super) outbox: SharedOutbox,
    /// Jobs sent ahead and waiting here (see [`REPORT_HOLD`]).
    pub(super) in_line: Arc<AtomicUsize>,
}

/// The connection's writer: queues results and goodbyes (`control`) and
/// output (`output`, a bounded channel, so a slow link slows the tasks),
/// and sends them in batches with heartbeats; holds a result back briefly
/// while jobs wait in line. While the connection is down it keeps taking
/// both into the outbox (tasks never block on it) until a new connection
/// comes. It ends once both channels are closed and the outbox is sent, or
/// the connection is down.
pub(super) async fn write(
    mut w: Writer,
    mut control: mpsc::UnboundedReceiver<ToCoordinator>,
    mut output: mpsc::Receiver<OutputRecord>,
) {
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    let (mut control_open, mut output_open, mut rejoins) = (true, true, true);
    loop {
        if !control_open && !output_open && (w.tx.is_none() || lock(&w.outbox).is_empty()) {
            break;
        }
        tokio::select! {
            msg = control.recv(), if control_open => match msg {
                Some(msg) => lock(&w.outbox).push(msg),
                None => control_open = false,
            },
            record = output.recv(), if output_open => match record {
                Some(record) => lock(&w.outbox).push(ToCoordinator::Output(record)),
                None => output_open = false,
            },
            tx = w.connections.recv(), if rejoins => match tx {
                Some(tx) => w.tx = Some(tx),
                None => rejoins = false,
            },
            _ = heartbeat.tick(), if w.tx.is_some() => lock(&w.outbox).push(ToCoordinator::Heartbeat),
        }
        let Some(tx) = w.tx.as_mut() else { continue };
        if lock(&w.outbox).result_first() && w.in_line.load(Ordering::Relaxed) > 0 {
            tokio::time::sleep(REPORT_HOLD).await;
        }
        // Results and output that queued up meanwhile travel with it.
        gather(&w.outbox, &mut control, &mut output);
        let batch = lock(&w.outbox).take_batch();
        if batch.is_empty() {
            continue;
        }
        let mut sent = 1;
        let mut rest = batch.iter().skip(1);
        let result = tx
            .send_batch(&&batch[0], || {
                let next = rest.next()?;
                sent += 1;
                Some(next)
            })
            .await;
        match result {
            Ok(()) => lock(&w.outbox).sent(batch, sent, Instant::now()),
            Err(_) => {
                lock(&w.outbox).put_back(batch);
                w.tx = None;
                let _ = w.lost.send(());
            }
        }
    }
}

/// Moves what waits in the channels into the outbox.
fn gather(
    outbox: &SharedOutbox,
    control: &mut mpsc::UnboundedReceiver<ToCoordinator>,
    output: &mut mpsc::Receiver<OutputRecord>,
) {
    let mut outbox = lock(outbox);
    while let Ok(msg) = control.try_recv() {
        outbox.push(msg);
    }
    while let Ok(record) = output.try_recv() {
        outbox.push(ToCoordinator::Output(record));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::GroupId;
    use crate::log::OutputStream;
    use crate::runtime::protocol::outcome::{Outcome, Status};

    fn t(i: u64) -> TaskId {
        TaskId::new(GroupId(0), i)
    }

    fn finished(task: TaskId, attempt: u32) -> ToCoordinator {
        ToCoordinator::Finished { task, attempt, outcome: Outcome::instant(Status::Succeeded) }
    }

    fn output(task: TaskId, attempt: u32, data: &[u8]) -> ToCoordinator {
        let stream = OutputStream::Stdout;
        ToCoordinator::Output(OutputRecord { task, attempt, stream, time_us: 1, data: data.to_vec() })
    }

    #[test]
    fn a_failed_batch_is_sent_again_first_and_its_jobs_stay_carried() {
        let mut outbox = Outbox::default();
        outbox.start(t(0), 0, "a[0]".into());
        outbox.start(t(1), 2, "a[1]".into());
        outbox.push(output(t(0), 0, b"before the loss\n"));
        outbox.push(finished(t(0), 0));
        let batch = outbox.take_batch();
        assert_eq!(batch.len(), 2);
        // The connection drops: the batch goes back, and more comes meanwhile.
        outbox.push(output(t(1), 2, b"after the loss\n"));
        outbox.put_back(batch);
        let carried = outbox.carried();
        assert_eq!(
            carried,
            [
                CarriedTask { task: t(0), attempt: 0, label: "a[0]".into(), finished: true },
                CarriedTask { task: t(1), attempt: 2, label: "a[1]".into(), finished: false },
            ]
        );
        let again = outbox.take_batch();
        assert_eq!(
            again,
            [output(t(0), 0, b"before the loss\n"), finished(t(0), 0), output(t(1), 2, b"after the loss\n")]
        );
        outbox.sent(again, 3, Instant::now());
        assert!(outbox.is_empty());
        assert_eq!(outbox.carried().len(), 1, "a delivered result ends its job here");
    }

    #[test]
    fn a_result_delivered_just_before_a_loss_is_carried_and_sent_again() {
        let mut outbox = Outbox::default();
        let start = Instant::now();
        outbox.start(t(0), 0, "a[0]".into());
        outbox.start(t(1), 0, "a[1]".into());
        outbox.push(finished(t(0), 0));
        let batch = outbox.take_batch();
        outbox.sent(batch, 1, start);
        outbox.push(finished(t(1), 0));
        let batch = outbox.take_batch();
        outbox.sent(batch, 1, start + RECENT);
        assert!(outbox.carried().is_empty() && outbox.is_empty());
        // The connection drops just after: the results of the last RECENT come back.
        outbox.lost(start + RECENT + Duration::from_millis(1));
        let carried = outbox.carried();
        assert_eq!(carried, [CarriedTask { task: t(1), attempt: 0, label: "a[1]".into(), finished: true }]);
        assert_eq!(outbox.take_batch(), [finished(t(1), 0)]);
        outbox.lost(start + RECENT * 3);
        assert!(outbox.is_empty(), "kept once");
    }

    #[test]
    fn what_was_not_sent_of_a_batch_stays_in_order() {
        let mut outbox = Outbox::default();
        for i in 0..3 {
            outbox.push(output(t(i), 0, b"x"));
        }
        let batch = outbox.take_batch();
        outbox.sent(batch, 1, Instant::now());
        assert_eq!(outbox.take_batch(), [output(t(1), 0, b"x"), output(t(2), 0, b"x")]);
    }

    #[test]
    fn a_forgotten_job_says_nothing_more_until_it_starts_again() {
        let mut outbox = Outbox::default();
        outbox.start(t(0), 1, "a[0]".into());
        outbox.push(output(t(0), 1, b"old"));
        outbox.push(ToCoordinator::Heartbeat);
        let in_flight = vec![output(t(0), 1, b"in flight")];
        assert_eq!(outbox.forget(t(0)), Some(1));
        assert_eq!(outbox.forget(t(0)), None, "forgotten once");
        outbox.put_back(in_flight);
        outbox.push(finished(t(0), 1));
        assert_eq!(outbox.take_batch(), [ToCoordinator::Heartbeat]);
        assert!(outbox.carried().is_empty());
        // Sent again in the resumed run as the same attempt: it speaks again.
        outbox.start(t(0), 1, "a[0]".into());
        outbox.push(finished(t(0), 1));
        assert_eq!(outbox.take_batch().len(), 1);
    }

    #[test]
    fn a_batch_holds_about_as_much_output_as_one_write() {
        let mut outbox = Outbox::default();
        let chunk = vec![b'x'; 100 << 10];
        for _ in 0..5 {
            outbox.push(output(t(0), 0, &chunk));
        }
        assert_eq!(outbox.take_batch().len(), 3, "300 KiB reaches the limit");
        assert_eq!(outbox.take_batch().len(), 2);
        outbox.start(t(5), 0, "b".into());
        outbox.drop_job(t(5));
        assert!(outbox.carried().is_empty());
    }
}
