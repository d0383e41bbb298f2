//! The connection's writer of a remote worker: it drains the worker's
//! [`super::outbox::Outbox`] to the coordinator in batches, with heartbeats, and keeps
//! filling it while the connection is down.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use tokio::sync::mpsc;

use super::outbox::{SharedOutbox, lock};
use crate::log::OutputRecord;
use crate::net;
use crate::runtime::protocol::messages::{HEARTBEAT, REPORT_HOLD, ToCoordinator};

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
        let backlog = w.tx.is_some() && !lock(&w.outbox).is_empty();
        if !control_open && !output_open && !backlog {
            break;
        }
        tokio::select! {
            // What is left after a batch goes on at once, not at the next
            // message or heartbeat: a backlog (the output held while the
            // worker rejoined) drains at the connection's speed.
            () = std::future::ready(()), if backlog => {}
            msg = control.recv(), if control_open => match msg {
                Some(msg) => push_after_output(&w.outbox, msg, &mut output),
                None => control_open = false,
            },
            record = output.recv(), if output_open => match record {
                Some(record) => lock(&w.outbox).push(ToCoordinator::Output(record)),
                None => output_open = false,
            },
            tx = w.connections.recv(), if rejoins => match tx {
                Some(tx) => {
                    lock(&w.outbox).reconnected();
                    w.tx = Some(tx);
                }
                None => rejoins = false,
            },
            _ = heartbeat.tick(), if w.tx.is_some() => lock(&w.outbox).push(ToCoordinator::Heartbeat),
        }
        if lock(&w.outbox).is_down() {
            // The worker found the connection lost: what it would still take is not sent.
            w.tx = None;
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

/// Moves what waits in the channels into the outbox: each result after
/// the output sent before it (a job reports its end once its output is in
/// the channel), so the coordinator has a task's output before its end.
fn gather(
    outbox: &SharedOutbox,
    control: &mut mpsc::UnboundedReceiver<ToCoordinator>,
    output: &mut mpsc::Receiver<OutputRecord>,
) {
    while let Ok(msg) = control.try_recv() {
        push_after_output(outbox, msg, output);
    }
    drain(outbox, output);
}

/// Queues `msg` after whatever waits in `output`.
fn push_after_output(outbox: &SharedOutbox, msg: ToCoordinator, output: &mut mpsc::Receiver<OutputRecord>) {
    drain(outbox, output);
    lock(outbox).push(msg);
}

/// Moves the output waiting in `output` into the outbox.
fn drain(outbox: &SharedOutbox, output: &mut mpsc::Receiver<OutputRecord>) {
    let mut outbox = lock(outbox);
    while let Ok(record) = output.try_recv() {
        outbox.push(ToCoordinator::Output(record));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio::net::TcpListener;

    use super::*;
    use crate::ir::{GroupId, TaskId};
    use crate::log::OutputStream;
    use crate::net::Secret;
    use crate::runtime::agent::outbox::Outbox;
    use crate::runtime::agent::output_budget::OutputBudget;

    /// Issue 28: the output a worker held while it rejoined is sent at the
    /// connection's speed, not one batch per heartbeat (which took 500 MiB
    /// over an hour): 8 batches of small records come within a heartbeat.
    #[tokio::test]
    async fn a_backlog_drains_without_waiting_for_heartbeats() {
        let secret = Secret::generate().expect("secret");
        let theirs = secret.clone();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        let coordinator = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.expect("accept");
            let knock = net::knock(&mut stream, &secret).await.expect("knock");
            knock.answer(stream).await.expect("answer")
        });
        let (tx, _) = net::connect(&address, &theirs).await.expect("connect");
        let (_to_worker, mut rx) = coordinator.await.expect("coordinator");
        let outbox: SharedOutbox = Arc::new(Mutex::new(Outbox::new(Arc::new(OutputBudget::new(1 << 30)))));
        // Held while no coordinator listened: 8 batches of 1,024 records.
        let (records, chunk) = (8 * 1024, b"output\n".to_vec());
        for i in 0..records {
            let task = TaskId::new(GroupId(0), i as u64);
            let data = chunk.clone();
            let record = OutputRecord { task, attempt: 0, stream: OutputStream::Stdout, time_us: 1, data };
            lock(&outbox).push(ToCoordinator::Output(record));
        }
        let (_connections, connections) = mpsc::unbounded_channel();
        let (lost, _lost) = mpsc::unbounded_channel();
        let in_line = Arc::new(AtomicUsize::new(0));
        let writer = Writer { tx: Some(tx), connections, lost, outbox, in_line };
        let (_control, control) = mpsc::unbounded_channel();
        let (_output, output) = mpsc::channel(1);
        let writing = tokio::spawn(write(writer, control, output));
        let mut bytes = 0;
        let all = tokio::time::timeout(HEARTBEAT, async {
            while bytes < records * chunk.len() {
                match rx.recv::<ToCoordinator>().await.expect("receive") {
                    Some(ToCoordinator::Output(record)) => bytes += record.data.len(),
                    Some(_) => {}
                    None => break,
                }
            }
        })
        .await;
        assert!(all.is_ok(), "{bytes} of {} bytes within a heartbeat", records * chunk.len());
        assert_eq!(bytes, records * chunk.len());
        writing.abort();
    }
}
