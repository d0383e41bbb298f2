//! The coordinator's side of remote workers: accept connections, check the
//! secret, register the worker, and relay its messages — results to the
//! driver, output to the run log — until it leaves or falls silent.
//!
//! A connection is let in at once and waits in the [`Lobby`] for its first
//! handshake message, which is cheap to check (see [`net::knock`]); only one
//! that knows the run's secret takes one of the [`HANDSHAKES`] slots, in
//! which it is answered and introduces itself. So a flood of connections
//! that say nothing, or say something wrong, holds at most the lobby's
//! descriptors and never a slot, and a worker joins while it lasts.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::lobby::{Lobby, Ticket};
use crate::net::{self, HandshakeError, NetError, Receiver, Secret, Sender};
use crate::runtime::agent::output_sink::OutputSink;
use crate::runtime::coordinator::driver_event::DriverEvent;
use crate::runtime::coordinator::outgoing::Outgoing;
use crate::runtime::core::WorkerId;
use crate::runtime::protocol::messages::{HEARTBEAT, HEARTBEAT_TIMEOUT, Offer, ToCoordinator, ToWorker};
use crate::runtime::protocol::outcome::WorkerEvent;

/// Connections at most that may be answered and introduce themselves at
/// once; each has shown in its first message that it knows the secret.
const HANDSHAKES: usize = 64;
/// Time a peer has to send its first handshake message, and then again to
/// finish the handshake and introduce itself.
const AUTH_TIMEOUT: Duration = Duration::from_secs(3);
/// Longest pause after a failing `accept` (out of descriptors, say).
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// What every connection is let in with.
struct Door {
    secret: Secret,
    driver: mpsc::UnboundedSender<DriverEvent>,
    log: OutputSink,
    dry_exec: bool,
    /// Connections waiting for their first message; dropping one's sender tells it to go.
    lobby: Mutex<Lobby<oneshot::Sender<()>>>,
    slots: Arc<Semaphore>,
}

impl Door {
    /// Tells the driver that `peer` was refused, and why.
    fn refuse(&self, peer: SocketAddr, reason: String) {
        let _ = self.driver.send(DriverEvent::Refused { peer: peer.to_string(), reason });
    }

    fn lobby(&self) -> std::sync::MutexGuard<'_, Lobby<oneshot::Sender<()>>> {
        self.lobby.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Accepts workers forever (the task is dropped when the run ends); in a
/// `dry_exec` run only zero-execution workers, otherwise only real ones.
pub async fn listen(
    listener: TcpListener,
    secret: Secret,
    driver: mpsc::UnboundedSender<DriverEvent>,
    log: OutputSink,
    dry_exec: bool,
) {
    let lobby = Mutex::new(Lobby::new(lobby_room()));
    let door = Arc::new(Door { secret, driver, log, dry_exec, lobby, slots: Arc::new(Semaphore::new(HANDSHAKES)) });
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
        let (go, told) = oneshot::channel();
        let (ticket, pushed_out) = door.lobby().enter(peer.ip(), go);
        drop(pushed_out);
        tokio::spawn(admit(Arc::clone(&door), stream, peer, ticket, told));
    }
}

/// How many connections may wait for their first message: a quarter of
/// this process's descriptors, so the rest stay for tasks and workers.
fn lobby_room() -> usize {
    use nix::sys::resource::{Resource, getrlimit};
    let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).unwrap_or((1024, 1024));
    usize::try_from(soft / 4).unwrap_or(usize::MAX).clamp(HANDSHAKES, 1 << 16)
}

/// One connection from the lobby to the run: its first message checked,
/// then a slot to be answered in and introduce itself, then [`serve`].
async fn admit(door: Arc<Door>, mut stream: TcpStream, peer: SocketAddr, ticket: Ticket, told: oneshot::Receiver<()>) {
    let knocked = tokio::select! {
        knocked = tokio::time::timeout(AUTH_TIMEOUT, net::knock(&mut stream, &door.secret)) => Some(knocked),
        _ = told => None,
    };
    door.lobby().leave(ticket);
    let knock = match knocked {
        Some(Ok(Ok(knock))) => knock,
        Some(Ok(Err(e))) => return door.refuse(peer, e.to_string()),
        Some(Err(_)) => return door.refuse(peer, HandshakeError::TimedOut.to_string()),
        None => {
            net::turn_away(stream);
            return door.refuse(peer, "sent nothing while the lobby filled up".to_owned());
        }
    };
    let Ok(slot) = Arc::clone(&door.slots).try_acquire_owned() else {
        net::turn_away(stream);
        return door.refuse(peer, format!("{HANDSHAKES} connections are already authenticating"));
    };
    let introduced = tokio::time::timeout(AUTH_TIMEOUT, async {
        let (tx, mut rx) = knock.answer(stream).await?;
        match rx.recv::<ToCoordinator>().await? {
            Some(ToCoordinator::Hello(offer)) => Ok(Some((tx, rx, offer))),
            _ => Ok::<_, NetError>(None),
        }
    })
    .await;
    drop(slot);
    match introduced {
        Ok(Ok(Some((tx, rx, offer)))) => serve(&door, peer.to_string(), tx, rx, offer).await,
        Ok(Err(e)) => door.refuse(peer, e.to_string()),
        Ok(Ok(None)) | Err(_) => door.refuse(peer, "did not introduce itself".to_owned()),
    }
}

