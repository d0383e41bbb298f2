//! Output log throughput: 10,000 records of 10 KiB sent by 4 threads
//! through `OutputLog` into a temporary file, then read back.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flow_engine::ir::{GroupId, TaskId};
use flow_engine::log::{OutputLog, OutputRecord, OutputStream, read_output};

const RECORDS: u64 = 10_000;
const SIZE: usize = 10 * 1024;
const PRODUCERS: u64 = 4;

/// Writes the benchmark's records to a fresh log at `path`.
fn write_log(path: &Path) {
    let _ = fs_err::remove_file(path);
    let (tx, handle) = OutputLog::create(path).expect("create output log");
    let data = vec![b'x'; SIZE];
    std::thread::scope(|scope| {
        for p in 0..PRODUCERS {
            let (tx, data) = (tx.clone(), &data);
            scope.spawn(move || {
                for i in (p..RECORDS).step_by(PRODUCERS as usize) {
                    let task = TaskId::new(GroupId(0), i);
                    let record =
                        OutputRecord { task, attempt: 0, stream: OutputStream::Stdout, time_us: i, data: data.clone() };
                    tx.blocking_send(record).expect("send");
                }
            });
        }
    });
    handle.finish().expect("write output log");
}

fn output_log(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("output.log");
    let payload = RECORDS * SIZE as u64;
    let mut group = c.benchmark_group("output_log");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(payload));
    group.bench_function("write_10k_x_10KiB", |b| b.iter(|| write_log(&path)));

    let size = fs_err::metadata(&path).expect("log exists").len();
    assert!(size as f64 <= 1.05 * payload as f64, "log is {size} bytes for {payload} bytes of output");
    group.bench_function("read_10k_x_10KiB", |b| {
        b.iter(|| {
            let reader = read_output(&path).expect("open output log");
            let bytes: u64 = reader.map(|r| r.expect("record").data.len() as u64).sum();
            assert_eq!(bytes, payload);
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = output_log
}
criterion_main!(benches);
