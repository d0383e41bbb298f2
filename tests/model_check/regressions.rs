//! Issue 18: reruns that did more or less than what changed, or left a
//! wrong output. Each case failed on the code as it was; the model check
//! (`model_check::reruns_match_the_oracle`) finds them again from random
//! workflows, these keep them by name.

use crate::run::{assert_code, last_summary};
use crate::support::Test;
use crate::support::process::{entries, read};

/// `(succeeded, cached)` of the newest run.
fn counts(t: &Test) -> (u64, u64) {
    let s = last_summary(t.path());
    (s["succeeded"].as_u64().unwrap_or(u64::MAX), s["cached"].as_u64().unwrap_or(u64::MAX))
}

fn run(t: &Test, extra: &[&str]) -> (u64, u64) {
    let mut args = vec!["run", "--cpus", "2"];
    args.extend_from_slice(extra);
    assert_code(&t.run_with(&args), 0);
    counts(t)
}

/// Issue 18: the first variant needs a GPU, which this machine lacks, so
/// every run uses the second; the rerun compared against the first.
#[test]
fn issue_18_a_variant_that_never_fits_does_not_rerun_the_task() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "v"
command = "echo cpus {{ resources.cpus }} $NT > v.txt"
env = { NT = "{{ resources.cpus }}" }
outputs = ["v.txt"]
[[tasks.variants]]
gpus = 1
cpus = 1
[[tasks.variants]]
cpus = 2
"#,
    );
    let t = t.env("CUDA_VISIBLE_DEVICES", "");
    assert_eq!(run(&t, &[]), (1, 0));
    assert_eq!(read(&t, "v.txt"), "cpus 2 2\n");
    assert_eq!(run(&t, &[]), (0, 1), "nothing changed, yet the task ran again");
}

/// Issue 18: a script named by a command is found from the task's `cwd`.
#[test]
fn issue_18_a_script_is_resolved_from_the_tasks_cwd() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"s\"\ncwd = \"sub\"\ncommand = \"sh s.sh > ../o1.txt\"\noutputs = [\"o1.txt\"]\n")
        .file("sub/s.sh", "echo one\n");
    assert_eq!(run(&t, &[]), (1, 0));
    let t = t.file("sub/s.sh", "echo two\n");
    assert_eq!(run(&t, &[]), (1, 0), "editing sub/s.sh must rerun the task");
    assert_eq!(read(&t, "o1.txt"), "two\n");
    let t = t.file("s.sh", "echo unrelated\n");
    assert_eq!(run(&t, &[]), (0, 1), "a ./s.sh the task never runs must not rerun it");
}

const SHRINKING_STAGE: &str = r#"
[[tasks]]
name = "select"
command = "head -n {{ vars.n }} pool.txt > hits.txt"
inputs = ["pool.txt"]
outputs = ["hits.txt"]

[[tasks]]
name = "refine"
each_line = "hits.txt"
command = "mkdir -p refined && echo r {{ item }} > refined/{{ item }}.txt"
outputs = ["refined/{{ item }}.txt"]

[[tasks]]
name = "combine"
command = "cat refined/*.txt > all.txt"
inputs = ["refined/*.txt"]
outputs = ["all.txt"]
"#;

/// Issue 18: outputs of instances that no longer exist stay out of globs.
#[test]
fn issue_18_a_shrinking_dynamic_list_hides_the_vanished_outputs() {
    let t = Test::new().workflow(SHRINKING_STAGE).file("pool.txt", "a\nb\nc\nd\n");
    assert_eq!(run(&t, &["-v", "n=4"]), (6, 0));
    assert_eq!(read(&t, "all.txt"), "r a\nr b\nr c\nr d\n");
    run(&t, &["-v", "n=2"]);
    assert_eq!(read(&t, "all.txt"), "r a\nr b\n", "combine read outputs of vanished instances");
    assert_eq!(entries(&t.path().join("refined")), ["a.txt", "b.txt"].map(String::from).into());
    assert_eq!(run(&t, &["-v", "n=2"]), (0, 4), "nothing changed since the last run");
}

