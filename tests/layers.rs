//! The layers `docs/design/architecture.md` draws, checked on the source:
//! no module names one it must not know, and the CLI, its tests and the
//! benchmarks reach the runtime only through its facade.

use std::path::{Path, PathBuf};

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
/// unit tests (from `#[cfg(test)]` on) may build their inputs with any
/// layer — the compiler makes the clearest test graphs — and are not read.
fn offending(dir: &str, bad: impl Fn(&str) -> bool) -> Vec<String> {
    let mut lines = Vec::new();
    for (path, text) in sources(dir) {
        let code = text.lines().take_while(|line| line.trim() != "#[cfg(test)]");
        for (i, line) in code.enumerate().filter(|(_, line)| bad(line)) {
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

/// What a module's files are called from inside it: each file (by stem)
/// and child directory, and the names its namespace file re-exports from them.
struct Namespace {
    nodes: Vec<String>,
    exports: std::collections::HashMap<String, String>,
}

impl Namespace {
    /// The module in `dir`: its `mod.rs`, or the `dir.rs` beside it, or
    /// the crate root, is the file whose `pub use` lines say what names
    /// stand for which child.
    fn of(dir: &Path) -> Self {
        let mut nodes = Vec::new();
        for entry in fs_err::read_dir(dir).expect("source directory") {
            let path = entry.expect("directory entry").path();
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
            let skipped =
                ["mod", "lib", "main", "tests", "snapshots"].contains(&stem.as_str()) || stem.ends_with("_tests");
            if !skipped && (path.is_dir() || path.extension().is_some_and(|e| e == "rs")) && !nodes.contains(&stem) {
                nodes.push(stem);
            }
        }
        let beside = dir.with_extension("rs");
        let root = ["mod.rs", "lib.rs", "main.rs"].map(|name| dir.join(name)).into_iter().find(|p| p.exists());
        let text =
            root.or(beside.exists().then_some(beside)).map(fs_err::read_to_string).transpose().expect("module file");
        let mut exports = std::collections::HashMap::new();
        for line in text.unwrap_or_default().lines().map(str::trim) {
            let Some(rest) = line.strip_prefix("pub use ").or_else(|| line.strip_prefix("pub(crate) use ")) else {
                continue;
            };
            let Some((child, names)) = rest.split_once("::") else { continue };
            for name in names.trim_end_matches(';').trim_matches(|c| c == '{' || c == '}').split(',') {
                let name = name.rsplit(" as ").next().unwrap_or(name).rsplit("::").next().unwrap_or(name).trim();
                exports.insert(name.to_owned(), child.to_owned());
            }
        }
        Self { nodes, exports }
    }

    /// The child that `name`, written after `super::` (or the module's
    /// own path), stands for.
    fn child(&self, name: &str) -> Option<&str> {
        self.nodes
            .iter()
            .find(|n| *n == name)
            .map(String::as_str)
            .or_else(|| self.exports.get(name).map(String::as_str))
    }
}

/// The first name of each path written after `prefix` in `code`: `b` in
/// `super::b::C`, and `b`, `c` and `D` in `super::{b::X, c, D}`.
fn names_after<'a>(code: &'a str, prefix: &str) -> Vec<&'a str> {
    let ident = |s: &'a str| s.trim_start().split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
    let mut names = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut start) = (0, 0);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        names.push(ident(&group[start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.push(ident(&group[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            names.push(ident(rest));
        }
    }
    names
}

/// The import circles between the files of each module under `root`
/// (`engine/src` or `src`): for each, its files relative to the workspace, sorted.
fn circles(root: &str) -> Vec<Vec<String>> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![base.join(root)];
    let mut found = Vec::new();
    while let Some(dir) = dirs.pop() {
        let namespace = Namespace::of(&dir);
        let inside = dir.strip_prefix(base.join(root)).expect("under the root");
        let own_path: String = inside.iter().map(|part| format!("::{}", part.to_string_lossy())).collect();
        let own_prefix = format!("crate{own_path}::");
        let mut graph = petgraph::graphmap::DiGraphMap::<usize, ()>::new();
        for (from, stem) in namespace.nodes.iter().enumerate() {
            graph.add_node(from);
            let path = dir.join(format!("{stem}.rs"));
            if dir.join(stem).is_dir() && stem != "snapshots" {
                dirs.push(dir.join(stem));
            }
            // A child directory names its siblings by their full path only.
            let (own, below) = match fs_err::read_to_string(&path) {
                Ok(text) => (vec![text], Vec::new()),
                Err(_) => (
                    Vec::new(),
                    sources(&format!("{root}{own_path}/{stem}").replace("::", "/"))
                        .into_iter()
                        .map(|(_, text)| text)
                        .collect(),
                ),
            };
            let code = |text: &String| {
                let lines = text.lines().take_while(|line| line.trim() != "#[cfg(test)]");
                lines.filter(|line| !line.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
            };
            let own: Vec<String> = own.iter().map(code).collect();
            let below: Vec<String> = below.iter().map(code).collect();
            let names = own
                .iter()
                .flat_map(|code| names_after(code, "super::").into_iter().chain(names_after(code, &own_prefix)))
                .chain(below.iter().flat_map(|code| names_after(code, &own_prefix)));
            for name in names {
                if let Some(to) = namespace.child(name).and_then(|c| namespace.nodes.iter().position(|n| n == c)) {
                    if to != from {
                        graph.add_edge(from, to, ());
                    }
                }
            }
        }
        for component in petgraph::algo::tarjan_scc(&graph) {
            if component.len() > 1 {
                let mut files: Vec<String> = component
                    .iter()
                    .map(|&i| format!("{root}{own_path}/{}", namespace.nodes[i]).replace("::", "/"))
                    .collect();
                files.sort();
                found.push(files);
            }
        }
    }
    found.sort();
    found
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
    assert_eq!(
        circles("engine/src"),
        known("engine/src", KNOWN_CIRCLES),
        "engine/src: update KNOWN_CIRCLES when a circle is broken"
    );
    assert_eq!(
        circles("src"),
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
