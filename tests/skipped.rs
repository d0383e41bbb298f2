//! A `when` over `item` or `index` is decided per instance as it would
//! start: a false one is skipped (state `skipped`, with the reason), what
//! waits on it element-wise is skipped too, a fan-in runs with the rest,
//! and a rerun decides again.

use crate::run::statuses;
use crate::support::Test;
use crate::support::process::read;

const SCREEN: &str = r#"
name = "screen"
vars = { cutoff = 0.6 }

[[tasks]]
name = "dock"
matrix = { ligand = [{ name = "a", score = 0.9 }, { name = "b", score = 0.2 }, { name = "c", score = 0.7 }] }
when = "{{ item.ligand.score > vars.cutoff }}"
command = "echo {{ item.ligand.name }} > dock-{{ index }}.txt"
outputs = ["dock-{{ index }}.txt"]

[[tasks]]
name = "refine"
range = "0-2"
inputs = ["dock-{{ index }}.txt"]
command = "cat dock-{{ index }}.txt > refine-{{ index }}.txt"
outputs = ["refine-{{ index }}.txt"]

[[tasks]]
name = "merge"
after = ["refine"]
command = "cat refine-*.txt > merged.txt"
outputs = ["merged.txt"]
"#;

fn states(t: &Test) -> Vec<(String, String)> {
    statuses(t, None).into_iter().collect()
}

#[test]
fn a_false_instance_is_skipped_with_its_element_wise_dependent_and_the_fan_in_runs() {
    let t = Test::new().workflow(SCREEN);
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains(": 5 succeeded, 2 skipped by a condition in "), "{}", out.stderr);
    let expected = [
        ("dock[0]", "succeeded"),
        ("dock[1]", "skipped"),
        ("dock[2]", "succeeded"),
        ("merge", "succeeded"),
        ("refine[0]", "succeeded"),
        ("refine[1]", "skipped"),
        ("refine[2]", "succeeded"),
    ]
    .map(|(l, s)| (l.to_owned(), s.to_owned()));
    assert_eq!(states(&t), expected);
    assert!(!t.path().join("dock-1.txt").exists(), "a skipped instance never runs");
    assert_eq!(read(&t, "merged.txt"), "a\nc\n");

    let list = t.success_with(&["log", "list"]);
    assert!(list.contains("dock[1]    skipped    -"), "{list}");
    let csv = t.success_with(&["log", "list", "--format", "csv"]);
    assert!(csv.lines().any(|l| l.starts_with("dock[1],") && l.contains(",skipped,")), "{csv}");

    let status: serde_json::Value = serde_json::from_str(&t.success_with(&["status", "--json"])).expect("JSON");
    assert_eq!(status["counts"]["skipped"], 2);
    assert_eq!(status["counts"]["succeeded"], 5);
    let text = t.success_with(&["status"]);
    assert!(text.contains("0 cancelled, 2 skipped by a condition;"), "{text}");

    let why = t.success_with(&["explain", "dock[1]"]);
    assert!(why.contains("dock[1]: skipped at "), "{why}");
    assert!(why.contains(": when `{{ item.ligand.score > vars.cutoff }}` was false (rendered `False`)"), "{why}");
    let why = t.success_with(&["explain", "refine[1]"]);
    assert!(why.contains(": dock[1] was skipped"), "{why}");
}

#[test]
fn json_events_and_the_plan_name_the_skipped_instances() {
    let t = Test::new().workflow(SCREEN);
    let plan = t.success_with(&["plan", "--why"]);
    assert!(plan.contains("dock: 2 of 3 would run, 0 unchanged, 1 skipped by a condition\n"), "{plan}");
    assert!(plan.contains("  1 skipped: dock[1] was skipped: refine[1]\n"), "{plan}");
    let out = t.success_with(&["run", "--json"]);
    let events: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    let skipped: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["event"] == "task_finished" && e["state"] == "skipped")
        .map(|e| (e["label"].as_str().unwrap_or("?"), e["reason"].as_str().unwrap_or("?")))
        .collect();
    assert_eq!(
        skipped,
        [
            ("dock[1]", "when `{{ item.ligand.score > vars.cutoff }}` was false (rendered `False`)"),
            ("refine[1]", "dock[1] was skipped"),
        ]
    );
    let finished = events.last().expect("events");
    assert_eq!(finished["counts"]["skipped"], 2);
    assert_eq!(finished["state"], "succeeded");
}

