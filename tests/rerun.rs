//! Reruns you can trust (issue 18): each case here is a way a rerun was
//! silently wrong or did more than what changed, kept as a regression.

use std::collections::BTreeSet;

use crate::run::{assert_code, statuses};
use crate::support::Test;

/// The instances the newest run executed (not skipped as unchanged).
fn executed(t: &Test) -> BTreeSet<String> {
    statuses(t, None).into_iter().filter(|(_, s)| s != "cached").map(|(label, _)| label).collect()
}

fn set(labels: &[&str]) -> BTreeSet<String> {
    labels.iter().map(|&l| l.to_owned()).collect()
}

/// A task with a GPU variant first and a CPU one second, whose command
/// names its resources: on a machine without GPUs the second runs.
const VARIANTS: &str = r#"
[[tasks]]
name = "score"
range = "0-1"
env = { OMP_NUM_THREADS = "{{ resources.cpus }}" }
command = "echo $OMP_NUM_THREADS > s{{ index }}.txt"
outputs = ["s{{ index }}.txt"]
[[tasks.variants]]
gpus = 1
cpus = 1
[[tasks.variants]]
cpus = 2
"#;

#[test]
fn an_instance_that_ran_in_its_second_variant_is_unchanged_next_time() {
    let t = Test::new().workflow(VARIANTS);
    assert_code(&t.run_with(&["run", "--gpus", "0", "--cpus", "2"]), 0);
    assert_eq!(crate::support::process::read(&t, "s0.txt"), "2\n");
    let plan = t.success_with(&["plan", "--why"]);
    insta::assert_snapshot!(t.normalize(&plan), @"score: 0 of 2 would run, 2 unchanged");
    assert_code(&t.run_with(&["run", "--gpus", "0", "--cpus", "2"]), 0);
    assert_eq!(executed(&t), set(&[]));
}

#[test]
fn an_output_edited_by_hand_is_not_trusted() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"hits\"\ncommand = \"printf '1\\\\n2\\\\n' > hits.txt\"\noutputs = [\"hits.txt\"]\n",
    );
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.file("hits.txt", "99\n");
    let plan = t.success_with(&["plan", "--why"]);
    insta::assert_snapshot!(t.normalize(&plan), @r"
        hits: 1 of 1 would run, 0 unchanged
          1 output `hits.txt` changed since it was written: hits
    ");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&["hits"]));
    assert_eq!(crate::support::process::read(&t, "hits.txt"), "1\n2\n");
    // Touched without a change of bytes: still trusted.
    let file = t.path().join("hits.txt");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3);
    fs_err::File::options().write(true).open(&file).expect("open").set_modified(later).expect("touch");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&[]));
}

/// Outputs named by the item: the cache is looked up by what an instance
/// is, so lines that move keep their results (a line inserted at the top:
/// `model_check::regressions`).
const BY_ITEM: &str = r#"
[[tasks]]
name = "dock"
each_line = "ligands.txt"
command = "mkdir -p docked && echo {{ item }} > docked/{{ item }}.txt"
outputs = ["docked/{{ item }}.txt"]
"#;

/// A hit list whose length is a variable, refined per hit, and a range
/// as long: both combined through globs.
const SHRINKING: &str = r#"
[vars]
n = 4

[[tasks]]
name = "select"
command = "seq 1 {{ vars.n }} > hits.txt"
outputs = ["hits.txt"]

[[tasks]]
name = "refine"
each_line = "hits.txt"
command = "mkdir -p refined && echo r{{ item }} > refined/{{ item }}.txt"
outputs = ["refined/{{ item }}.txt"]

[[tasks]]
name = "gen"
range = "1-{{ vars.n }}"
command = "mkdir -p g && echo {{ index }} > g/{{ index }}.txt"
outputs = ["g/{{ index }}.txt"]

[[tasks]]
name = "combine"
command = "cat refined/*.txt g/*.txt > all.txt"
inputs = ["refined/*.txt", "g/*.txt"]
outputs = ["all.txt"]
"#;

