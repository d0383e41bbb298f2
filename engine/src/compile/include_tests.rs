//! Workflows split over files, loaded with [`crate::spec::load`] and
//! compiled: names, variables, defaults, paths and where problems point.

use std::path::Path;

use super::{Options, compile};
use crate::diag::{Code, Diagnostic, Source};
use crate::ir::Graph;
use crate::spec::{Format, load};

/// Loads `workflow.toml` from a temporary directory holding `files`, with
/// `-v` pairs `vars`, and compiles it.
fn build(
    files: &[(&str, &str)],
    vars: &[(&str, serde_json::Value)],
) -> (std::sync::Arc<Source>, Result<Graph, Vec<Diagnostic>>) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, content) in files {
        let full = dir.path().join(path);
        fs_err::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        fs_err::write(full, content).expect("write");
    }
    let path = dir.path().join("workflow.toml");
    // Files are named by their paths: the included ones' are shown relative to `dir`.
    let root = Source::new(path.display().to_string(), fs_err::read_to_string(&path).expect("read"));
    let (workflow, source, mut diags) = load(&root, &path, Format::Toml);
    let vars = vars.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    let options = Options { base_dir: dir.path().to_path_buf(), vars, ..Options::default() };
    let result = match workflow {
        Some(w) => compile(&w, &source, &options),
        None => Err(Vec::new()),
    };
    let result = match result {
        Ok(g) if diags.is_empty() => Ok(g),
        Ok(_) => Err(diags),
        Err(more) => {
            diags.extend(more);
            diags.sort_by_key(|d| d.span.as_ref().map(|s| s.start));
            Err(diags)
        }
    };
    (source, result)
}

fn graph(files: &[(&str, &str)], vars: &[(&str, serde_json::Value)]) -> Graph {
    match build(files, vars) {
        (_, Ok(g)) => g,
        (_, Err(d)) => panic!("expected success, got {d:#?}"),
    }
}

/// `text` with the temporary directory's path taken off the file names in it.
fn relative(text: &str, source: &Source) -> String {
    let dir = source.name.trim_end_matches("workflow.toml");
    text.replace(dir, "")
}

/// Each problem as its code, `file:line:column` and the include chain in its help.
fn problems(files: &[(&str, &str)]) -> Vec<(Code, String, Vec<String>)> {
    let (source, result) = build(files, &[]);
    let diags = result.expect_err("expected problems");
    diags
        .iter()
        .map(|d| {
            let located = d.located(&source);
            let chain = located
                .help
                .iter()
                .flat_map(|h| h.lines())
                .filter(|l| l.starts_with("included from"))
                .map(str::to_owned);
            let chain = chain.map(|l| relative(&l, &source));
            (d.code, relative(&d.location(&source), &source), chain.collect())
        })
        .collect()
}

const LIB: &str = r#"[vars]
receptor = "a.pdb"
deep = { n = 1 }

[defaults]
retries = 2

[templates.big]
cpus = 4

[[tasks]]
name = "score"
use = "big"
range = "1-2"
after = ["prep"]
outputs = ["out/{{ index }}-{{ vars.receptor }}.txt"]
command = "true"

[[tasks]]
name = "prep"
command = "echo {{ vars.deep.n }}"
"#;

#[test]
fn included_names_variables_defaults_and_paths() {
    let (source, g) = match build(
        &[
            (
                "workflow.toml",
                "include = [{ path = \"lib/x.toml\", as = \"lg\", vars = { receptor = \"b.pdb\" } }]\n\n[defaults]\nretries = 9\n\n[[tasks]]\nname = \"t\"\nuse = \"lg.big\"\nafter = [\"lg.score[2]\"]\ncommand = \"true\"\n",
            ),
            ("lib/x.toml", LIB),
        ],
        &[],
    ) {
        (source, Ok(g)) => (source, g),
        (_, Err(d)) => panic!("expected success, got {d:#?}"),
    };
    let names: Vec<&str> = g.groups.iter().map(|gr| gr.name.as_str()).collect();
    assert_eq!(names, ["lg.prep", "lg.score", "t"]);
    let group = |name: &str| g.groups.iter().find(|gr| gr.name == name).expect(name);
    assert_eq!(group("lg.score").retries, 2);
    assert_eq!(group("lg.prep").retries, 2);
    assert_eq!(group("t").retries, 9);
    assert_eq!(group("t").variants[0].cpus, crate::ir::Amount::from_f64(4.0).expect("amount"));
    assert_eq!(group("lg.score").template.outputs, ["lib/out/{{ index }}-{{ vars.receptor }}.txt"]);
    assert_eq!(group("lg.score").template.cwd.as_deref(), Some("lib"));
    let from = group("lg.score").source.as_ref().map(|s| (relative(&s.file, &source), s.line));
    assert_eq!(from, Some(("lib/x.toml".to_owned(), 12)));
    assert_eq!(g.vars["lg"], serde_json::json!({ "receptor": "b.pdb", "deep": { "n": 1 } }));
}

