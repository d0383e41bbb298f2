//! Issues 18 and 26: reruns that did more or less than what changed, or
//! left a wrong output. Each case failed on the code as it was; the model
//! check (`model_check::reruns_match_the_oracle`) finds them again from
//! random workflows, these keep them by name.

use std::time::Duration;

use crate::run::{assert_code, last_summary};
use crate::support::Test;
use crate::support::process::{entries, read, signal, spawn_flow, wait_child, wait_for};

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

/// The reference's request that grows with each retry, with the amount
/// in the task's environment: the first attempt fails, the second succeeds.
const GROWING: &str = r#"
[[tasks]]
name = "fit"
memory = "{{ 10 * (attempt + 1) }} MiB"
env = { MEM_MB = "{{ resources.memory }}" }
retries = 2
command = "test $MEM_MB -ge 20 && echo $MEM_MB > fit.txt"
outputs = ["fit.txt"]

[[tasks]]
name = "use"
command = "cat fit.txt > use.txt"
inputs = ["fit.txt"]
outputs = ["use.txt"]
"#;

/// Issue 26: an instance is compared as the attempt that succeeded.
#[test]
fn issue_26_a_request_that_grows_with_the_attempt_is_compared_as_the_attempt_that_succeeded() {
    let t = Test::new().workflow(GROWING);
    assert_eq!(run(&t, &[]), (2, 0));
    assert_eq!(read(&t, "fit.txt"), "20\n");
    let plan = t.success_with(&["plan", "--why", "--instances"]);
    assert_eq!(plan, "fit: 0 of 1 would run, 1 unchanged\nuse: 0 of 1 would run, 1 unchanged\n");
    assert_eq!(run(&t, &[]), (0, 2), "nothing changed, yet the retried task ran again");
    assert_eq!(run(&t, &[]), (0, 2), "a skip keeps the attempt of the work it stands for");
}

/// Issue 26: `workflow.toml` converted to `workflow.yaml` is the same workflow.
#[test]
fn issue_26_the_same_workflow_in_yaml_reruns_nothing() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"up\"\ncommand = \"tr a-z A-Z < in.txt > up.txt\"\ninputs = [\"in.txt\"]\noutputs = [\"up.txt\"]\n")
        .file("in.txt", "abc\n");
    assert_eq!(run(&t, &[]), (1, 0));
    fs_err::remove_file(t.path().join("workflow.toml")).expect("remove the TOML file");
    let t = t.file(
        "workflow.yaml",
        "tasks:\n  - name: up\n    command: tr a-z A-Z < in.txt > up.txt\n    inputs: [in.txt]\n    outputs: [up.txt]\n",
    );
    assert_eq!(t.success_with(&["plan", "--why", "--instances"]), "up: 0 of 1 would run, 1 unchanged\n");
    assert_eq!(run(&t, &[]), (0, 1), "the same workflow in YAML ran again");
}

const SCRIPTED: &str = "[[tasks]]\nname = \"s\"\ncommand = \"sh s.sh > s.txt\"\noutputs = [\"s.txt\"]\n";

/// Issue 26: turning `implicit_inputs` off changes what the key holds
/// (the scripts the command names): the instance runs again, and says why.
/// Turned back on, the earlier success with the same script is found.
#[test]
fn issue_26_toggling_implicit_inputs_gives_a_true_reason() {
    let t = Test::new().workflow(SCRIPTED).file("s.sh", "echo one\n");
    assert_eq!(run(&t, &[]), (1, 0));
    let t = t.workflow(&SCRIPTED.replace("name = \"s\"\n", "name = \"s\"\nimplicit_inputs = false\n"));
    assert_eq!(
        t.success_with(&["plan", "--why", "--instances"]),
        "s: 1 of 1 would run, 0 unchanged\n  s: implicit_inputs changed\n"
    );
    assert_eq!(run(&t, &[]), (1, 0));
    let t = t.workflow(SCRIPTED);
    assert_eq!(
        t.success_with(&["plan", "--why", "--instances"]),
        "s: 0 of 1 would run, 1 unchanged\n  scripts counted as inputs: s.sh\n"
    );
    assert_eq!(run(&t, &[]), (0, 1));
}