#[test]
fn a_rerun_decides_again() {
    let t = Test::new().workflow(SCREEN);
    t.success_with(&["run"]);
    let out = t.run_with(&["run", "-v", "cutoff=0.1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(statuses(&t, None).get("dock[1]").map(String::as_str), Some("succeeded"));
    assert_eq!(read(&t, "dock-1.txt"), "b\n");
    let out = t.run_with(&["run"]);
    assert!(out.stderr.contains("skipped by a condition"), "a skip is never taken from the cache: {}", out.stderr);
    assert_eq!(statuses(&t, None).get("dock[1]").map(String::as_str), Some("skipped"));
}

#[test]
fn a_fan_in_over_instances_all_skipped_is_skipped() {
    let text = r#"
[[tasks]]
name = "odd"
range = "1-5:2"
when = "{{ index % 2 == 0 }}"
command = "echo {{ index }} > odd-{{ index }}.txt"

[[tasks]]
name = "even"
range = "0-3"
when = "{{ index % 2 == 0 }}"
command = "echo {{ index }}"

[[tasks]]
name = "collect"
after = ["odd"]
command = "echo collected > collected.txt"

[[tasks]]
name = "tally"
after = ["even"]
command = "echo tallied > tallied.txt"
"#;
    let t = Test::new().workflow(text);
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let states = statuses(&t, None);
    assert_eq!(states.get("collect").map(String::as_str), Some("skipped"));
    assert_eq!(states.get("tally").map(String::as_str), Some("succeeded"));
    assert!(!t.path().join("collected.txt").exists());
    assert_eq!(states.get("even[1]").map(String::as_str), Some("skipped"));
    assert_eq!(states.get("even[2]").map(String::as_str), Some("succeeded"));
    let why = t.success_with(&["explain", "collect"]);
    assert!(why.contains(": odd[5] was skipped"), "{why}");
}

/// `flow plan --why` follows a skip into the nested parts of the skipped
/// instance, and does not wait for the parts a skipped instance never gives.
#[test]
fn plan_why_skips_the_parts_of_a_skipped_parent() {
    let text = r#"
[[tasks]]
name = "find"
range = "1-3"
when = "{{ index != vars.off }}"
command = "printf 'a\nb\n' > list.{{ index }}.txt"
outputs = ["list.{{ index }}.txt"]

[[tasks]]
name = "use"
for_each = "find"
each_line = "list.{{ index }}.txt"
command = "echo {{ item }}"
"#;
    let t = Test::new().workflow(&text.replace("vars.off", "2"));
    let plan = t.success_with(&["plan", "--why"]);
    assert!(plan.contains("use: 0 of 0 would run, 0 unchanged; 2 parts known after `find` runs\n"), "{plan}");
    assert_eq!(t.run_with(&["run"]).code, 0);
    fs_err::write(t.path().join("workflow.toml"), text.replace("vars.off", "3")).unwrap();
    let plan = t.success_with(&["plan", "--why"]);
    assert!(
        plan.contains("use: 0 of 4 would run, 2 unchanged, 2 skipped by a condition; 1 part known after `find` runs\n  2 skipped: find[3] was skipped: use[3.0], use[3.1]\n"),
        "{plan}"
    );
}

/// A misspelt name in a `when` over the instance is caught before the run.
#[test]
fn a_misspelt_name_in_a_per_instance_when_is_a_diagnostic() {
    let t = Test::new()
        .workflow("vars = { cutoff = 0.5 }\n\n[[tasks]]\nname = \"dock\"\nrange = \"1-3\"\nwhen = \"{{ item > vars.cutof }}\"\ncommand = \"true\"\n")
        .args(["check"]);
    let err = t.invalid();
    assert!(err.contains("template error in `when`: `vars.cutof` is undefined (in `dock[1]`)"), "{err}");
    assert!(err.contains("did you mean `vars.cutoff`?") && err.contains("workflow.toml:6:19"), "{err}");
}

#[test]
fn a_glob_over_two_tasks_runs_when_only_one_of_them_was_skipped_issue_26() {
    // `refine`'s `when` is false for every instance; `shortlist` runs.
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"shortlist\"\ncommand = \"mkdir -p hits && echo short > hits/short.txt\"\n\
         outputs = [\"hits/short.txt\"]\n\n\
         [[tasks]]\nname = \"refine\"\nrange = \"1-2\"\nwhen = \"{{ item > 5 }}\"\n\
         command = \"mkdir -p hits && echo {{ index }} > hits/r{{ index }}.txt\"\noutputs = [\"hits/r{{ index }}.txt\"]\n\n\
         [[tasks]]\nname = \"report\"\ninputs = [\"hits/*.txt\"]\ncommand = \"cat hits/*.txt > report.txt\"\n\
         outputs = [\"report.txt\"]\n",
    );
    let plan = t.success_with(&["plan", "--why"]);
    assert!(
        plan.contains("report: 1 of 1 would run, 0 unchanged\n  1 after `shortlist`, which runs first: report\n"),
        "{plan}"
    );
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expected =
        [("refine[1]", "skipped"), ("refine[2]", "skipped"), ("report", "succeeded"), ("shortlist", "succeeded")]
            .map(|(l, s)| (l.to_owned(), s.to_owned()));
    assert_eq!(states(&t), expected);
    assert_eq!(read(&t, "report.txt"), "short\n");
}