#[test]
fn outputs_of_vanished_instances_are_moved_before_anything_reads_them() {
    let t = Test::new().workflow(SHRINKING);
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(crate::support::process::read(&t, "all.txt"), "r1\nr2\nr3\nr4\n1\n2\n3\n4\n");
    let plan = t.success_with(&["plan", "--why", "-v", "n=2"]);
    insta::assert_snapshot!(t.normalize(&plan), @r"
        select: 1 of 1 would run, 0 unchanged
          1 command changed: select
        refine: instances known after `select` runs
        gen: 0 of 2 would run, 2 unchanged
          2 outputs no instance writes any more would be moved aside: g/3.txt, g/4.txt
        combine: 1 of 1 would run, 0 unchanged
          1 after `refine`, which runs first: combine
    ");
    let out = t.run_with(&["run", "-v", "n=2"]);
    assert_code(&out, 0);
    let run = crate::run::run_ids(t.path()).pop().expect("a run");
    insta::assert_snapshot!(t.normalize(&out.stderr.replace(&run, "[THIS RUN]")), @r"
        run [THIS RUN]: 4 instances of 4 tasks, + the instances of `refine` (known at run time)
        ~ gen: moved 2 outputs no instance writes any more (left by gen[3], gen[4]) to .flow/runs/[THIS RUN]/stale/: g/3.txt, g/4.txt
        ~ refine: moved 2 outputs no instance writes any more (left by refine[2], refine[3]) to .flow/runs/[THIS RUN]/stale/: refined/3.txt, refined/4.txt
        + refine: 2 instances from hits.txt
        results: all.txt
        log:  flow log list
        report:  flow report
        run [THIS RUN]: 2 succeeded, 4 unchanged (skipped) in [TIME]
    ");
    assert_eq!(crate::support::process::read(&t, "all.txt"), "r1\nr2\n1\n2\n");
    assert_eq!(executed(&t), set(&["combine", "select"]));
    let kept = t.path().join(".flow/runs").join(&run).join("stale/refined/4.txt");
    assert_eq!(fs_err::read_to_string(kept).expect("moved, not deleted"), "r4\n");
    // Nothing changed since: nothing runs, nothing moves.
    let again = t.run_with(&["run", "-v", "n=2"]);
    insta::assert_snapshot!(t.normalize(&again.stderr), @r"
        run [RUN]: 4 instances of 4 tasks, + the instances of `refine` (known at run time)
        + refine: 2 instances from hits.txt
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 6 unchanged (skipped) in [TIME]
    ");
    assert_eq!(executed(&t), set(&[]));
}

/// Issue 26 (found by the model check): `--force` reruns everything, yet
/// what vanished instances left is still moved aside before a glob reads it.
#[test]
fn force_still_moves_outputs_of_vanished_instances() {
    let t = Test::new().workflow(SHRINKING);
    assert_code(&t.run_with(&["run"]), 0);
    assert_code(&t.run_with(&["run", "-v", "n=2", "--force"]), 0);
    assert_eq!(crate::support::process::read(&t, "all.txt"), "r1\nr2\n1\n2\n");
    assert_eq!(executed(&t), set(&["combine", "gen[1]", "gen[2]", "refine[0]", "refine[1]", "select"]));
}

#[test]
fn keep_stale_outputs_leaves_them_where_they_are() {
    let t = Test::new().workflow(SHRINKING);
    assert_code(&t.run_with(&["run"]), 0);
    assert_code(&t.run_with(&["run", "-v", "n=2", "--keep-stale-outputs"]), 0);
    assert_eq!(crate::support::process::read(&t, "all.txt"), "r1\nr2\nr3\nr4\n1\n2\n3\n4\n");
}

#[test]
fn a_line_removed_from_the_middle_takes_its_output_along() {
    let t = Test::new().workflow(BY_ITEM).file("ligands.txt", "a\nb\nc\n");
    assert_code(&t.run_with(&["run"]), 0);
    // `c` moves to index 1: no index vanished, but `docked/b.txt` is no one's.
    let t = t.file("ligands.txt", "a\nc\n");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&[]));
    let left = crate::support::process::entries(&t.path().join("docked"));
    assert_eq!(left, set(&["a.txt", "c.txt"]));
}

#[test]
fn going_back_to_an_earlier_setting_finds_the_work_done_then() {
    let t = Test::new().workflow(
        "[vars]\ntag = \"t0\"\n\n[[tasks]]\nname = \"gen\"\ncommand = \"echo {{ vars.tag }} > g.txt\"\noutputs = [\"g.txt\"]\n\n\
         [[tasks]]\nname = \"first\"\ncommand = \"head -c 1 g.txt > f.txt\"\ninputs = [\"g.txt\"]\noutputs = [\"f.txt\"]\n\n\
         [[tasks]]\nname = \"whole\"\ncommand = \"cat g.txt > w.txt\"\ninputs = [\"g.txt\"]\noutputs = [\"w.txt\"]\n",
    );
    assert_code(&t.run_with(&["run"]), 0);
    assert_code(&t.run_with(&["run", "-v", "tag=t1"]), 0);
    assert_eq!(executed(&t), set(&["first", "gen", "whole"]));
    // Back to t0: `first` reads t0 again and its f.txt holds the bytes its
    // t0 success left (t1 wrote the same byte): that success still holds.
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&["gen", "whole"]));
    assert_eq!(crate::support::process::read(&t, "w.txt"), "t0\n");
}

#[test]
fn the_log_of_an_instance_found_elsewhere_in_its_list_is_its_earlier_output() {
    let t = Test::new()
        .workflow(&BY_ITEM.replace("> docked/{{ item }}.txt", "> docked/{{ item }}.txt; echo docked {{ item }}"))
        .file("ligands.txt", "a\nb\n");
    assert_code(&t.run_with(&["run"]), 0);
    let first = crate::run::run_ids(t.path()).pop().expect("the first run");
    let t = t.file("ligands.txt", "z\na\nb\n");
    assert_code(&t.run_with(&["run"]), 0);
    let second = crate::run::run_ids(t.path()).pop().expect("the second run");
    let out = t.run_with(&["log", "cat", "dock[1]"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "docked a\n");
    assert_eq!(
        out.stderr,
        format!(
            "note: run {second} skipped dock[1] as unchanged; its output is from run {first}, where it was dock[0]\n"
        )
    );
}
