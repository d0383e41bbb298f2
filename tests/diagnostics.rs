//! The diagnostics corpus: every workflow under `tests/invalid` holds a
//! mistake (or several), and `flow check` must reject it with exit code 2,
//! pointing at the mistake with `file:line:column`, a snippet and a help
//! line. The full output of each is snapshotted.

use std::path::{Path, PathBuf};

use crate::support::{Test, root};

/// The files that each hold several unrelated mistakes, and how many
/// diagnostics each must print.
const SEVERAL_MISTAKES: &[(&str, usize)] = &[("49-several-mistakes.toml", 7), ("50-several-spec-mistakes.toml", 4)];

fn corpus_dir() -> PathBuf {
    root().join("tests/invalid")
}

fn is_workflow(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("toml" | "yaml" | "yml"))
}

fn file_name(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).expect("utf-8 file name")
}

/// Runs `flow check NAME` in the corpus directory; asserts exit code 2 and returns stderr.
fn check(name: &str) -> String {
    Test::new().current_dir(&corpus_dir()).args(["check", name]).invalid()
}

/// The `FILE:LINE:COL` locations of the snippet headers (`╭─[FILE:LINE:COL]`).
fn locations(stderr: &str) -> Vec<(String, usize, usize)> {
    stderr
        .split("╭─[")
        .skip(1)
        .filter_map(|rest| {
            let inside = &rest[..rest.find(']')?];
            let mut parts = inside.rsplitn(3, ':');
            let col = parts.next()?.parse().ok()?;
            let line = parts.next()?.parse().ok()?;
            Some((parts.next()?.to_owned(), line, col))
        })
        .collect()
}

fn has_help(stderr: &str) -> bool {
    stderr.lines().any(|l| l.trim_start().starts_with("help:"))
}

/// How many diagnostics were printed: one `×` marker each.
fn diagnostic_count(stderr: &str) -> usize {
    stderr.matches('×').count()
}

/// Every file is rejected with a located, labelled diagnostic and a help line.
#[test]
fn invalid_workflow() {
    insta::glob!("invalid/*.{toml,yaml,yml}", |path| {
        let name = file_name(path);
        let stderr = check(name);
        let count = diagnostic_count(&stderr);
        assert!(count >= 1, "{name}: no diagnostic printed:\n{stderr}");
        let noun = if count == 1 { "problem" } else { "problems" };
        assert!(stderr.ends_with(&format!("error: {count} {noun} in {name}\n")), "{name}: summary line:\n{stderr}");
        let locations = locations(&stderr);
        assert!(!locations.is_empty(), "{name}: no `╭─[FILE:LINE:COL]` snippet:\n{stderr}");
        for (file, line, col) in &locations {
            assert!(line * col > 0, "{name}: location {file}:{line}:{col} is not 1-based");
            assert!(
                file == name || file.starts_with("data/"),
                "{name}: snippet of {file}, expected {name} or a data file:\n{stderr}"
            );
        }
        assert!(has_help(&stderr), "{name}: every diagnostic says how to fix it, but no `help:` line:\n{stderr}");
        insta::assert_snapshot!(stderr);
    });
}

#[test]
fn the_corpus_is_large_enough() {
    let files: Vec<PathBuf> = fs_err::read_dir(corpus_dir())
        .expect("read tests/invalid")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file() && is_workflow(p))
        .collect();
    assert!(files.len() >= 30, "expected at least 30 invalid workflows, found {}", files.len());
    for (name, _) in SEVERAL_MISTAKES {
        assert!(files.iter().any(|f| file_name(f) == *name), "{name} is missing from the corpus");
    }
}

