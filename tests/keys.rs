//! What the key of an instance holds, and when a result is trusted (issue
//! 26): each file an instance reads that the workflow names — its `stdin`,
//! the scripts its setup lines source, the tree of a directory input — and
//! the paths its streams go to are in its key, and a result made while an
//! input changed, or an output edited behind flow's back with its time set
//! back, is not trusted.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::run::{assert_code, statuses};
use crate::support::Test;
use crate::support::process::{finish, read, spawn_flow, wait_for};

/// The instances the newest run executed (not skipped as unchanged).
pub fn executed(t: &Test) -> BTreeSet<String> {
    statuses(t, None).into_iter().filter(|(_, s)| s != "cached").map(|(label, _)| label).collect()
}

pub fn set(labels: &[&str]) -> BTreeSet<String> {
    labels.iter().map(|&l| l.to_owned()).collect()
}

/// Writes `text` into `path` of `t`, keeping the file's modification time.
pub fn rewrite_keeping_mtime(t: &Test, path: &str, text: &str) {
    let file = t.path().join(path);
    let mtime = fs_err::metadata(&file).unwrap().modified().unwrap();
    fs_err::write(&file, text).unwrap();
    fs_err::File::options().write(true).open(&file).unwrap().set_modified(mtime).unwrap();
}

const STDIN: &str =
    "[[tasks]]\nname = \"count\"\nstdin = \"x.txt\"\ncommand = \"wc -l > n.txt\"\noutputs = [\"n.txt\"]\n";

