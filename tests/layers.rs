//! The layers `docs/design/architecture.md` draws, checked on the source:
//! no module names one it must not know, the CLI, its tests and the
//! benchmarks reach the runtime only through its facade, and no two files
//! of a module import each other in a circle — read from each crate as the
//! compiler reads it ([`module_tree`]), and checked on each form a circle
//! can take ([`circle_forms`]).

mod circle_forms;
mod module_tree;

use std::path::{Path, PathBuf};

use module_tree::{Crate, test_only_lines};

/// Each `.rs` file under `dir` (relative to the workspace) with its text.
fn sources(dir: &str) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)];
    while let Some(dir) = dirs.pop() {
        for entry in fs_err::read_dir(&dir).expect("source directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with(file!()) {
                let text = fs_err::read_to_string(&path).expect("source file");
                files.push((path, text));
            }
        }
    }
    files
}

/// The lines under `dir` that `bad` flags, as `path:line: text`. A file's
/// unit tests (its `#[cfg(test)]` items) may build their inputs with any
/// layer — the compiler makes the clearest test graphs — and are not read.
fn offending(dir: &str, bad: impl Fn(&str) -> bool) -> Vec<String> {
    let mut lines = Vec::new();
    for (path, text) in sources(dir) {
        let tests = test_only_lines(&path, &text);
        let in_tests = |n: usize| tests.iter().any(|&(first, last)| (first..=last).contains(&n));
        let code = text.lines().enumerate().filter(|(i, _)| !in_tests(i + 1));
        for (i, line) in code.filter(|(_, line)| bad(line)) {
            let shown = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&path).display().to_string();
            lines.push(format!("{shown}:{}: {}", i + 1, line.trim()));
        }
    }
    lines.sort();
    lines
}

fn names_any(names: &'static [&'static str]) -> impl Fn(&str) -> bool {
    move |line| names.iter().any(|name| line.contains(name))
}

#[test]
fn each_layer_names_only_the_layers_below_it() {
    let layers: [(&str, &'static [&'static str]); 5] = [
        ("engine/src/runtime", &["crate::spec", "crate::compile"]),
        ("engine/src/runtime/core", &["runtime::coordinator", "runtime::agent", "runtime::protocol"]),
        ("engine/src/runtime/protocol", &["runtime::coordinator", "runtime::agent"]),
        ("engine/src/runtime/agent", &["runtime::coordinator"]),
        ("engine/src/explain", &["runtime::coordinator", "runtime::agent", "runtime::protocol", "runtime::core"]),
    ];
    for (dir, names) in layers {
        assert_eq!(offending(dir, names_any(names)), Vec::<String>::new(), "{dir} names {names:?}");
    }
}

/// A path into one of the runtime's modules (`flow_engine::runtime::core::Core`),
/// not a name its facade re-exports (`flow_engine::runtime::Event`).
fn past_the_facade(line: &str) -> bool {
    let prefix = concat!("flow_engine", "::runtime::");
    line.match_indices(prefix).any(|(at, _)| {
        let rest = &line[at + prefix.len()..];
        let name = rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
        name.starts_with(char::is_lowercase) && rest[name.len()..].starts_with("::")
    })
}

#[test]
fn the_cli_its_tests_and_the_benchmarks_use_the_runtime_facade() {
    assert!(past_the_facade("use flow_engine::runtime::core::Core;"));
    assert!(!past_the_facade("use flow_engine::runtime::{Event, RunDir};"));
    assert!(!past_the_facade("flow_engine::runtime::start(graph)"));
    for dir in ["src", "tests", "engine/benches"] {
        assert_eq!(offending(dir, past_the_facade), Vec::<String>::new(), "{dir}");
    }
}

/// Circles that are still to be broken. A module's files form layers too:
/// a file names only the files below it, so each can be read and changed
/// with the ones it uses in mind and not the ones that use it.
const KNOWN_CIRCLES: &[&[&str]] = &[];

/// The CLI's circles, as [`KNOWN_CIRCLES`] for the engine.
const KNOWN_CLI_CIRCLES: &[&[&str]] = &[];

#[test]
fn no_import_circle_between_the_files_of_a_module() {
    let known = |root: &str, circles: &[&[&str]]| -> Vec<Vec<String>> {
        circles.iter().map(|files| files.iter().map(|f| format!("{root}/{f}")).collect()).collect()
    };
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(
        Crate::read(base, "engine/src/lib.rs").circles(),
        known("engine/src", KNOWN_CIRCLES),
        "engine/src: update KNOWN_CIRCLES when a circle is broken"
    );
    assert_eq!(
        Crate::read(base, "src/main.rs").circles(),
        known("src", KNOWN_CLI_CIRCLES),
        "src: update KNOWN_CLI_CIRCLES when a circle is broken"
    );
}

/// A run directory's files, read other than through `RunView`.
fn reads_run_files(line: &str) -> bool {
    const READERS: [&str; 9] = [
        ".read_meta(",
        ".read_graph(",
        ".read_summary(",
        ".read_workers(",
        ".read_workers_left(",
        ".read_allocs(",
        "read_journal(",
        "JournalReader::open(",
        "read_output(",
    ];
    READERS.iter().any(|reader| line.contains(reader))
}

/// Commands, `explain` and `report` read a run through `rundir::RunView`
/// alone, so they share one rule for live, missing, torn and damaged
/// files. The run directory module itself, the log's readers and the
/// runtime (which writes its run and reuses earlier ones) are below it.
#[test]
fn run_files_are_read_only_through_the_run_view() {
    assert!(reads_run_files("let graph = run.read_graph()?;"));
    assert!(!reads_run_files("let view = RunView::read(&run)?;"));
    for dir in ["src", "engine/src/explain", "engine/src/report"] {
        assert_eq!(offending(dir, reads_run_files), Vec::<String>::new(), "{dir} reads run files past RunView");
    }
}