#[test]
fn several_mistakes_are_reported_together() {
    for &(name, expected) in SEVERAL_MISTAKES {
        let stderr = check(name);
        assert_eq!(diagnostic_count(&stderr), expected, "{name}: expected {expected} diagnostics:\n{stderr}");
        assert!(stderr.ends_with(&format!("error: {expected} problems in {name}\n")), "{name}:\n{stderr}");
        // Each diagnostic is on its own line of the file.
        let mut lines: Vec<usize> = locations(&stderr).into_iter().map(|(_, line, _)| line).collect();
        lines.dedup();
        assert_eq!(lines.len(), expected, "{name}: diagnostics should be on {expected} different lines:\n{stderr}");
    }
}

/// Issue 12: a mistake past column 65,535 of a one-line JSON file made
/// miette panic (exit 101); the snippet is now a window around the mistake.
#[test]
fn a_mistake_far_along_a_long_line_is_shown_clipped() {
    let items: Vec<String> = (0..12_000).map(|i| format!("\"{i:05}\"")).collect();
    let json = format!("[{},}}]", items.join(","));
    let stderr = Test::new()
        .file("items.json", &json)
        .workflow("[[tasks]]\nname = \"a\"\nfrom_json = \"items.json\"\ncommand = \"echo {{ item }}\"\n")
        .args(["check"])
        .invalid();
    assert_eq!(locations(&stderr), [("items.json".to_owned(), 1, 96_002)], "{stderr}");
    assert!(stderr.lines().all(|l| l.chars().count() < 200), "{stderr}");
    assert!(has_help(&stderr), "{stderr}");
}

/// A 30,000-character bad value is quoted by its ends, not in full.
#[test]
fn a_huge_bad_value_is_quoted_by_its_ends() {
    let workflow = format!("[[tasks]]\nname = \"a\"\ncommand = \"echo\"\ncpus = \"{}\"\n", "x".repeat(30_000));
    let stderr = Test::new().workflow(&workflow).args(["check"]).invalid();
    assert_eq!(locations(&stderr), [("workflow.toml".to_owned(), 4, 8)], "{stderr}");
    assert!(stderr.len() < 3_000, "{} bytes: {stderr}", stderr.len());
}

/// Issue 18: `flow check` on a workflow nested 8,000 levels deep exits 2
/// with a diagnostic; it used to overflow the stack and abort (134).
#[test]
fn deeply_nested_workflows_are_diagnostics_not_crashes() {
    let n = 8000;
    // Indented mappings 8,000 deep would be 32 MB, more than flow reads (16 MiB).
    let m = n / 2;
    let mappings: String = (0..m).map(|i| format!("{}a:\n", " ".repeat(i))).collect();
    let cases = [
        ("mappings.yaml", format!("{mappings}{}a: 1\n", " ".repeat(m))),
        ("sequences.yaml", format!("{}x\n", "- ".repeat(n))),
        ("flow.yaml", format!("tasks: {}{}\n", "[".repeat(n), "]".repeat(n))),
        ("arrays.toml", format!("a = {}{}\n", "[".repeat(n), "]".repeat(n))),
    ];
    for (name, text) in cases {
        let t = Test::new().file(name, &text).args(["check", name]);
        let stderr = t.invalid();
        insta::assert_snapshot!(format!("deeply_nested_{name}"), stderr);
    }
}

/// Issue 27: a template error inside a folded YAML block (`>-`), whose
/// value is not the file's text, points at the undefined name, not at the
/// whole block.
#[test]
fn a_template_error_in_a_folded_yaml_block_points_at_the_name() {
    let workflow = "tasks:\n  - name: a\n    command: >-\n      echo one\n      {{ nope }}\n      two\n";
    let err = Test::new().file("workflow.yaml", workflow).args(["check"]).invalid();
    let expected = "flow::compile::template

  × template error in `command`: `nope` is undefined
   ╭─[workflow.yaml:5:10]
 4 │       echo one
 5 │       {{ nope }}
   ·          ──┬─
   ·            ╰── undefined value
 6 │       two
   ╰────
  help: templates see `vars`, `index`, `item`, `item_json`, `chunk`, `attempt`, `task`,
        `resources` and `env`; check the spelling, or add the variable to [vars]
error: 1 problem in workflow.yaml
";
    assert_eq!(err, expected);
}