/// One worker that said hello: relay both ways.
async fn serve(door: &Door, peer: String, mut tx: Sender, mut rx: Receiver, offer: Offer) {
    let driver = &door.driver;
    if offer.dry_exec != door.dry_exec {
        let reason = match door.dry_exec {
            true => "this is a --dry-exec run: only `flow worker --dry-exec` may join it",
            false => "a `flow worker --dry-exec` may join only a --dry-exec run",
        };
        let _ = tx.send(&ToWorker::Refuse(reason.to_owned())).await;
        let _ = driver.send(DriverEvent::Refused { peer, reason: reason.to_owned() });
        return;
    }
    let (jobs, mut to_worker) = mpsc::unbounded_channel::<Outgoing>();
    let (reply, id) = oneshot::channel();
    if driver.send(DriverEvent::Joined { offer, link: jobs, peer, reply }).is_err() {
        return;
    }
    // Messages and heartbeats go to the worker at once; its own messages are
    // read once the driver has its id, which a rejoining worker's waits for
    // the copy of its tasks' earlier output (so the worker hears the run
    // however long that copy takes).
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
                _ = heartbeat.tick() => Outgoing::Message(ToWorker::Heartbeat),
            };
            // What is queued together goes out in one write, up to a batch.
            let mut next = Some(msg);
            let mut last = false;
            while let Some(msg) = next.take() {
                match msg {
                    Outgoing::Encoded(jobs) => tx.push_encoded(&jobs),
                    Outgoing::Message(msg) => {
                        last = matches!(msg, ToWorker::Shutdown);
                        if tx.push(&msg).is_err() {
                            return;
                        }
                    }
                }
                if !last && tx.has_room() {
                    next = to_worker.try_recv().ok();
                }
            }
            if tx.flush().await.is_err() || last {
                break;
            }
        }
    });
    let Ok(worker) = id.await else {
        writer.abort();
        return;
    };
    let (reason, clean) = relay(worker, &mut rx, driver, &door.log).await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::WorkerShape;
    use crate::runtime::agent::output_budget::OutputBudget;

    /// Issue 28: a worker that rejoins is answered, and hears heartbeats,
    /// while the driver still holds its id back (as it does while it copies
    /// the earlier output of the worker's tasks, however long that takes).
    #[tokio::test]
    async fn a_worker_hears_the_run_before_its_messages_are_let_through() {
        let secret = Secret::generate().expect("secret");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        let (driver, mut events) = mpsc::unbounded_channel();
        let (records, _unread) = mpsc::channel(1);
        let log = OutputSink::Channel(records, Arc::new(OutputBudget::new(1 << 20)));
        let listening = tokio::spawn(listen(listener, secret.clone(), driver, log, false));
        let (mut tx, mut rx) = net::connect(&address, &secret).await.expect("connect");
        let offer = Offer {
            hostname: "node".into(),
            shape: WorkerShape::default(),
            time_limit: None,
            allocation: None,
            dry_exec: false,
            carried: Vec::new(),
        };
        tx.send(&ToCoordinator::Hello(offer)).await.expect("hello");
        let Some(DriverEvent::Joined { link, reply, .. }) = events.recv().await else { panic!("no join") };
        link.send(Outgoing::Message(ToWorker::Forget(Vec::new()))).expect("link");
        let wait = HEARTBEAT * 3;
        let first = tokio::time::timeout(wait, rx.recv::<ToWorker>()).await;
        assert!(matches!(first, Ok(Ok(Some(ToWorker::Forget(_))))), "{first:?}");
        let next = tokio::time::timeout(wait, rx.recv::<ToWorker>()).await;
        assert!(matches!(next, Ok(Ok(Some(ToWorker::Heartbeat)))), "{next:?}");
        drop(reply);
        listening.abort();
    }
}
