//! Tests of the transport over real localhost sockets, and of the access file.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::channel::accept_within;
use super::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Msg {
    Job { id: u64, command: String },
    Output(Vec<u8>),
    Done { id: u64, code: i32 },
}

/// One end of a channel.
pub(super) type Halves = (Sender, Receiver);

async fn listener() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("local address").to_string();
    (listener, address)
}

/// A connected (coordinator, worker) pair sharing `secret`.
pub(super) async fn pair(secret: &Secret) -> (Halves, Halves) {
    let (listener, address) = listener().await;
    let server_secret = secret.clone();
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("tcp accept");
        accept(stream, &server_secret).await
    });
    let client = connect(&address, secret).await.expect("connect");
    let server = server.await.expect("server task").expect("accept");
    (server, client)
}

#[tokio::test]
async fn messages_round_trip_both_ways() {
    let secret = Secret::generate().expect("secret");
    let ((mut coord_tx, mut coord_rx), (mut worker_tx, mut worker_rx)) = pair(&secret).await;
    let jobs = [
        Msg::Job { id: 1, command: "echo hi".into() },
        Msg::Job { id: 2, command: String::new() },
        Msg::Job { id: 3, command: "ünïcødé ✓".into() },
    ];
    for job in &jobs {
        coord_tx.send(job).await.expect("send job");
    }
    for job in &jobs {
        assert_eq!(worker_rx.recv::<Msg>().await.expect("recv job").as_ref(), Some(job));
    }
    let replies = [Msg::Output(b"hi\n".to_vec()), Msg::Output(Vec::new()), Msg::Done { id: 1, code: -1 }];
    for reply in &replies {
        worker_tx.send(reply).await.expect("send reply");
    }
    for reply in &replies {
        assert_eq!(coord_rx.recv::<Msg>().await.expect("recv reply").as_ref(), Some(reply));
    }
    // A zero-byte message and a message of another type work too.
    worker_tx.send(&()).await.expect("send unit");
    assert_eq!(coord_rx.recv::<()>().await.expect("recv unit"), Some(()));

    worker_tx.close().await.expect("close");
    assert!(coord_rx.recv::<Msg>().await.expect("clean end").is_none());
    drop(coord_tx);
    assert!(worker_rx.recv::<Msg>().await.expect("clean end").is_none());
}

#[tokio::test]
async fn large_message_is_split_and_reassembled() {
    let secret = Secret::generate().expect("secret");
    let ((mut coord_tx, _coord_rx), (_worker_tx, mut worker_rx)) = pair(&secret).await;
    let big: Vec<u8> = (0..10 << 20).map(|i: u32| (i % 251) as u8).collect();
    let message = Msg::Output(big);
    // Send from another task: 10 MiB does not fit in the socket buffers, so
    // the receiver must read while the sender writes.
    let sent = message.clone();
    let sender = tokio::spawn(async move {
        coord_tx.send(&sent).await.expect("send 10 MiB");
        coord_tx.send(&Msg::Done { id: 7, code: 0 }).await.expect("send after");
    });
    assert_eq!(worker_rx.recv::<Msg>().await.expect("recv 10 MiB"), Some(message));
    assert_eq!(worker_rx.recv::<Msg>().await.expect("recv after"), Some(Msg::Done { id: 7, code: 0 }));
    sender.await.expect("sender task");
}

#[tokio::test]
async fn a_batch_goes_out_in_order_and_stops_at_its_size() {
    let secret = Secret::generate().expect("secret");
    let ((mut coord_tx, _coord_rx), (_worker_tx, mut worker_rx)) = pair(&secret).await;
    // 100 small messages, then six of 100 KiB: the batch takes the small
    // ones and the big ones up to 256 KiB, and leaves the rest queued.
    let mut queue: std::collections::VecDeque<Msg> = (1..=100).map(|id| Msg::Done { id, code: 0 }).collect();
    queue.extend((0..6).map(|_| Msg::Output(vec![7; 100 << 10])));
    let first = Msg::Job { id: 0, command: "first".into() };
    coord_tx.send_batch(&first, || queue.pop_front()).await.expect("send batch");
    assert_eq!(queue.len(), 3, "the batch stopped once it held 256 KiB");
    assert_eq!(worker_rx.recv::<Msg>().await.expect("recv"), Some(first));
    for id in 1..=100 {
        assert_eq!(worker_rx.recv::<Msg>().await.expect("recv"), Some(Msg::Done { id, code: 0 }));
    }
    for _ in 0..3 {
        assert!(matches!(worker_rx.recv::<Msg>().await.expect("recv"), Some(Msg::Output(b)) if b.len() == 100 << 10));
    }
    coord_tx.send(&Msg::Done { id: 101, code: 0 }).await.expect("send after");
    assert_eq!(worker_rx.recv::<Msg>().await.expect("recv after"), Some(Msg::Done { id: 101, code: 0 }));
}

