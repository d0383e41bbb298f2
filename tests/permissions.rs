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