/// Issue 26: an attempt killed while it ran taints its instance, whatever
/// its key: set back to the key of its last success, a handler killed
/// with `kill -9` runs again (it may have written what it does not declare).
#[test]
fn issue_26_a_handler_killed_while_it_runs_runs_again_whatever_its_key() {
    let t = Test::new().workflow(
        r#"
[vars]
pause = 0

[[tasks]]
name = "b"
command = "echo b > b.txt"
outputs = ["b.txt"]

[[tasks]]
name = "h"
after = [{ task = "b", on = "always" }]
command = "echo {{ vars.pause }} >> notes.txt; sleep {{ vars.pause }}"
"#,
    );
    assert_eq!(run(&t, &[]), (2, 0));
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2", "-v", "pause=30"], "run.stderr");
    let started = wait_for(Duration::from_secs(20), || read(&t, "notes.txt") == "0\n30\n");
    signal(flow.id(), "-KILL");
    wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");
    assert!(started, "the handler never started: {}", read(&t, "run.stderr"));
    assert_eq!(
        t.success_with(&["plan", "--why", "--instances"]),
        "b: 0 of 1 would run, 1 unchanged\nh: 1 of 1 would run, 0 unchanged\n  h: an attempt started after its last success and did not finish\n"
    );
    assert_eq!(run(&t, &[]), (1, 1));
    assert_eq!(read(&t, "notes.txt"), "0\n30\n0\n");
}

/// Issue 26 (seed 20261201): an output changed by hand, then its task
/// dropped by a false `when`, is moved aside all the same: a clean run
/// with the task dropped has no such file.
#[test]
fn issue_26_an_output_changed_by_hand_goes_when_its_task_is_dropped() {
    let t = Test::new().workflow(
        "[vars]\non = true\n\n[[tasks]]\nname = \"b\"\nwhen = \"{{ vars.on }}\"\ncommand = \"echo b > b.txt\"\noutputs = [\"b.txt\"]\n",
    );
    assert_eq!(run(&t, &[]), (1, 0));
    let t = t.file("b.txt", "99\n");
    let out = t.run_with(&["run", "-v", "on=false"]);
    assert_code(&out, 0);
    assert!(!t.path().join("b.txt").exists(), "the file changed by hand stayed where a clean run has none");
    let run = entries(&t.path().join(".flow/runs")).into_iter().next_back().expect("a run");
    assert_eq!(read(&t, &format!(".flow/runs/{run}/stale/b.txt")), "99\n", "nothing is lost");
}

const UPPER: &str = r#"
[[tasks]]
name = "up"
command = "tr a-z A-Z < in.txt > up.txt"
inputs = ["in.txt"]
outputs = ["up.txt"]

[[tasks]]
name = "sum"
command = "wc -c < up.txt > sum.txt"
inputs = ["up.txt"]
outputs = ["sum.txt"]
"#;

/// Issue 26: results are found by task name, so a renamed task is a new
/// task and runs; what reads its outputs, the same bytes, does not.
#[test]
fn issue_26_a_renamed_task_runs_again_as_new_and_its_unchanged_outputs_rerun_nothing_else() {
    let t = Test::new().workflow(UPPER).file("in.txt", "abc\n");
    assert_eq!(run(&t, &[]), (2, 0));
    let t = t.workflow(&UPPER.replace("name = \"up\"", "name = \"upper\""));
    assert_eq!(
        t.success_with(&["plan", "--why", "--instances"]),
        "upper: 1 of 1 would run, 0 unchanged\n  upper: new\nsum: 1 of 1 would run, 0 unchanged\n  sum: after `upper`, which runs first\n"
    );
    assert_eq!(run(&t, &[]), (1, 1));
    assert_eq!(read(&t, "sum.txt"), "4\n");
}

/// Issue 26: the order of the tasks in the file is not part of any key.
#[test]
fn issue_26_tasks_written_in_another_order_rerun_nothing() {
    let t = Test::new().workflow(UPPER).file("in.txt", "abc\n");
    assert_eq!(run(&t, &[]), (2, 0));
    let (up, sum) = UPPER.split_at(UPPER.find("\n[[tasks]]\nname = \"sum\"").expect("two tasks"));
    let t = t.workflow(&format!("{sum}\n{up}"));
    assert!(read(&t, "workflow.toml").starts_with("\n[[tasks]]\nname = \"sum\""));
    // The plan lists the tasks in the order they run.
    assert_eq!(
        t.success_with(&["plan", "--why", "--instances"]),
        "up: 0 of 1 would run, 1 unchanged\nsum: 0 of 1 would run, 1 unchanged\n"
    );
    assert_eq!(run(&t, &[]), (0, 2));
}