#[tokio::test]
async fn oversized_message_is_not_sent() {
    let secret = Secret::generate().expect("secret");
    let ((mut coord_tx, _coord_rx), (_worker_tx, mut worker_rx)) = pair(&secret).await;
    let huge = "x".repeat(MAX_MESSAGE + 1);
    assert!(matches!(coord_tx.send(&huge).await, Err(NetError::TooLarge { .. })));
    // Nothing went out, so the channel is still in step.
    coord_tx.send(&Msg::Done { id: 1, code: 0 }).await.expect("send after");
    assert_eq!(worker_rx.recv::<Msg>().await.expect("recv"), Some(Msg::Done { id: 1, code: 0 }));
}

#[tokio::test]
async fn wrong_secret_is_refused_and_the_server_goes_on() {
    let secret = Secret::generate().expect("secret");
    let wrong = Secret::generate().expect("secret");
    let (listener, address) = listener().await;
    let server_secret = secret.clone();
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("tcp accept");
        let refused = accept(stream, &server_secret).await.err();
        let (stream, _) = listener.accept().await.expect("tcp accept");
        let (_tx, mut rx) = accept(stream, &server_secret).await.expect("second client accepted");
        (refused, rx.recv::<Msg>().await.expect("recv"))
    });

    let client_error = connect(&address, &wrong).await.err();
    let hung_up = matches!(client_error, Some(NetError::Refused { reason: HandshakeError::HungUp, .. }));
    assert!(hung_up, "client got {client_error:?}");

    let (mut tx, _rx) = connect(&address, &secret).await.expect("right secret");
    tx.send(&Msg::Done { id: 9, code: 0 }).await.expect("send");
    let (refused, received) = server.await.expect("server task");
    match refused {
        Some(NetError::Refused { peer, reason }) => {
            assert!(peer.starts_with("127.0.0.1:"), "{peer}");
            assert!(matches!(reason, HandshakeError::WrongSecret), "{reason}");
        }
        other => panic!("server got {other:?}"),
    }
    assert_eq!(received, Some(Msg::Done { id: 9, code: 0 }));
}

#[tokio::test]
async fn a_connection_turned_away_is_told_the_coordinator_is_busy() {
    let secret = Secret::generate().expect("secret");
    let (listener, address) = listener().await;
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("tcp accept");
        turn_away(stream);
    });
    let error = connect(&address, &secret).await.err();
    server.await.expect("server task");
    // The worker's first message may reach a closed socket, which resets
    // the connection: either way the worker may try again.
    let busy = matches!(error, Some(NetError::Refused { reason: HandshakeError::Busy | HandshakeError::Io(_), .. }));
    assert!(busy, "client got {error:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halves_work_concurrently_from_different_tasks() {
    const COUNT: u64 = 1000;
    let secret = Secret::generate().expect("secret");
    let ((mut coord_tx, mut coord_rx), (mut worker_tx, mut worker_rx)) = pair(&secret).await;
    let job = |id| Msg::Job { id, command: format!("task {id}") };
    let done = |id| Msg::Done { id, code: id as i32 };
    let tasks = [
        tokio::spawn(async move {
            for id in 0..COUNT {
                coord_tx.send(&job(id)).await.expect("coordinator send");
            }
        }),
        tokio::spawn(async move {
            for id in 0..COUNT {
                worker_tx.send(&done(id)).await.expect("worker send");
            }
        }),
        tokio::spawn(async move {
            for id in 0..COUNT {
                assert_eq!(worker_rx.recv::<Msg>().await.expect("worker recv"), Some(job(id)));
            }
        }),
        tokio::spawn(async move {
            for id in 0..COUNT {
                assert_eq!(coord_rx.recv::<Msg>().await.expect("coordinator recv"), Some(done(id)));
            }
        }),
    ];
    for task in tasks {
        task.await.expect("task");
    }
}

#[tokio::test]
async fn garbage_peer_is_refused() {
    let secret = Secret::generate().expect("secret");
    let (listener, address) = listener().await;
    for size in [1, 2, 48, 50, 4096] {
        let mut garbage = vec![0; size];
        getrandom::fill(&mut garbage).expect("random bytes");
        // Make the length prefix plausible sometimes, so decryption is exercised too.
        if size == 50 {
            garbage[..2].copy_from_slice(&48u16.to_be_bytes());
        }
        let mut peer = TcpStream::connect(&address).await.expect("connect");
        let (stream, _) = listener.accept().await.expect("tcp accept");
        peer.write_all(&garbage).await.expect("write garbage");
        if size < 50 {
            peer.shutdown().await.expect("shutdown");
        }
        let result = accept(stream, &secret).await;
        assert!(matches!(result, Err(NetError::Refused { .. })), "{size} bytes: {:?}", result.err());
    }
}