#[test]
fn command_line_variables_reach_into_namespaces() {
    let files = [
        (
            "workflow.toml",
            "include = [\"lib/x.toml\"]\n\n[vars]\nreceptor = \"root\"\n\n[[tasks]]\nname = \"t\"\ncommand = \"true\"\n",
        ),
        ("lib/x.toml", LIB),
    ];
    let vars = [
        ("x.receptor", serde_json::json!("c.pdb")),
        ("x", serde_json::json!({ "deep": { "n": 5 } })),
        ("receptor", serde_json::json!("r")),
    ];
    let g = graph(&files, &vars);
    assert_eq!(g.vars["x"], serde_json::json!({ "receptor": "c.pdb", "deep": { "n": 5 } }));
    assert_eq!(g.vars["receptor"], "r");
}

#[test]
fn problems_point_into_the_file_they_are_in() {
    let found = problems(&[
        (
            "workflow.toml",
            "include = [\"lib/a.toml\", \"lib/missing.toml\"]\n\n[[tasks]]\nname = \"t\"\ncommand = \"true\"\n",
        ),
        ("lib/a.toml", "include = [\"b.toml\"]\n\n[[tasks]]\nname = \"u\"\ncpus = -1\ncommand = \"true\"\n"),
        ("lib/b.toml", "include = [\"a.toml\"]\n\n[[tasks]]\nname = \"v\"\nafter = [\"w\"]\ncommand = \"true\"\n"),
    ]);
    let chain = |v: &[&str]| v.iter().map(|s| format!("included from {s}")).collect::<Vec<_>>();
    assert_eq!(
        found,
        [
            (Code::IncludeMissing, "workflow.toml:1:26".to_owned(), vec![]),
            (Code::CompileBadValue, "lib/a.toml:5:8".to_owned(), chain(&["workflow.toml:1:12"])),
            (Code::IncludeCycle, "lib/b.toml:1:12".to_owned(), chain(&["lib/a.toml:1:12", "workflow.toml:1:12"])),
            (Code::CompileBadAfter, "lib/b.toml:5:10".to_owned(), chain(&["lib/a.toml:1:12", "workflow.toml:1:12"])),
        ]
    );
}

#[test]
fn a_namespace_may_not_clash_or_hold_a_dot() {
    let found = problems(&[
        (
            "workflow.toml",
            "include = [\"x.toml\", { path = \"x.toml\", as = \"t\" }, { path = \"x.toml\", as = \"a.b\" }, { path = \"x.toml\", as = \"v\" }, \"x.toml\"]\n\n[vars]\nv = 1\n\n[[tasks]]\nname = \"t\"\ncommand = \"true\"\n",
        ),
        ("x.toml", "[[tasks]]\nname = \"s\"\ncommand = \"true\"\n"),
    ]);
    let codes: Vec<Code> = found.iter().map(|f| f.0).collect();
    assert_eq!(codes, [Code::IncludeClash, Code::IncludeBadValue, Code::IncludeClash, Code::IncludeClash]);
}

#[test]
fn a_file_without_includes_keeps_its_own_source() {
    let root = Source::new("w.toml", "[[tasks]]\nname = \"a\"\ncommand = \"true\"\n");
    let (workflow, source, diags) = load(&root, Path::new("w.toml"), Format::Toml);
    assert!(workflow.is_some() && diags.is_empty());
    assert!(std::sync::Arc::ptr_eq(&root, &source));
}