/// Issue 26: a per-instance fan-out written before the task it fans out
/// over pointed at itself once the tasks were sorted, and never ran.
#[test]
fn issue_26_a_fan_out_written_before_the_task_it_fans_out_over_runs() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "n"
for_each = "a"
each_line = "a/{{ index }}.txt"
command = "mkdir -p nn && echo {{ item }} > nn/{{ index }}.{{ subindex }}.txt"
outputs = ["nn/{{ index }}.{{ subindex }}.txt"]

[[tasks]]
name = "a"
range = "1-2"
command = "mkdir -p a && echo x{{ index }} > a/{{ index }}.txt"
outputs = ["a/{{ index }}.txt"]
"#,
    );
    assert_eq!(run(&t, &[]), (4, 0));
    assert_eq!(entries(&t.path().join("nn")), ["1.0.txt", "2.0.txt"].map(String::from).into());
    assert_eq!(read(&t, "nn/2.0.txt"), "x2\n");
    assert_eq!(run(&t, &[]), (0, 4));
}

/// Issue 26: every instance of `b` skipped by its per-instance `when`
/// skips `c`, which writes the list `d` expands: `d` is never known, and
/// the run skips it as a whole, and `e` after it. `flow plan --why`
/// foresaw `d` waiting for `c` and `e` running after it.
#[test]
fn issue_26_a_stage_whose_list_writer_is_skipped_is_foreseen_skipped_as_a_whole() {
    let t = Test::new()
        .workflow(
            r#"
[vars]
cut = 0

[[tasks]]
name = "a"
each_chunk = { file = "list.txt", lines = 2 }
command = "mkdir -p a && cat {{ chunk.path }} > a/{{ index }}.txt"
outputs = ["a/{{ index }}.txt"]

[[tasks]]
name = "b"
for_each = "a"
when = "{{ index != vars.cut }}"
command = "mkdir -p b && head -c 3 a/{{ index }}.txt > b/{{ index }}.txt"
inputs = ["a/{{ index }}.txt"]
outputs = ["b/{{ index }}.txt"]

[[tasks]]
name = "c"
command = "cat /dev/null $(ls b/*.txt 2>/dev/null) > all.txt && { cut -c1-2 all.txt; echo zz; } > hits.txt"
inputs = ["b/*.txt"]
outputs = ["all.txt", "hits.txt"]

[[tasks]]
name = "d"
each_line = "hits.txt"
command = "mkdir -p r && echo {{ item }} > r/{{ index }}.txt"
outputs = ["r/{{ index }}.txt"]

[[tasks]]
name = "e"
command = "cat r/*.txt > final.txt"
inputs = ["r/*.txt"]
outputs = ["final.txt"]
"#,
        )
        .file("list.txt", "alpha\nbeta\ngamma\n");
    assert_eq!(run(&t, &[]), (7, 0));
    // One chunk is left, whose `b` is skipped: `c` and what it feeds are skipped.
    let t = t.file("list.txt", "beta\ngamma\n");
    assert_eq!(run(&t, &[]), (1, 0));
    assert!(!t.path().join("hits.txt").exists(), "moved aside as the output of a skipped instance");
    assert_eq!(
        t.success_with(&["plan", "--why", "--instances"]),
        "a: 0 of 1 would run, 1 unchanged\n\
         b: 0 of 1 would run, 0 unchanged, 1 skipped by a condition\n  \
         b[0]: skipped: when `{{ index != vars.cut }}` was false (rendered `False`)\n\
         c: 0 of 1 would run, 0 unchanged, 1 skipped by a condition\n  c: skipped: b[0] was skipped\n\
         d: skipped as a whole, before its instances are known\n  d: skipped: c was skipped\n\
         e: 0 of 1 would run, 0 unchanged, 1 skipped by a condition\n  e: skipped: d was skipped\n"
    );
    assert_eq!(run(&t, &[]), (0, 1));
    assert!(!t.path().join("final.txt").exists());
}