/// Issue 28: the secret is checked from the first message alone, before
/// the coordinator answers (and spends a key exchange) or holds a slot.
#[tokio::test]
async fn the_first_message_shows_whether_the_peer_knows_the_secret() {
    let secret = Secret::generate().expect("secret");
    let (listener, address) = listener().await;
    for (peer_secret, knows) in [(Secret::generate().expect("secret"), false), (secret.clone(), true)] {
        let client = tokio::spawn({
            let address = address.clone();
            async move { connect(&address, &peer_secret).await }
        });
        let (mut stream, _) = listener.accept().await.expect("tcp accept");
        match knock(&mut stream, &secret).await {
            Ok(knock) => {
                assert!(knows, "a wrong secret passed");
                assert!(!client.is_finished(), "the worker is not answered before the knock is");
                let (_tx, _rx) = knock.answer(stream).await.expect("answer");
                client.await.expect("client").expect("the worker is in");
            }
            Err(NetError::Refused { reason: HandshakeError::WrongSecret, .. }) => {
                assert!(!knows, "the right secret was refused");
                drop(stream);
                assert!(client.await.expect("client").is_err(), "a worker with a wrong secret got in");
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[tokio::test]
async fn silent_peer_times_out() {
    let secret = Secret::generate().expect("secret");
    let (listener, address) = listener().await;
    let _peer = TcpStream::connect(&address).await.expect("connect");
    let (stream, _) = listener.accept().await.expect("tcp accept");
    let result = accept_within(stream, &secret, Duration::from_millis(50)).await;
    match result {
        Err(NetError::Refused { reason, .. }) => assert!(matches!(reason, HandshakeError::TimedOut), "{reason}"),
        other => panic!("expected a refusal, got {:?}", other.err()),
    }
}

#[tokio::test]
async fn tampered_frame_is_corrupt() {
    let secret = Secret::generate().expect("secret");
    let (listener, address) = listener().await;
    let (proxy, proxy_address) = self::listener().await;
    let server_secret = secret.clone();
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("tcp accept");
        let (_tx, mut rx) = accept(stream, &server_secret).await.expect("accept");
        rx.recv::<Msg>().await
    });
    // Relays worker→coordinator bytes, flipping one bit after the 50-byte handshake message.
    tokio::spawn(async move {
        let (worker, _) = proxy.accept().await.expect("proxy accept");
        let coordinator = TcpStream::connect(&address).await.expect("proxy connect");
        let ((mut from_worker, mut to_worker), (mut from_coordinator, mut to_coordinator)) =
            (worker.into_split(), coordinator.into_split());
        tokio::spawn(async move { tokio::io::copy(&mut from_coordinator, &mut to_worker).await });
        let mut relayed = 0;
        let mut buf = vec![0; 4096];
        loop {
            let n = from_worker.read(&mut buf).await.expect("proxy read");
            if n == 0 {
                break;
            }
            if (relayed..relayed + n).contains(&60) {
                buf[60 - relayed] ^= 1;
            }
            relayed += n;
            to_coordinator.write_all(&buf[..n]).await.expect("proxy write");
        }
    });
    let (mut tx, _rx) = connect(&proxy_address, &secret).await.expect("connect through proxy");
    tx.send(&Msg::Job { id: 1, command: "rm -rf /".into() }).await.expect("send");
    let result = server.await.expect("server task");
    assert!(matches!(result, Err(NetError::Corrupt(_))), "{result:?}");
}

#[test]
fn access_file_secret_stays_out_of_debug() {
    let access =
        AccessFile { address: "node17:40123".into(), secret: Secret::generate().expect("secret"), run_id: "r1".into() };
    let debug = format!("{access:?}");
    assert!(!debug.contains(&access.secret.to_hex()), "{debug}");
    assert!(debug.contains("Secret(<redacted>)"), "{debug}");
}

#[test]
fn access_file_errors_are_clear() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("access.json");
    assert!(matches!(AccessFile::read(&path), Err(NetError::AccessMissing { .. })));

    fs_err::write(&path, "{\"address\": ").expect("write");
    assert!(matches!(AccessFile::read(&path), Err(NetError::AccessParse { .. })));

    fs_err::write(&path, r#"{"address": "a:1", "secret": "abcd", "run_id": "r"}"#).expect("write");
    let error = AccessFile::read(&path).expect_err("short secret");
    assert!(matches!(error, NetError::AccessSecret { .. }));
    assert!(error.to_string().contains("must be 64 hex digits, found 4 characters"), "{error}");

    let not_hex = "zz".repeat(SECRET_LEN);
    fs_err::write(&path, format!(r#"{{"address": "a:1", "secret": "{not_hex}", "run_id": "r"}}"#)).expect("write");
    assert!(matches!(AccessFile::read(&path), Err(NetError::AccessSecret { .. })));
}

#[tokio::test]
async fn unreachable_coordinator_is_a_connect_error() {
    let (listener, address) = listener().await;
    drop(listener);
    let secret = Secret::generate().expect("secret");
    assert!(matches!(connect(&address, &secret).await, Err(NetError::Connect { .. })));
}
