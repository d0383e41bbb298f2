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