#[test]
fn the_contents_of_the_stdin_file_are_in_the_key() {
    let t = Test::new().workflow(STDIN).file("x.txt", "a\nb\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "n.txt"), "2\n");
    let t = t.file("x.txt", "a\nb\nc\n");
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(plan, "count: 1 of 1 would run, 0 unchanged\n  1 stdin file `x.txt` changed: count\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&["count"]));
    assert_eq!(read(&t, "n.txt"), "3\n");
}

#[test]
fn a_stdin_file_another_task_writes_is_waited_for() {
    let workflow = format!(
        "{STDIN}[[tasks]]\nname = \"make\"\ncommand = \"sleep 0.3; printf 'a\\\\nb\\\\n' > x.txt\"\noutputs = [\"x.txt\"]\n"
    );
    let t = Test::new().workflow(&workflow);
    let check = t.success_with(&["check"]);
    assert_eq!(check, "ok: workflow (workflow.toml) — 2 tasks, 2 instances, 1 edge\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "n.txt"), "2\n");
}

#[test]
fn a_stdin_file_nothing_writes_must_exist() {
    Test::new()
        .workflow(STDIN)
        .args(["check"])
        .stdout("")
        .stderr(
            "flow::compile::missing_input

  × input `x.txt` does not exist, and no task produces it
   ╭─[workflow.toml:3:9]
 2 │ name = \"count\"
 3 │ stdin = \"x.txt\"
   ·         ───┬───
   ·            ╰── needed here
 4 │ command = \"wc -l > n.txt\"
   ╰────
  help: create the file, fix the path (relative to the workflow file), or add a task that lists it
        in `outputs`
error: 1 problem in workflow.toml
",
        )
        .invalid();
}

const SETUP: &str = "[[tasks]]\nname = \"env\"\nsetup = [\". ./env.sh\", \"Y=$(sh show)\"]\n\
                     command = \"echo $X $Y > out.txt\"\noutputs = [\"out.txt\"]\n";

#[test]
fn files_sourced_by_setup_lines_are_in_the_key() {
    let t = Test::new().workflow(SETUP).file("env.sh", "X=1\n").file("show", "echo a\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "out.txt"), "1 a\n");
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(plan, "env: 0 of 1 would run, 1 unchanged\n  scripts counted as inputs: env.sh, show\n");
    let t = t.file("show", "echo b\n");
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(
        plan,
        "env: 1 of 1 would run, 0 unchanged\n  1 input `show` changed: env\n  scripts counted as inputs: env.sh, show\n"
    );
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "out.txt"), "1 b\n");
    let t = t.file("env.sh", "X=2\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&["env"]));
    assert_eq!(read(&t, "out.txt"), "2 b\n");
}

#[test]
fn a_script_another_task_writes_is_waited_for_and_tracked() {
    let workflow = "[[tasks]]\nname = \"use\"\ncommand = \"sh gen.sh\"\noutputs = [\"out.txt\"]\n\
                    [[tasks]]\nname = \"gen\"\ncommand = \"sleep 0.3; echo 'echo {{ vars.v }} > out.txt' > gen.sh\"\n\
                    outputs = [\"gen.sh\"]\n[vars]\nv = \"new\"\n";
    let t = Test::new().workflow(workflow).file("gen.sh", "echo old > out.txt\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "out.txt"), "new\n");
    // The script changes: the task that runs it runs again.
    assert_code(&t.run_with(&["run", "-v", "v=newer"]), 0);
    assert_eq!(executed(&t), set(&["gen", "use"]));
    assert_eq!(read(&t, "out.txt"), "newer\n");
}

const TREE: &str = "[[tasks]]\nname = \"all\"\ninputs = [\"data\"]\ncommand = \"cat $(find data -type f | sort) > all.txt\"\noutputs = [\"all.txt\"]\n";

#[test]
fn a_directory_input_is_hashed_as_its_tree() {
    let t = Test::new().workflow(TREE).file("data/a.txt", "a\n").file("data/sub/b.txt", "b\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "all.txt"), "a\nb\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&[]));
    let t = t.file("data/sub/b.txt", "B\n");
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(plan, "all: 1 of 1 would run, 0 unchanged\n  1 input `data/sub/b.txt` changed: all\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "all.txt"), "a\nB\n");
    // A file added to the tree.
    let t = t.file("data/sub/c.txt", "c\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&["all"]));
    assert_eq!(read(&t, "all.txt"), "a\nB\nc\n");
    // A file removed from the tree: the directory names the change.
    std::thread::sleep(Duration::from_millis(20));
    fs_err::remove_file(t.path().join("data/a.txt")).unwrap();
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(plan, "all: 1 of 1 would run, 0 unchanged\n  1 input `data` changed: all\n");
}

#[test]
fn a_directory_input_waits_for_the_tasks_that_write_into_it() {
    let workflow = format!(
        "{TREE}[[tasks]]\nname = \"fill\"\ncommand = \"sleep 0.3; echo z > data/z.txt\"\noutputs = [\"data/z.txt\"]\n"
    );
    let t = Test::new().workflow(&workflow).file("data/a.txt", "a\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "all.txt"), "a\nz\n");
}

#[test]
fn the_paths_streams_go_to_are_in_the_key() {
    let workflow = |file: &str| format!("[[tasks]]\nname = \"say\"\ncommand = \"echo hi\"\nstdout = \"{file}\"\n");
    let t = Test::new().workflow(&workflow("one.txt"));
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "one.txt"), "hi\n");
    let t = t.workflow(&workflow("two.txt"));
    let plan = t.success_with(&["plan", "--why"]);
    // The file the stream went to is an output: the old one is no one's now.
    assert_eq!(
        plan,
        "say: 1 of 1 would run, 0 unchanged\n  1 stdout path changed: say\n  \
         1 output no instance writes any more would be moved aside: one.txt\n"
    );
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "two.txt"), "hi\n");
    assert!(!t.path().join("one.txt").exists(), "moved aside");
}

#[test]
fn an_output_edited_with_its_time_set_back_is_not_trusted() {
    let workflow = "[[tasks]]\nname = \"hits\"\ncommand = \"echo 12 > hits.txt\"\noutputs = [\"hits.txt\"]\n";
    let t = Test::new().workflow(workflow);
    assert_code(&t.run_with(&["run"]), 0);
    rewrite_keeping_mtime(&t, "hits.txt", "99\n");
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(plan, "hits: 1 of 1 would run, 0 unchanged\n  1 output `hits.txt` changed since it was written: hits\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "hits.txt"), "12\n");
}

/// A task that reads `x.txt` between two handshakes with the test.
const EDITED_WHILE_RUNNING: &str = r#"
[[tasks]]
name = "copy"
inputs = ["x.txt"]
command = """
touch started
while [ ! -e go ]; do sleep 0.02; done
cat x.txt > out.txt
touch read
while [ ! -e done ]; do sleep 0.02; done
"""
outputs = ["out.txt"]
"#;

#[test]
fn a_result_whose_input_changed_while_it_ran_is_not_trusted() {
    let t = Test::new().workflow(EDITED_WHILE_RUNNING).file("x.txt", "aaa\n");
    let mut run = spawn_flow(t.path(), &["run"], "run.stderr");
    let exists = |f: &str| t.path().join(f).exists();
    assert!(wait_for(Duration::from_secs(30), || exists("started")), "{}", read(&t, "run.stderr"));
    // Edited while the task runs, then put back as it was, time and all.
    rewrite_keeping_mtime(&t, "x.txt", "bbb\n");
    fs_err::write(t.path().join("go"), "").unwrap();
    assert!(wait_for(Duration::from_secs(30), || exists("read")), "{}", read(&t, "run.stderr"));
    rewrite_keeping_mtime(&t, "x.txt", "aaa\n");
    fs_err::write(t.path().join("done"), "").unwrap();
    assert_eq!(finish(&t, &mut run, Duration::from_secs(60)), 0);
    let stderr = read(&t, "run.stderr");
    let warning = "warning: `x.txt` changed while copy ran: its result is not trusted, and it runs again next time";
    assert!(stderr.contains(warning), "{stderr}");
    assert_eq!(read(&t, "out.txt"), "bbb\n");
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(
        plan,
        "copy: 1 of 1 would run, 0 unchanged\n  1 `x.txt` changed while it last ran: its result is not trusted: copy\n"
    );
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&["copy"]));
    assert_eq!(read(&t, "out.txt"), "aaa\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&[]));
}

#[test]
fn the_env_and_output_paths_are_in_the_key() {
    let workflow = |value: &str, out: &str| {
        format!(
            "[[tasks]]\nname = \"w\"\nenv = {{ V = \"{value}\" }}\ncommand = \"echo $V > a.txt; cp a.txt b.txt\"\n\
             outputs = [\"{out}\"]\n"
        )
    };
    let t = Test::new().workflow(&workflow("1", "a.txt"));
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.workflow(&workflow("2", "a.txt"));
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(plan, "w: 1 of 1 would run, 0 unchanged\n  1 env changed: w\n");
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.workflow(&workflow("2", "b.txt"));
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(
        plan,
        "w: 1 of 1 would run, 0 unchanged\n  1 outputs changed: w\n  \
         1 output no instance writes any more would be moved aside: a.txt\n"
    );
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(read(&t, "b.txt"), "2\n");
}

/// Its own outputs are not part of the tree a task reads: writing into
/// the directory it reads neither reruns it nor makes its result untrusted.
#[test]
fn a_task_that_writes_into_the_directory_it_reads_is_unchanged_next_time() {
    let workflow = "[[tasks]]\nname = \"sum\"\ninputs = [\"data\"]\ncommand = \"cat data/a.txt > data/sum.txt\"\n\
                    outputs = [\"data/sum.txt\"]\n";
    let t = Test::new().workflow(workflow).file("data/a.txt", "a\n");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&[]));
}
