//! The coordinator's side of remote workers: accept connections, check the
//! secret, register the worker, and relay its messages — results to the
//! driver, output to the run log — until it leaves or falls silent.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::net::{self, Receiver, Secret, Sender};
use crate::runtime::agent::output_sink::OutputSink;
use crate::runtime::coordinator::driver_event::DriverEvent;
use crate::runtime::core::WorkerId;
use crate::runtime::protocol::messages::{HEARTBEAT, HEARTBEAT_TIMEOUT, ToCoordinator, ToWorker};
use crate::runtime::protocol::outcome::WorkerEvent;

/// Connections at most that may be in their handshake at once: a flood of
/// connections that never authenticate holds no more descriptors than this,
/// and what is left stays for tasks and real workers.
const MAX_PENDING: usize = 64;
/// Time a peer has to complete the handshake (prove it knows the secret).
const AUTH_TIMEOUT: Duration = Duration::from_secs(3);
/// Longest pause after a failing `accept` (out of descriptors, say).
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Accepts workers forever (the task is dropped when the run ends); in a
/// `dry_exec` run only zero-execution workers, otherwise only real ones.
pub async fn listen(
    listener: TcpListener,
    secret: Secret,
    driver: mpsc::UnboundedSender<DriverEvent>,
    log: OutputSink,
    dry_exec: bool,
) {
    let pending = Arc::new(Semaphore::new(MAX_PENDING));
    let mut backoff = Duration::from_millis(10);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(connection) => {
                backoff = Duration::from_millis(10);
                connection
            }
            Err(_) => {
                // The error repeats until something changes: wait, do not spin.
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        let peer = peer.to_string();
        let Ok(permit) = pending.clone().try_acquire_owned() else {
            net::turn_away(stream);
            let reason = format!("{MAX_PENDING} connections are already authenticating");
            let _ = driver.send(DriverEvent::Refused { peer, reason });
            continue;
        };
        let (secret, driver, log) = (secret.clone(), driver.clone(), log.clone());
        tokio::spawn(async move {
            let accepted = net::accept_within(stream, &secret, AUTH_TIMEOUT).await;
            drop(permit);
            match accepted {
                Ok((tx, rx)) => serve(peer, tx, rx, driver, log, dry_exec).await,
                Err(e) => {
                    let _ = driver.send(DriverEvent::Refused { peer, reason: e.to_string() });
                }
            }
        });
    }
}

/// One connected worker: hello, then relay both ways.
async fn serve(
    peer: String,
    mut tx: Sender,
    mut rx: Receiver,
    driver: mpsc::UnboundedSender<DriverEvent>,
    log: OutputSink,
    dry_exec: bool,
) {
    let offer = match tokio::time::timeout(HEARTBEAT_TIMEOUT, rx.recv::<ToCoordinator>()).await {
        Ok(Ok(Some(ToCoordinator::Hello(offer)))) => offer,
        _ => {
            let reason = "did not introduce itself".to_owned();
            let _ = driver.send(DriverEvent::Refused { peer, reason });
            return;
        }
    };
    if offer.dry_exec != dry_exec {
        let reason = match dry_exec {
            true => "this is a --dry-exec run: only `flow worker --dry-exec` may join it",
            false => "a `flow worker --dry-exec` may join only a --dry-exec run",
        };
        let _ = tx.send(&ToWorker::Refuse(reason.to_owned())).await;
        let _ = driver.send(DriverEvent::Refused { peer, reason: reason.to_owned() });
        return;
    }
    let (jobs, mut to_worker) = mpsc::unbounded_channel::<ToWorker>();
    let (reply, id) = oneshot::channel();
    if driver.send(DriverEvent::Joined { offer, link: jobs, peer, reply }).is_err() {
        return;
    }
    let Ok(worker) = id.await else { return };
    let writer = tokio::spawn(async move {
        // The worker stops its tasks if it does not hear from the run.
        let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
        loop {
            let msg = tokio::select! {
                biased;
                msg = to_worker.recv() => match msg {
                    Some(msg) => msg,
                    None => break,
                },
                _ = heartbeat.tick() => ToWorker::Heartbeat,
            };
            // Jobs queued together go out in one write.
            let mut last = matches!(msg, ToWorker::Shutdown);
            let more = || {
                let next = to_worker.try_recv().ok().filter(|_| !last)?;
                last = matches!(next, ToWorker::Shutdown);
                Some(next)
            };
            if tx.send_batch(&msg, more).await.is_err() || last {
                break;
            }
        }
    });
    let (reason, clean) = relay(worker, &mut rx, &driver, &log).await;
    writer.abort();
    let _ = driver.send(DriverEvent::Lost { worker, reason, clean });
}

/// Forwards a worker's messages until it goes away; returns why it went,
/// and whether it planned to (`true`: idle, time limit) or was killed or vanished.
async fn relay(
    worker: WorkerId,
    rx: &mut Receiver,
    driver: &mpsc::UnboundedSender<DriverEvent>,
    log: &OutputSink,
) -> (String, bool) {
    let mut leaving = None;
    loop {
        match tokio::time::timeout(HEARTBEAT_TIMEOUT, rx.recv::<ToCoordinator>()).await {
            Err(_) => return (format!("no heartbeat for {}s", HEARTBEAT_TIMEOUT.as_secs()), false),
            Ok(Err(e)) => return leaving.unwrap_or_else(|| (format!("connection failed: {e}"), false)),
            Ok(Ok(None)) => return leaving.unwrap_or_else(|| ("disconnected".to_owned(), false)),
            Ok(Ok(Some(msg))) => match msg {
                // Jobs killed because their worker leaves run again elsewhere.
                ToCoordinator::Finished { .. } if leaving.is_some() => {}
                ToCoordinator::Finished { task, attempt, outcome } => {
                    let event = WorkerEvent::Finished { task, attempt, outcome };
                    if driver.send(DriverEvent::Worker { worker, event }).is_err() {
                        return ("the run ended".to_owned(), true);
                    }
                }
                ToCoordinator::Output(record) => {
                    if !log.send(record).await {
                        return ("the run ended".to_owned(), true);
                    }
                }
                ToCoordinator::Leaving { reason, planned } => leaving = Some((reason, planned)),
                ToCoordinator::Heartbeat | ToCoordinator::Hello(_) => {}
            },
        }
    }
}
