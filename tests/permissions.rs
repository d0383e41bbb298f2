//! The modes of the state directory and of what a run writes in it
//! (issue 18): the owner's only, or readable (never writable) by the
//! group with `--share-with-group`, whatever the umask.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::support::Test;
use crate::support::process::flow_bin;

/// Runs `flow ARGS` in `dir` under `umask`; asserts it succeeds.
fn run_under_umask(dir: &Path, umask: &str, args: &str) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask}; exec \"$0\" {args}"))
        .arg(flow_bin())
        .current_dir(dir)
        .output()
        .expect("start sh");
    assert!(out.status.success(), "flow {args} under umask {umask}: {}", String::from_utf8_lossy(&out.stderr));
}

/// `.flow`, `.flow/runs` and everything under the run directories, each
/// with its mode, e.g. `(".flow/runs/<id>/journal", 0o600)`, with `<id>`
/// standing for the run id.
fn modes(dir: &Path) -> Vec<(String, u32)> {
    let mut found = Vec::new();
    let mut todo = vec![dir.join(".flow/runs")];
    let mode = |path: &Path| fs_err::metadata(path).unwrap().permissions().mode() & 0o777;
    found.push((".flow".to_owned(), mode(&dir.join(".flow"))));
    while let Some(path) = todo.pop() {
        if path.is_dir() {
            todo.extend(fs_err::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
        let relative = path.strip_prefix(dir).unwrap().to_str().unwrap();
        let parts: Vec<&str> = relative.split('/').collect();
        let shown = match parts.get(2) {
            Some(id) => relative.replacen(id, "<id>", 1),
            None => relative.to_owned(),
        };
        found.push((shown, mode(&path)));
    }
    found.sort();
    found
}

/// What a run of [`WORKFLOW`] leaves, with `dir` and `file` as the modes.
fn expected(dir: u32, file: u32) -> Vec<(String, u32)> {
    let mut expected: Vec<(String, u32)> = [".flow", ".flow/runs", ".flow/runs/<id>"]
        .into_iter()
        .map(|path| (path.to_owned(), dir))
        .chain(
            ["graph.json", "journal", "lock", "meta.json", "output.log", "summary.json", "workers.json"]
                .into_iter()
                .map(|name| (format!(".flow/runs/<id>/{name}"), file)),
        )
        .collect();
    expected.sort();
    expected
}

const WORKFLOW: &str = "[[tasks]]\nname = \"a\"\ncommand = \"echo hi\"\n";

/// Issue 18: 0700 and 0600 by default, under umask 000 too (`.flow/runs`
/// was 0755, and 0777 under umask 000).
#[test]
fn run_files_are_private_whatever_the_umask() {
    for umask in ["022", "000"] {
        let t = Test::new().workflow(WORKFLOW);
        run_under_umask(t.path(), umask, "run");
        assert_eq!(modes(t.path()), expected(0o700, 0o600), "umask {umask}");
    }
}

/// Issue 18: `--share-with-group` gives the group read access only:
/// 0750 and 0640, under umask 000 (which made them 0777 and 0666) and
/// under umask 077 alike.
#[test]
fn share_with_group_lets_the_group_read_not_write() {
    for umask in ["000", "077"] {
        let t = Test::new().workflow(WORKFLOW);
        run_under_umask(t.path(), umask, "run --share-with-group");
        assert_eq!(modes(t.path()), expected(0o750, 0o640), "umask {umask}");
    }
}

/// A private run after a shared one closes `.flow` and `.flow/runs` again;
/// the earlier run keeps its modes.
#[test]
fn a_private_run_closes_the_state_directory_again() {
    let t = Test::new().workflow(WORKFLOW);
    run_under_umask(t.path(), "000", "run --share-with-group");
    run_under_umask(t.path(), "000", "run --force");
    let found = modes(t.path());
    let state: Vec<&(String, u32)> = found.iter().filter(|(path, _)| path == ".flow" || path == ".flow/runs").collect();
    assert_eq!(state, [&(".flow".to_owned(), 0o700), &(".flow/runs".to_owned(), 0o700)]);
    let runs: Vec<u32> = found.iter().filter(|(path, _)| path == ".flow/runs/<id>").map(|(_, mode)| *mode).collect();
    assert_eq!(runs, [0o700, 0o750]);
}

/// Every entry under `dir` (relative, run ids as `<id>`) with its mode.
fn all_modes(dir: &Path) -> Vec<(String, u32)> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(path) = todo.pop() {
        let meta = fs_err::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            todo.extend(fs_err::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
        let relative = path.strip_prefix(dir.parent().unwrap()).unwrap().to_str().unwrap();
        let parts: Vec<&str> = relative.split('/').collect();
        let shown = match (parts.get(1), parts.get(2)) {
            (Some(&"runs"), Some(id)) => relative.replacen(id, "<id>", 1),
            _ => relative.to_owned(),
        };
        found.push((shown, meta.permissions().mode() & 0o777));
    }
    found.sort();
    found
}

/// Issue 29: everything under `.flow` after a run with a `setup` and
/// chunk files, and the report page, under umask 000: the setup directory
/// and `.flow/chunks` were 0777 and the report 0666. Chunk files are 0640
/// in 0750 directories (the group can enter only a `.flow` shared with it).
#[test]
fn everything_a_run_writes_is_private_under_umask_000() {
    let t = Test::new().file("lines.txt", "a\nb\nc\n").workflow(
        "[[tasks]]\nname = \"a\"\nsetup = [\"true\"]\neach_chunk = { file = \"lines.txt\", lines = 2 }\ncommand = \"cat\"\n",
    );
    run_under_umask(t.path(), "000", "run");
    run_under_umask(t.path(), "000", "report --output report.html");
    let mut expected: Vec<(String, u32)> = [
        (".flow", 0o700),
        (".flow/chunks", 0o750),
        (".flow/chunks/a", 0o750),
        (".flow/chunks/a/0.txt", 0o640),
        (".flow/chunks/a/1.txt", 0o640),
        (".flow/runs", 0o700),
        (".flow/runs/<id>", 0o700),
        (".flow/runs/<id>/setup", 0o700),
    ]
    .into_iter()
    .map(|(path, mode)| (path.to_owned(), mode))
    .chain(
        ["graph.json", "journal", "lock", "meta.json", "output.log", "summary.json", "workers.json"]
            .into_iter()
            .map(|name| (format!(".flow/runs/<id>/{name}"), 0o600)),
    )
    .collect();
    expected.sort();
    assert_eq!(all_modes(&t.path().join(".flow")), expected);
    let report = fs_err::metadata(t.path().join("report.html")).unwrap().permissions().mode() & 0o777;
    assert_eq!(report, 0o600);
}
