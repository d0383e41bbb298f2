//! The environment a task's process sees: flow's own, with the task's
//! variables and flow's added, whichever way the process is started
//! (issue 28: the local worker prepares flow's environment once per run).

use crate::support::Test;

/// The lines of `file` in the test directory.
fn lines(t: &Test, file: &str) -> Vec<String> {
    let text = fs_err::read_to_string(t.path().join(file)).expect("the task's output");
    text.lines().map(str::to_owned).collect()
}

#[test]
fn a_task_sees_flows_environment_with_its_own_variables_in_place() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "show"
env = { SHADOWED = "inner", ADDED = "a b" }
argv = ["env"]
stdout = "env.txt"
"#,
        )
        .env("SHADOWED", "outer")
        .env("OUTER_ONLY", "kept")
        .args(["run"]);
    t.success();
    let env = lines(&t, "env.txt");
    let count = |line: &str| env.iter().filter(|l| *l == line).count();
    assert_eq!(count("SHADOWED=inner"), 1, "{env:?}");
    assert_eq!(env.iter().filter(|l| l.starts_with("SHADOWED=")).count(), 1, "{env:?}");
    assert_eq!(count("ADDED=a b"), 1, "{env:?}");
    assert_eq!(count("OUTER_ONLY=kept"), 1, "{env:?}");
    assert_eq!(count("FLOW_TASK=show"), 1, "{env:?}");
    assert!(env.iter().any(|l| l.starts_with("PATH=")), "{env:?}");
}

#[test]
fn a_task_that_sets_path_finds_its_program_on_that_path() {
    let t = Test::new();
    let bin = t.path().join("bin");
    let workflow = format!(
        "[[tasks]]\nname = \"tool\"\nenv = {{ PATH = \"{}:/usr/bin:/bin\" }}\nargv = [\"only-here\"]\n",
        bin.display()
    );
    let t = t.workflow(&workflow).file("bin/only-here", "#!/bin/sh\necho found > found.txt\n").args(["run"]);
    let script = bin.join("only-here");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    t.success();
    assert_eq!(lines(&t, "found.txt"), ["found"]);
}
