//! Each kind of failure has its own exit code (issue 13), as the CLI
//! reference lists them under "Exit codes". 130 (interrupted) is checked
//! in `interrupt.rs`.

use crate::run::assert_code;
use crate::support::Test;

const OK: &str = "[[tasks]]\nname = \"a\"\ncommand = \"true\"\n";

#[test]
fn a_failed_task_exits_1() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ncommand = \"exit 3\"\n");
    assert_code(&t.run_with(&["run"]), 1);
}

#[test]
fn usage_mistakes_and_invalid_workflows_exit_2() {
    let t = Test::new().workflow(OK);
    assert_code(&t.run_with(&["run", "--no-such-option"]), 2);
    assert_code(&t.run_with(&["run", "-v", "no_value"]), 2);
    assert_code(&t.run_with(&["run", "--only", "nothing"]), 2);
    assert_code(&t.run_with(&["run", "missing.toml"]), 2);
    let invalid = Test::new().workflow("[[tasks]]\nname = \"a\"\n");
    assert_code(&invalid.run_with(&["check"]), 2);
    assert_code(&invalid.run_with(&["run"]), 2);
}

/// Issue 13: a run directory that cannot be created was reported as
/// invalid input (2).
#[test]
fn a_run_directory_that_cannot_be_created_exits_74() {
    let t = Test::new().workflow(OK).file(".flow", "a file where the state directory goes");
    let out = t.run_with(&["run"]);
    assert_code(&out, 74);
    assert!(out.stderr.starts_with("error: ") && out.stderr.contains(".flow"), "{}", out.stderr);
}

/// Issue 13: a panic in the run's driver thread was reported as invalid
/// input (2).
#[cfg(debug_assertions)]
#[test]
fn a_crashed_run_exits_70() {
    let t = Test::new().workflow(OK).env("FLOW_DEBUG_PANIC", "driver");
    let out = t.run_with(&["run"]);
    assert_code(&out, 70);
    assert!(
        out.stderr.contains("error: the run stopped unexpectedly: the driver thread panicked; this is a bug in flow"),
        "{}",
        out.stderr
    );
}

/// A damaged run file is one cause with one exit code, 74, whichever
/// command reads it: `flow explain` and `flow log list` used to exit 2 on
/// a damaged `graph.json`, `flow report` 74, and `flow status` read on.
/// `flow runs` lists the run as damaged.
#[test]
fn a_damaged_run_file_exits_74_from_every_reader() {
    let damaged = [
        ("graph.json", "is damaged (expected value at line 1 column 1)"),
        ("meta.json", "is damaged (expected value at line 1 column 1)"),
        ("journal", "is not a flow journal file"),
    ];
    for (file, what) in damaged {
        let t = Test::new().workflow(OK);
        t.success_with(&["run"]);
        let id = crate::run::run_ids(t.path()).pop().expect("a run");
        let dir = t.path().canonicalize().expect("canonical").join(".flow/runs").join(&id);
        fs_err::write(dir.join(file), "garbage, not a run file").expect("damage the file");
        let error = format!("error: `{}` {what}\n", dir.join(file).display());
        for args in [&["explain", "a"][..], &["log", "list"], &["report"], &["status"]] {
            let out = t.run_with(args);
            assert_code(&out, 74);
            assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", error.as_str()), "flow {args:?}, {file}");
        }
        let runs = t.run_with(&["runs"]);
        assert_code(&runs, 0);
        let row = runs.stdout.lines().find(|l| l.starts_with(&id)).expect("the run is listed");
        assert_eq!(row.split_whitespace().nth(1), Some("damaged"), "{file}: {}", runs.stdout);
        assert_eq!(runs.stderr, format!("warning: run {id}: {}", &error["error: ".len()..]), "{file}");
    }
}

/// A full disk under stdout is an I/O failure (74) with its reason, not a
/// panic reported as a bug (70).
#[test]
fn output_to_a_full_disk_exits_74() {
    let t = Test::new().workflow(OK);
    for args in [&["schema", "workflow"][..], &["plan"], &["graph"], &["completions", "bash"]] {
        let out = std::process::Command::new(crate::support::process::flow_bin())
            .args(args)
            .current_dir(t.path())
            .stdout(fs_err::File::create("/dev/full").expect("/dev/full").into_parts().0)
            .output()
            .expect("run flow");
        assert_eq!(out.status.code(), Some(74), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr, "error: cannot write the output: No space left on device (os error 28)\n", "{args:?}");
    }
}

/// A run's problems printed to a stderr whose reader has gone
/// (`flow run 2>&1 | head -1`) keep their exit status 2: a run ignores
/// SIGPIPE, and printing used to panic (101).
#[test]
fn a_refused_run_whose_stderr_closes_early_exits_2() {
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\nmemory = \"1 TiB\"\ncommand = \"true\"\n");
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let status = std::process::Command::new(crate::support::process::flow_bin())
        .args(["run", "--memory", "1 GiB"])
        .current_dir(t.path())
        .stderr(writer)
        .status()
        .expect("run flow");
    assert_eq!(status.code(), Some(2));
}
