//! Transport throughput over localhost: 10,000 messages of 10 KiB sent
//! through an encrypted channel (`flow_engine::net`) and received by another
//! task, plus the round-trip time of a small request and its reply.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flow_engine::net::{Receiver, Secret, Sender, accept, connect};
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::runtime::Runtime;

const MESSAGES: u64 = 10_000;
const SIZE: usize = 10 * 1024;
const ROUND_TRIPS: u64 = 1_000;

/// Task output as bytes: postcard encodes a `Vec<u8>` one element at a time.
#[derive(Serialize, Deserialize)]
struct Output {
    task: u64,
    data: Vec<u8>,
}

/// The same size as text, which postcard copies in one piece: the
/// difference to [`Output`] is encoding cost, not transport cost.
#[derive(Serialize, Deserialize)]
struct Text {
    task: u64,
    data: String,
}

/// A connected (coordinator, worker) pair over a fresh localhost socket.
async fn pair() -> ((Sender, Receiver), (Sender, Receiver)) {
    let secret = Secret::generate().expect("secret");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    let server_secret = secret.clone();
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("tcp accept");
        accept(stream, &server_secret).await.expect("accept")
    });
    let client = connect(&address, &secret).await.expect("connect");
    (server.await.expect("server task"), client)
}

/// Sends `MESSAGES` copies of `make(i)` from one task while this one receives them.
async fn stream<T, F>(tx: &mut Option<Sender>, rx: &mut Receiver, make: F)
where
    T: Serialize + for<'de> Deserialize<'de> + Send + 'static,
    F: Fn(u64) -> T + Send + 'static,
{
    let mut sender = tx.take().expect("sender is back");
    let task = tokio::spawn(async move {
        for i in 0..MESSAGES {
            sender.send(&make(i)).await.expect("send");
        }
        sender
    });
    for _ in 0..MESSAGES {
        rx.recv::<T>().await.expect("recv").expect("not closed");
    }
    *tx = Some(task.await.expect("sender task"));
}

fn throughput(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let ((coord_tx, _coord_rx), (_worker_tx, mut worker_rx)) = runtime.block_on(pair());
    let mut coord_tx = Some(coord_tx);
    let mut group = c.benchmark_group("net");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(MESSAGES * SIZE as u64));
    group.bench_function("send_10k_x_10KiB_bytes", |b| {
        let data = vec![b'x'; SIZE];
        b.iter(|| {
            let data = data.clone();
            runtime.block_on(stream(&mut coord_tx, &mut worker_rx, move |task| Output { task, data: data.clone() }));
        });
    });
    group.bench_function("send_10k_x_10KiB_text", |b| {
        let data = "x".repeat(SIZE);
        b.iter(|| {
            let data = data.clone();
            runtime.block_on(stream(&mut coord_tx, &mut worker_rx, move |task| Text { task, data: data.clone() }));
        });
    });
    group.finish();
    round_trip(c, &runtime);
}

/// A small job out and a small reply back, one at a time: the dispatch latency floor.
fn round_trip(c: &mut Criterion, runtime: &Runtime) {
    let ((mut coord_tx, mut coord_rx), (mut worker_tx, mut worker_rx)) = runtime.block_on(pair());
    let echo = runtime.spawn(async move {
        while let Some(id) = worker_rx.recv::<u64>().await.expect("worker recv") {
            worker_tx.send(&id).await.expect("worker send");
        }
    });
    let mut group = c.benchmark_group("net");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ROUND_TRIPS));
    group.bench_function("round_trip_1k_small", |b| {
        b.iter(|| {
            runtime.block_on(async {
                for id in 0..ROUND_TRIPS {
                    coord_tx.send(&id).await.expect("send");
                    assert_eq!(coord_rx.recv::<u64>().await.expect("recv"), Some(id));
                }
            });
        });
    });
    group.finish();
    drop(coord_tx);
    runtime.block_on(echo).expect("echo task");
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = throughput
}
criterion_main!(benches);
