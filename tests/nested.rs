//! Per-instance fan-out: `for_each` with a file expansion gives a part of
//! instances per instance of the parent task, known as soon as that
//! instance is done, named `refine[12.3]`.

use crate::run::{assert_code, last_summary, statuses};
use crate::support::Test;
use crate::support::process::read;

/// `search[i]` writes `i` hits (none for 0); `refine` refines each hit of
/// each search, `report` mirrors it, `combine` waits for all of them.
/// A search instance fails while a file `fail-INDEX` exists.
fn screening() -> String {
    r#"
[[tasks]]
name = "search"
range = "0-3"
command = "[ ! -e fail-{{ index }} ] && mkdir -p hits && seq 1 {{ index }} | sed 's/^/mol/' > hits/{{ index }}.txt"
outputs = ["hits/{{ index }}.txt"]

[[tasks]]
name = "refine"
for_each = "search"
each_line = "hits/{{ index }}.txt"
command = "mkdir -p out && echo {{ item }} $FLOW_INDEX.$FLOW_SUBINDEX > out/{{ index }}.{{ subindex }}.txt"
outputs = ["out/{{ index }}.{{ subindex }}.txt"]

[[tasks]]
name = "report"
for_each = "refine"
command = "cat out/{{ index }}.{{ subindex }}.txt"
inputs = ["out/{{ index }}.{{ subindex }}.txt"]

[[tasks]]
name = "combine"
after = ["report"]
command = "cat out/*.txt | sort > all.txt"
outputs = ["all.txt"]
"#
    .to_owned()
}

#[test]
fn each_producer_instance_gives_its_own_part() {
    // An old copy of a produced file is never read.
    let t = Test::new().workflow(&screening()).file("hits/3.txt", "stale\n");
    let plan = t.success_with(&["plan"]);
    assert!(plan.contains("each_line hits/{{ index }}.txt per search"), "{plan}");
    assert!(plan.contains("search → refine   element-wise  expansion"), "{plan}");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    assert_eq!(
        read(&t, "all.txt"),
        "mol1 1.0\nmol1 2.0\nmol1 3.0\nmol2 2.1\nmol2 3.1\nmol3 3.2\n",
        "each instance sees its parent's index and its subindex"
    );
    let labels = statuses(&t, None);
    let refine: Vec<&str> = labels.keys().filter(|l| l.starts_with("refine[")).map(String::as_str).collect();
    assert_eq!(refine, ["refine[1.0]", "refine[2.0]", "refine[2.1]", "refine[3.0]", "refine[3.1]", "refine[3.2]"]);
    assert_eq!(labels.keys().filter(|l| l.starts_with("report[")).count(), 6, "{labels:?}");
    let summary = last_summary(t.path());
    assert_eq!((summary["total"].as_u64(), summary["succeeded"].as_u64()), (Some(4 + 6 + 6 + 1), Some(17)));

    assert_eq!(t.success_with(&["log", "cat", "report[3.1]"]), "mol2 3.1\n");
    let part = t.success_with(&["log", "list", "refine[2]", "--columns", "task,status"]);
    assert_eq!(part, "TASK         STATUS\nrefine[2.0]  succeeded\nrefine[2.1]  succeeded\n");
    let missing = t.run_with(&["log", "cat", "refine[2.5]"]);
    assert_code(&missing, 2);
    assert!(missing.stderr.contains("`refine[2]` has no instance 5 (it has 2)"), "{}", missing.stderr);

    let again = t.run_with(&["run"]);
    assert_code(&again, 0);
    assert!(again.stderr.contains("0 succeeded, 17 unchanged"), "{}", again.stderr);
}

#[test]
fn a_part_starts_as_soon_as_its_producer_instance_is_done() {
    // `slow` finishes only once the part of `fast` has run: a part that
    // waited for the whole producer task would never start.
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "search"
matrix = { who = ["fast", "slow"] }
command = """
mkdir -p hits
if [ {{ item.who }} = slow ]; then
  for i in $(seq 1 100); do [ -e refined-fast ] && break; sleep 0.1; done
  [ -e refined-fast ] || exit 1
fi
echo {{ item.who }} > hits/{{ item.who }}.txt
"""
outputs = ["hits/{{ item.who }}.txt"]

[[tasks]]
name = "refine"
for_each = "search"
each_line = "hits/{{ item.who }}.txt"
command = "touch refined-{{ item }}"
"#,
    );
    let out = t.run_with(&["run", "--cpus", "2"]);
    assert_code(&out, 0);
    let labels = statuses(&t, None);
    assert_eq!(labels.get("refine[0.0]").map(String::as_str), Some("succeeded"), "{labels:?}");
    assert_eq!(labels.get("refine[1.0]").map(String::as_str), Some("succeeded"), "{labels:?}");
}

#[test]
fn a_failed_producer_instance_cancels_only_its_part() {
    let t = Test::new().workflow(&screening()).file("fail-2", "");
    let out = t.run_with(&["run"]);
    assert_code(&out, 1);
    assert!(out.stderr.contains("11 succeeded, 1 failed, 3 cancelled"), "{}", out.stderr);
    let labels = statuses(&t, None);
    assert_eq!(labels.get("combine").map(String::as_str), Some("cancelled"), "{labels:?}");
    assert_eq!(labels.get("search[2]").map(String::as_str), Some("failed"), "{labels:?}");
    for done in ["refine[1.0]", "refine[3.2]", "report[3.2]"] {
        assert_eq!(labels.get(done).map(String::as_str), Some("succeeded"), "{done}: {labels:?}");
    }
    assert!(!labels.keys().any(|l| l.starts_with("refine[2.")), "{labels:?}");
    let summary = last_summary(t.path());
    // search[2] failed; refine[2.?], report[2.?] and combine were cancelled.
    assert_eq!((summary["failed"].as_u64(), summary["cancelled"].as_u64()), (Some(1), Some(3)), "{summary}");

    // Fixed: the failed instance and its part run, the rest is unchanged.
    fs_err::remove_file(t.path().join("fail-2")).expect("remove fail-2");
    let again = t.run_with(&["run"]);
    assert_code(&again, 0);
    assert!(again.stderr.contains("6 succeeded, 11 unchanged"), "{}", again.stderr);
    assert_eq!(read(&t, "out/2.1.txt"), "mol2 2.1\n");
}

#[test]
fn nested_tasks_are_checked() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "select"
command = "echo 1 > list.txt"
outputs = ["list.txt"]

[[tasks]]
name = "search"
each_line = "list.txt"
command = "echo {{ item }} > hits/{{ index }}.txt"
outputs = ["hits/{{ index }}.txt"]

[[tasks]]
name = "refine"
for_each = "search"
each_line = "hits/{{ index }}.txt"
command = "true"
after = ["search[1.2]"]
"#,
    );
    let out = t.run_with(&["check"]);
    assert_code(&out, 2);
    let err = out.stderr;
    assert!(err.contains("flow::compile::nested_parent"), "{err}");
    assert!(err.contains("`refine` expands a file per instance of `search`, whose own instances"), "{err}");
}