/// Issue 18: the same with a `range` that gets shorter.
#[test]
fn issue_18_a_shorter_range_hides_the_vanished_outputs() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "gen"
range = "1-{{ vars.n }}"
command = "mkdir -p out && echo {{ index }} > out/{{ index }}.txt"
outputs = ["out/{{ index }}.txt"]

[[tasks]]
name = "sum"
command = "cat out/*.txt > all.txt"
inputs = ["out/*.txt"]
outputs = ["all.txt"]
"#,
    );
    assert_eq!(run(&t, &["-v", "n=4"]), (5, 0));
    run(&t, &["-v", "n=2"]);
    assert_eq!(read(&t, "all.txt"), "1\n2\n", "sum read outputs of vanished instances");
    assert_eq!(run(&t, &["-v", "n=2"]), (0, 3), "nothing changed since the last run");
}

/// Issue 18: an output changed by hand is not what its writer wrote.
#[test]
fn issue_18_an_output_edited_by_hand_reruns_its_writer() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"count\"\ncommand = \"wc -l < in.txt > hits.txt\"\ninputs = [\"in.txt\"]\noutputs = [\"hits.txt\"]\n")
        .file("in.txt", "x\ny\n");
    assert_eq!(run(&t, &[]), (1, 0));
    let t = t.file("hits.txt", "99\n");
    assert_eq!(run(&t, &[]), (1, 0), "the edited output was trusted");
    assert_eq!(read(&t, "hits.txt"), "2\n");
}

/// Issue 18: the cache is looked up by fingerprint, not by position.
#[test]
fn issue_18_a_line_inserted_at_the_top_reruns_only_that_line() {
    let t = Test::new()
        .workflow(
            "[[tasks]]\nname = \"e\"\neach_line = \"list.txt\"\ncommand = \"mkdir -p out && echo {{ item }} > out/{{ item }}.txt\"\noutputs = [\"out/{{ item }}.txt\"]\n",
        )
        .file("list.txt", "alpha\nbeta\ngamma\n");
    assert_eq!(run(&t, &[]), (3, 0));
    let t = t.file("list.txt", "zero\nalpha\nbeta\ngamma\n");
    assert_eq!(run(&t, &[]), (1, 3), "lines that only moved ran again");
}

/// `label → state` of the `task_finished` events of `flow run --json ARGS`.
fn finished(t: &Test, extra: &[&str]) -> Vec<(String, String)> {
    let mut args = vec!["run", "--cpus", "2", "--json"];
    args.extend_from_slice(extra);
    let out = t.run_with(&args);
    assert_code(&out, 0);
    let mut states: Vec<(String, String)> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "task_finished")
        .map(|v| (v["label"].as_str().unwrap_or("?").to_owned(), v["state"].as_str().unwrap_or("?").to_owned()))
        .collect();
    states.sort();
    states
}

/// Issue 18: a dry run cannot know that an upstream output stays the same,
/// so what reads it would run, as in the real run.
#[test]
fn issue_18_dry_exec_reports_the_downstream_of_a_change_as_would_run() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "gen"
command = "tr a-z A-Z < in.txt > g.txt"
inputs = ["in.txt"]
outputs = ["g.txt"]

[[tasks]]
name = "sum"
command = "wc -c < g.txt > s.txt"
inputs = ["g.txt"]
outputs = ["s.txt"]
"#,
        )
        .file("in.txt", "abc\n");
    assert_eq!(run(&t, &[]), (2, 0));
    let t = t.file("in.txt", "abcd\n");
    let dry = finished(&t, &["--dry-exec"]);
    let real = finished(&t, &[]);
    let expected = vec![("gen".to_owned(), "succeeded".to_owned()), ("sum".to_owned(), "succeeded".to_owned())];
    assert_eq!(real, expected);
    assert_eq!(dry, real, "--dry-exec predicted another set than the run did");
}
