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
    assert!(plan.contains("score: 0 of 2 would run, 2 unchanged"), "{plan}");
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
    assert!(plan.contains("1 output `hits.txt` changed since it was written: hits"), "{plan}");
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
/// is, so a line inserted at the top reruns only that line.
const BY_ITEM: &str = r#"
[[tasks]]
name = "dock"
each_line = "ligands.txt"
command = "mkdir -p docked && echo {{ item }} > docked/{{ item }}.txt"
outputs = ["docked/{{ item }}.txt"]
"#;

#[test]
fn a_line_inserted_at_the_top_reruns_only_that_line() {
    let t = Test::new().workflow(BY_ITEM).file("ligands.txt", "a\nb\nc\n");
    assert_code(&t.run_with(&["run"]), 0);
    let t = t.file("ligands.txt", "z\na\nb\nc\n");
    let plan = t.success_with(&["plan", "--why"]);
    assert!(plan.contains("dock: 1 of 4 would run, 3 unchanged"), "{plan}");
    assert_code(&t.run_with(&["run"]), 0);
    assert_eq!(executed(&t), set(&["dock[0]"]));
}
