//! Compiler throughput: a 1,000,000-line `each_line` array, a 3-stage
//! pipeline of 100,000 instances per stage linked only by inferred file
//! dependencies, and the ligand-screening example.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use flow_engine::compile::{Options, compile};
use flow_engine::diag::Source;
use flow_engine::spec::{Format, parse};

fn compile_file(dir: &Path, text: &str) -> u64 {
    let source = Source::new("workflow.toml", text);
    let workflow = parse(&source, Format::Toml).expect("benchmark workflow parses");
    let options = Options { base_dir: dir.to_path_buf(), ..Options::default() };
    compile(&workflow, &source, &options).expect("benchmark workflow compiles").instance_count()
}

fn each_line(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let lines: String = (0..1_000_000).map(|i| format!("ligand-{i:07} C1=CC=CC=C1\n")).collect();
    std::fs::write(dir.path().join("lines.txt"), lines).expect("write lines");
    let text = r#"
[[tasks]]
name = "each"
each_line = "lines.txt"
command = "echo {{ item }}"
outputs = ["out/{{ index }}.txt"]
"#;
    let mut group = c.benchmark_group("compile");
    group.sample_size(10);
    group.bench_function("each_line_1m", |b| b.iter(|| assert_eq!(compile_file(dir.path(), text), 1_000_000)));
    group.finish();
}

fn pipeline(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = r#"
[[tasks]]
name = "a"
range = "1-100000"
command = "echo {{ index }} > a/{{ index }}"
outputs = ["a/{{ index }}"]

[[tasks]]
name = "b"
range = "1-100000"
command = "cp a/{{ index }} b/{{ index }}"
inputs = ["a/{{ index }}"]
outputs = ["b/{{ index }}"]

[[tasks]]
name = "c"
range = "1-100000"
command = "cp b/{{ index }} c/{{ index }}"
inputs = ["b/{{ index }}"]
outputs = ["c/{{ index }}"]
"#;
    let mut group = c.benchmark_group("compile");
    group.sample_size(10);
    group.bench_function("pipeline_3x100k", |b| b.iter(|| assert_eq!(compile_file(dir.path(), text), 300_000)));
    group.finish();
}

fn ligand_screening(c: &mut Criterion) {
    let dir: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "examples", "workflows", "ligand-screening"].iter().collect();
    let text: Arc<str> = std::fs::read_to_string(dir.join("workflow.toml")).expect("example exists").into();
    c.bench_function("compile/ligand_screening", |b| b.iter(|| compile_file(&dir, &text)));
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = each_line, pipeline, ligand_screening
}
criterion_main!(benches);
