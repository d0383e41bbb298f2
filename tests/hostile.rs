//! Hostile and broken input (issue 29): what the compiler accepts, a run
//! reads back; no input panics, hangs or reads without end.

use crate::support::Test;

/// The most lists a value under `vars` may be nested in: 64 levels in all,
/// counting the file's table and `vars`.
const DEEPEST_LIST: usize = 62;

/// The most files that may include each other in a chain.
const DEEPEST_INCLUDE: usize = 16;

/// The counts of a run's last line: `1 succeeded, 1 failed` of
/// `run ID: 1 succeeded, 1 failed in 0.0s`.
fn counts(stderr: &str) -> Option<&str> {
    let (_, rest) = stderr.lines().last()?.split_once(": ")?;
    Some(rest.split_once(" in ")?.0)
}

/// `vars` holding `x`, a `1` nested in `lists` lists.
fn nested_vars(lists: usize) -> String {
    format!("vars:\n  x: {}1{}\n", "[".repeat(lists), "]".repeat(lists))
}

/// A workflow whose file includes `f1.yaml`, which includes `f2.yaml`, and
/// so on to `f{files}.yaml`; each holds a task, and the last holds `last`.
fn include_chain(files: usize, last: &str) -> Test {
    let task = |name: &str| format!("tasks:\n  - name: {name}\n    command: \"true\"\n");
    let mut t = Test::new().file("workflow.yaml", &format!("include: [f1.yaml]\n{}", task("root")));
    for i in 1..=files {
        let include = if i < files { format!("include: [f{}.yaml]\n", i + 1) } else { last.to_owned() };
        t = t.file(&format!("f{i}.yaml"), &format!("{include}{}", task(&format!("t{i}"))));
    }
    t
}

/// Issue 29: the deepest workflow `flow check` accepts — includes nested
/// as deep as allowed, the last with a value nested as deep as allowed —
/// runs, and its run directory reads back: `flow status` and `flow log`
/// work and a second run reruns nothing. One level deeper either way is a
/// diagnostic at the line that goes too deep (graph.json used to be
/// written and then refused as "damaged").
#[test]
fn the_deepest_workflow_accepted_is_read_back() {
    let t = include_chain(DEEPEST_INCLUDE, &nested_vars(DEEPEST_LIST));
    t.success_with(&["check"]);
    t.success_with(&["run"]);
    t.success_with(&["status"]);
    t.success_with(&["log", "list"]);
    let again = t.run_with(&["run"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(counts(&again.stderr), Some("0 succeeded, 17 unchanged (skipped)"), "{}", again.stderr);

    let stderr = include_chain(DEEPEST_INCLUDE, &nested_vars(DEEPEST_LIST + 1)).args(["check"]).invalid();
    assert!(stderr.contains("× the document is nested too deeply\n   ╭─[f16.yaml:2:69]"), "{stderr}");
    let stderr = include_chain(DEEPEST_INCLUDE + 1, "").args(["check"]).invalid();
    assert!(
        stderr.contains("× cannot include `f17.yaml`: includes nest more than 16 files deep\n   ╭─[f16.yaml:1:11]"),
        "{stderr}"
    );
}

/// Issue 29: an input glob with braces nested 125 deep is an error at the
/// input; it used to panic in the glob compiler (exit 70).
#[test]
fn deeply_nested_braces_in_a_glob_are_an_error() {
    let glob = format!("{}b{}", "{a,".repeat(125), "}".repeat(125));
    let workflow = format!("[[tasks]]\nname = \"a\"\ninputs = [\"{glob}\"]\ncommand = \"true\"\n");
    let stderr = Test::new().workflow(&workflow).args(["check"]).invalid();
    assert!(stderr.contains("braces nest 125 deep; at most 16 are allowed\n   ╭─[workflow.toml:3:11]"), "{stderr}");
    assert!(stderr.ends_with("error: 1 problem in workflow.toml\n"), "{stderr}");
}

/// Issue 29: `read()` in a `when` reads only a regular file, as an
/// include would: a FIFO used to block the whole run (no task started and
/// Ctrl-C was ignored) and `flow plan --why` with it; `/dev/zero` was read
/// until memory ran out. Each is now the failure of the gated task alone.
#[test]
fn read_in_a_when_refuses_what_is_not_a_regular_file() {
    for (path, kind) in [("pipe", "a FIFO"), ("/dev/zero", "a device")] {
        let workflow = format!(
            "[[tasks]]\nname = \"gated\"\nwhen = \"{{{{ read('{path}') == 'yes' }}}}\"\ncommand = \"true\"\n\n\
             [[tasks]]\nname = \"other\"\ncommand = \"true\"\n"
        );
        let t = Test::new().workflow(&workflow).timeout(std::time::Duration::from_secs(60));
        crate::check::mkfifo(&t.path().join("pipe"));
        let out = t.run_with(&["run"]);
        assert_eq!(out.code, 1, "{}", out.stderr);
        let failed = out.stderr.lines().find(|l| l.starts_with("✗ gated failed"));
        let expected = format!(
            "✗ gated failed: cannot render `when` of gated: invalid operation: cannot read `{path}`: {kind}, not a \
             regular file (in {{{{ read('{path}') == 'yes' }}}}:1) (workflow.toml:2:8)"
        );
        assert_eq!(failed, Some(expected.as_str()), "{}", out.stderr);
        assert_eq!(counts(&out.stderr), Some("1 succeeded, 1 failed"), "{}", out.stderr);
        t.success_with(&["plan", "--why"]);
    }
}

/// Issue 29: a FIFO as the profiles file is named as such; it used to be
/// passed over, and flow said there was no profiles file.
#[test]
fn a_profiles_file_that_is_a_fifo_is_named() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"a\"\ncommand = \"true\"\n")
        .args(["check", "--profile", "x"])
        .timeout(std::time::Duration::from_secs(60))
        .stdout("")
        .stderr("error: cannot read the profiles file `flow.profiles.toml`: a FIFO, not a regular file\n");
    crate::check::mkfifo(&t.path().join("flow.profiles.toml"));
    t.invalid();
}

/// Issue 29: broken input costs time in proportion to its size. 200,000
/// `{` in a template took 13.5 s (a search for each one's end), and a
/// template over 65,535 bytes overflowed the template engine's column
/// count; such a template is now an error at its key.
#[test]
fn a_huge_template_is_an_error() {
    for unit in ["{", "{#"] {
        let command = unit.repeat(200_000 / unit.len());
        let workflow = format!("[[tasks]]\nname = \"a\"\ncommand = \"{command}\"\n");
        let stderr = Test::new().workflow(&workflow).args(["check"]).invalid();
        let message = stderr.lines().find(|l| l.contains('×'));
        assert_eq!(
            message,
            Some("  × syntax error in template `command`: a template of 200000 bytes; at most 65535 are allowed"),
            "{stderr}"
        );
    }
}

/// Issue 29: TOML's error recovery gave 37,499 diagnostics for a table of
/// 200,000 quotes, and drawing them took seconds; the first 50 are shown
/// and the rest counted.
#[test]
fn at_most_fifty_diagnostics_are_shown() {
    let text = format!("x = {{ {} }}\n", "\"".repeat(200_000));
    let stderr = Test::new().workflow(&text).args(["check"]).invalid();
    assert_eq!(stderr.matches('×').count(), 50);
    assert!(
        stderr.ends_with("… and 37449 more\nerror: 37499 problems in workflow.toml\n"),
        "{}",
        &stderr[stderr.len() - 200..]
    );
}
