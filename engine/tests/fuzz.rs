//! A bounded fuzz test of the parser and the compiler (issue 12): workflow
//! files from `examples/workflows` and `tests/invalid`, mutated at random —
//! bytes flipped, inserted, deleted, lines duplicated or dropped, the text
//! cut — go through `parse_recoverable` and `compile`. No input may panic,
//! take over a second of CPU time, or produce a diagnostic that cannot be
//! rendered or has no location.
//!
//! `FLOW_FUZZ_SECONDS` sets how long it runs (default 20; CI uses 60). Inputs
//! that once failed are kept in `engine/tests/fuzz-regressions/` and run
//! first, every time; a failing input is written there as it is found.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use flow_engine::compile::{Options, compile};
use flow_engine::diag::{Diagnostic, MAX_SHOWN, Source};
use flow_engine::spec::{Format, parse_recoverable};

/// The most CPU time one input may take (issue 29: inputs that took
/// quadratic time passed a 10 s wall-clock limit on a fast machine).
const PER_INPUT: Duration = Duration::from_secs(1);

/// The CPU time this thread has used.
fn cpu_time() -> Duration {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_THREAD).expect("getrusage");
    let micros =
        |t: nix::sys::time::TimeVal| Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64);
    micros(usage.user_time()) + micros(usage.system_time())
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf()
}

/// Workflow files to start from, each with the directory its paths are relative to.
fn seeds() -> Vec<(PathBuf, Format)> {
    let mut seeds = Vec::new();
    let mut add_dir = |dir: PathBuf| {
        for entry in fs_err::read_dir(&dir).expect("seed dir").flatten() {
            let path = entry.path();
            if let Some(format) = Format::from_path(&path).filter(|_| path.is_file()) {
                seeds.push((path, format));
            }
        }
    };
    for example in fs_err::read_dir(repo().join("examples/workflows")).expect("examples").flatten() {
        add_dir(example.path());
    }
    add_dir(repo().join("tests/invalid"));
    add_dir(repo().join("engine/tests/fuzz-regressions"));
    seeds.sort_by(|a, b| a.0.cmp(&b.0));
    seeds
}

/// A small xorshift generator: reproducible from its seed, printed on failure.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that make parsers and templates work: syntax, quotes, braces, huge numbers.
const TOKENS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    "\"",
    "'",
    "=",
    ":",
    ",",
    "\n",
    "- ",
    "{{",
    "}}",
    "{%",
    "%}",
    "[[tasks]]",
    "-9223372036854775808",
    "18446744073709551616",
    "1e308",
    "\u{0}",
    "é",
    "\\",
    "&a",
    "*a",
    "!!binary",
    "range = \"1-1000000000000\"",
    "after = [\"a[-9223372036854775808-9223372036854775807]\"]",
    "{{ item }}",
    "{{ index // 0 }}",
];

fn mutate(text: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = text.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(7) {
            0 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] ^= 1 << rng.below(8);
            }
            1 => out.insert(at, rng.next() as u8),
            2 if at < out.len() => {
                let end = (at + rng.below(16)).min(out.len());
                out.drain(at..end);
            }
            3 => {
                let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
                out.splice(at..at, token.iter().copied());
            }
            4 => out.truncate(at),
            5 => {
                // Duplicate a line.
                let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
                let line = lines[rng.below(lines.len())].to_vec();
                out.splice(at..at, line.into_iter().chain([b'\n']));
            }
            _ => {
                // Repeat a stretch many times: long lines, deep nesting.
                let end = (at + 1 + rng.below(8)).min(out.len());
                let stretch = out[at.min(end)..end].to_vec();
                let times = 1 + rng.below(2000);
                out.splice(at..at, stretch.iter().copied().cycle().take(stretch.len() * times));
            }
        }
    }
    out
}

/// Parses and compiles one input; on a finding, keeps the input as a
/// regression seed and panics with its name.
fn check(name: &str, bytes: &[u8], format: Format, base_dir: &Path) {
    let outcome = std::panic::catch_unwind(|| check_one(name, bytes, format, base_dir));
    if let Err(finding) = outcome {
        if !name.contains("fuzz-regressions") {
            let ext = if format == Format::Yaml { "yaml" } else { "toml" };
            let hash =
                bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
            let kept = repo().join(format!("engine/tests/fuzz-regressions/found-{hash:016x}.{ext}"));
            let _ = fs_err::write(&kept, bytes);
            eprintln!("fuzz: kept the input as {}", kept.display());
        }
        std::panic::resume_unwind(finding);
    }
}

fn check_one(name: &str, bytes: &[u8], format: Format, base_dir: &Path) {
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    let source = Source::new("workflow", text);
    let started = cpu_time();
    let outcome = std::panic::catch_unwind(|| {
        let (workflow, mut diags) = parse_recoverable(&source, format);
        if let Some(workflow) = workflow {
            let options = Options { base_dir: base_dir.to_path_buf(), ..Options::default() };
            if let Err(more) = compile(&workflow, &source, &options) {
                diags.extend(more);
            }
        }
        diags
    });
    let diags = outcome.unwrap_or_else(|_| panic!("{name}: the parser or compiler panicked"));
    let took = cpu_time() - started;
    assert!(took < PER_INPUT, "{name}: took {took:?} of CPU time");
    // As `flow` shows them: the first few, the rest counted.
    for d in diags.iter().take(MAX_SHOWN) {
        assert_renders(name, d, &source);
    }
}

fn assert_renders(name: &str, d: &Diagnostic, source: &Arc<Source>) {
    assert!(d.span.is_some(), "{name}: `{}` has no location", d.message);
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor());
    let mut out = String::new();
    let rendered =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler.render_report(&mut out, &d.report(source))));
    assert!(matches!(rendered, Ok(Ok(()))), "{name}: `{}` cannot be rendered", d.message);
}

/// `flow` compiles on its main thread, which has 8 MiB of stack; test
/// threads have 2 MiB.
#[test]
fn mutated_workflows_never_panic_hang_or_lose_the_location() {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(fuzz)
        .expect("fuzz thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn fuzz() {
    let seconds = std::env::var("FLOW_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let seed = std::env::var("FLOW_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_f10f);
    let seeds = seeds();
    assert!(seeds.len() > 50, "seeds: {}", seeds.len());
    for (path, format) in &seeds {
        let bytes = fs_err::read(path).expect("seed");
        check(&path.display().to_string(), &bytes, *format, path.parent().expect("dir"));
    }
    let mut rng = Rng(seed);
    let mut runs = 0u64;
    while Instant::now() < deadline {
        let (path, format) = &seeds[rng.below(seeds.len())];
        let bytes = fs_err::read(path).expect("seed");
        let state = rng.0;
        let mutated = mutate(&bytes, &mut rng);
        let name = format!("{} mutated (FLOW_FUZZ_SEED state {state})", path.display());
        if std::env::var_os("FLOW_FUZZ_TRACE").is_some() {
            eprintln!("{name}");
            let _ = fs_err::write(std::env::temp_dir().join("flow-fuzz-last"), &mutated);
        }
        check(&name, &mutated, *format, path.parent().expect("dir"));
        runs += 1;
    }
    eprintln!("fuzz: {runs} mutated inputs in {seconds} s, from {} seeds", seeds.len());
}
