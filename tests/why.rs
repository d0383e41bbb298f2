//! `flow plan --why` names the true cause (issue 26): the file whose
//! contents changed since the last success read it, not one only touched
//! or modified last, whatever the files' times say.

use std::time::{Duration, SystemTime};

use crate::keys::{executed, rewrite_keeping_mtime, set};
use crate::run::assert_code;
use crate::support::Test;
use crate::support::process::read;

/// Sets the modification time of `path` in `t` to a minute from now: a
/// `touch` that no clock tick can hide.
fn touch(t: &Test, path: &str) {
    let later = SystemTime::now() + Duration::from_secs(60);
    fs_err::File::options().write(true).open(t.path().join(path)).unwrap().set_modified(later).unwrap();
}

const TWO_INPUTS: &str = "[[tasks]]\nname = \"both\"\ninputs = [\"x.txt\", \"y.txt\"]\n\
                          command = \"cat x.txt y.txt > out.txt\"\noutputs = [\"out.txt\"]\n";

#[test]
fn the_edited_file_is_named_not_the_touched_one() {
    let t = Test::new().workflow(TWO_INPUTS).file("x.txt", "x\n").file("y.txt", "y\n");
    assert_code(&t.run_with(&["run"]), 0);
    touch(&t, "x.txt");
    rewrite_keeping_mtime(&t, "y.txt", "Y\n");
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(plan, "both: 1 of 1 would run, 0 unchanged\n  1 input `y.txt` changed: both\n");
    let json = t.success_with(&["plan", "--why", "--json"]);
    let line: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(line["reasons"][0]["reason"], "input_changed");
    assert_eq!(line["reasons"][0]["detail"], "y.txt");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&["both"]));
    assert_eq!(read(&t, "out.txt"), "x\nY\n");
}

#[test]
fn a_stdin_file_edited_with_its_time_set_back_is_named() {
    let workflow = "[[tasks]]\nname = \"count\"\nstdin = \"in.txt\"\ninputs = [\"x.txt\"]\n\
                    command = \"wc -l > n.txt\"\noutputs = [\"n.txt\"]\n";
    let t = Test::new().workflow(workflow).file("in.txt", "a\nb\n").file("x.txt", "x\n");
    assert_code(&t.run_with(&["run"]), 0);
    touch(&t, "x.txt");
    rewrite_keeping_mtime(&t, "in.txt", "a\nc\n");
    let plan = t.success_with(&["plan", "--why", "--instances"]);
    assert_eq!(plan, "count: 1 of 1 would run, 0 unchanged\n  count: stdin file `in.txt` changed\n");
}

#[test]
fn a_file_setup_sources_edited_with_its_time_set_back_is_named() {
    let workflow = "[[tasks]]\nname = \"env\"\nsetup = [\". ./env.sh\"]\ncommand = \"sh show > out.txt\"\n\
                    outputs = [\"out.txt\"]\n";
    let t = Test::new().workflow(workflow).file("env.sh", "X=1\n").file("show", "echo $X\n");
    assert_code(&t.run_with(&["run"]), 0);
    touch(&t, "show");
    rewrite_keeping_mtime(&t, "env.sh", "X=2\n");
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(
        plan,
        "env: 1 of 1 would run, 0 unchanged\n  1 input `env.sh` changed: env\n  scripts counted as inputs: show, env.sh\n"
    );
}

#[test]
fn files_only_touched_change_nothing() {
    let t = Test::new().workflow(TWO_INPUTS).file("x.txt", "x\n").file("y.txt", "y\n");
    assert_code(&t.run_with(&["run"]), 0);
    touch(&t, "x.txt");
    touch(&t, "y.txt");
    assert_eq!(t.success_with(&["plan", "--why"]), "both: 0 of 1 would run, 1 unchanged\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&[]));
    // What it read is kept from the run that did the work: an edit after
    // a rerun that skipped it is named as well, however old its time.
    touch(&t, "y.txt");
    rewrite_keeping_mtime(&t, "x.txt", "X\n");
    let then = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    fs_err::File::options().write(true).open(t.path().join("x.txt")).unwrap().set_modified(then).unwrap();
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(plan, "both: 1 of 1 would run, 0 unchanged\n  1 input `x.txt` changed: both\n");
}

#[test]
fn a_file_a_glob_matches_that_came_names_the_glob_not_a_touched_file() {
    let workflow = "[[tasks]]\nname = \"all\"\ninputs = [\"in/*.txt\", \"x.txt\"]\n\
                    command = \"cat in/*.txt x.txt > all.txt\"\noutputs = [\"all.txt\"]\n";
    let t = Test::new().workflow(workflow).file("in/a.txt", "a\n").file("x.txt", "x\n");
    assert_code(&t.run_with(&["run"]), 0);
    touch(&t, "x.txt");
    let t = t.file("in/b.txt", "b\n");
    let plan = t.success_with(&["plan", "--why"]);
    assert_eq!(plan, "all: 1 of 1 would run, 0 unchanged\n  1 the files input `in/*.txt` matches changed: all\n");
}

/// Found by the model check (seed 20261202, 2,000 sequences): a line removed above an item
/// moves its instance to a new label, and the rerun skips it; the next
/// plan compared with no record of what it read and named the `stdin`
/// file, touched, rather than the script that changed.
#[test]
fn an_instance_whose_line_moved_still_names_the_file_that_changed() {
    let workflow = "[[tasks]]\nname = \"a\"\neach_line = \"list.txt\"\nstdin = \"in.txt\"\n\
                    command = \"mkdir -p out && {{ '{' }} cat; sh s.sh; {{ '}' }} > out/{{ item }}.txt\"\n\
                    outputs = [\"out/{{ item }}.txt\"]\n";
    let t = Test::new().workflow(workflow).file("list.txt", "x\ny\n").file("in.txt", "i\n").file("s.sh", "echo 1\n");
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.file("list.txt", "y\n");
    assert_code(&t.run_with(&["run"]), 0);
    touch(&t, "in.txt");
    let t = t.file("s.sh", "echo 2\n");
    let plan = t.success_with(&["plan", "--why", "--instances"]);
    assert_eq!(
        plan,
        "a: 1 of 1 would run, 0 unchanged\n  a[0]: input `s.sh` changed\n  scripts counted as inputs: s.sh\n"
    );
}
