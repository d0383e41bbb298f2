//! Dynamic stages: expansions over files that tasks of the run write. The
//! instances come into existence when the writer is done; an old copy of
//! the file is never read.

use std::time::Duration;

use crate::run::{assert_code, last_summary, statuses};
use crate::support::Test;
use crate::support::copy::copy_example;
use crate::support::process::{entries, read, signal, spawn_flow, wait_child, wait_for};

/// Scores 1..=6 (`index * 17 % 10`: 7 4 1 8 5 2), keeps those above
/// `threshold`, refines each hit, mirrors the refinement, and combines all.
fn screening(threshold: u32) -> String {
    format!(
        r#"
[vars]
threshold = {threshold}

[[tasks]]
name = "score"
range = "1-6"
command = "mkdir -p scores && echo $(( {{{{ index }}}} * 17 % 10 )) > scores/{{{{ index }}}}.txt"
outputs = ["scores/{{{{ index }}}}.txt"]

[[tasks]]
name = "select"
command = "for i in 1 2 3 4 5 6; do [ $(cat scores/$i.txt) -gt {{{{ vars.threshold }}}} ] && echo $i; done > hits.txt; true"
inputs = ["scores/*.txt"]
outputs = ["hits.txt"]

[[tasks]]
name = "refine"
each_line = "hits.txt"
command = "mkdir -p refined && echo refined {{{{ item }}}} > refined/{{{{ item }}}}.txt"
outputs = ["refined/{{{{ item }}}}.txt"]

[[tasks]]
name = "report"
for_each = "refine"
command = "cat refined/{{{{ item }}}}.txt > refined/{{{{ item }}}}.report"
inputs = ["refined/{{{{ item }}}}.txt"]
outputs = ["refined/{{{{ item }}}}.report"]

[[tasks]]
name = "combine"
command = "cat refined/*.report > all.txt"
inputs = ["refined/*.report"]
outputs = ["all.txt"]
"#
    )
}

#[test]
fn an_old_copy_of_a_produced_file_is_never_read() {
    // Left behind by an older version of the pipeline: `refine` must not
    // expand over it, neither at check time nor at run time.
    let t = Test::new().workflow(&screening(4)).file("hits.txt", "stale-1\nstale-2\nstale-3\nstale-4\n");
    let check = t.success_with(&["check"]);
    insta::assert_snapshot!(check, @r"
        note: workflow.toml:18:8: `refine` puts `{{ item }}`, read from a data file, into its shell command unquoted, so shell syntax in the data runs; write `{{ item | shell_quote }}`
        note: workflow.toml:24:8: `report` puts `{{ item }}`, read from a data file, into its shell command unquoted, so shell syntax in the data runs; write `{{ item | shell_quote }}`
        ok: workflow (workflow.toml) — 5 tasks, 8 instances (+ 2 tasks known at run time), 4 edges
    ");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 8 instances of 5 tasks, + the instances of `refine`, `report` (known at run time)
        + refine: 3 instances from hits.txt
        + report: 3 instances from hits.txt
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 14 succeeded in [TIME]
    ");
    assert_eq!(read(&t, "all.txt"), "refined 1\nrefined 4\nrefined 5\n");
    assert!(!t.path().join("refined/stale-1.txt").exists(), "the stale list was expanded");
    let summary = last_summary(t.path());
    assert_eq!(summary["total"], 6 + 1 + 3 + 3 + 1, "{summary}");
    assert_eq!(summary["succeeded"], 14, "{summary}");
}

#[test]
fn the_data_decides_how_many_instances_run() {
    for (threshold, hits) in [(6, vec!["1", "4"]), (7, vec!["4"]), (4, vec!["1", "4", "5"])] {
        let t = Test::new().workflow(&screening(threshold));
        let out = t.run_with(&["run"]);
        assert_code(&out, 0);
        let refined: Vec<String> =
            entries(&t.path().join("refined")).into_iter().filter(|f| f.ends_with(".txt")).collect();
        let expected: Vec<String> = hits.iter().map(|h| format!("{h}.txt")).collect();
        assert_eq!(refined, expected, "threshold {threshold}");
        let labels = statuses(&t, None);
        assert_eq!(labels.keys().filter(|l| l.starts_with("refine[")).count(), hits.len(), "{labels:?}");
        assert_eq!(labels.keys().filter(|l| l.starts_with("report[")).count(), hits.len(), "{labels:?}");
        assert_eq!(labels.get("combine").map(String::as_str), Some("succeeded"), "{labels:?}");
    }
}

#[test]
fn plan_says_when_the_instances_are_known() {
    let t = Test::new().workflow(&screening(4));
    let plan = t.success_with(&["plan"]);
    insta::assert_snapshot!(plan);
    let json: serde_json::Value = serde_json::from_str(&t.success_with(&["plan", "--json"])).expect("plan --json");
    assert_eq!(json["groups"][2]["domain"]["kind"], "deferred", "{json}");
    assert_eq!(json["groups"][2]["domain"]["expansion"]["file"], "hits.txt", "{json}");
}

#[test]
fn a_two_stage_dynamic_chain_runs() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "search"
command = "printf 'a\nb\nc\n' > families.txt"
outputs = ["families.txt"]

[[tasks]]
name = "expand"
each_line = "families.txt"
command = "mkdir -p members && printf '{{ item }}1\n{{ item }}2\n' > members/{{ item }}.txt"
outputs = ["members/{{ item }}.txt"]

[[tasks]]
name = "gather"
command = "cat members/*.txt | sort > members.json.txt && awk 'BEGIN{printf \"[\"} {printf \"%s\\\"%s\\\"\", (NR>1?\",\":\"\"), $0} END{print \"]\"}' members.json.txt > members.json"
inputs = ["members/*.txt"]
outputs = ["members.json"]

[[tasks]]
name = "dock"
from_json = "members.json"
command = "mkdir -p docked && echo {{ item }} > docked/{{ index }}.txt"
outputs = ["docked/{{ index }}.txt"]
"#,
    );
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 2 instances of 4 tasks, + the instances of `expand`, `dock` (known at run time)
        + expand: 3 instances from families.txt
        + dock: 6 instances from members.json
        results: docked/0.txt, docked/1.txt, docked/2.txt and 3 more
        log:  flow log list
        report:  flow report
        run [RUN]: 11 succeeded in [TIME]
    ");
    assert_eq!(entries(&t.path().join("docked")).len(), 6);
    assert_eq!(read(&t, "docked/5.txt"), "c2\n");
    let again = t.run_with(&["run"]);
    assert_code(&again, 0);
    insta::assert_snapshot!(t.normalize(&again.stderr), @r"
        run [RUN]: 2 instances of 4 tasks, + the instances of `expand`, `dock` (known at run time)
        + expand: 3 instances from families.txt
        + dock: 6 instances from members.json
        results: docked/0.txt, docked/1.txt, docked/2.txt and 3 more
        log:  flow log list
        report:  flow report
        run [RUN]: 0 succeeded, 11 unchanged (skipped) in [TIME]
    ");
}

#[test]
fn a_failed_writer_cancels_the_dynamic_stage_as_one() {
    let t = Test::new().workflow(&screening(4).replace("> hits.txt; true", "> hits.txt; exit 3"));
    let out = t.run_with(&["run"]);
    assert_code(&out, 1);
    // Issue 27: the stage whose instances were never known is no instance:
    // the counts add up to the total (its one event and `flow explain` say
    // what became of it).
    let summary = last_summary(t.path());
    assert_eq!((summary["failed"].as_u64(), summary["cancelled"].as_u64()), (Some(1), Some(1)), "{summary}");
    assert_eq!(summary["total"], 8, "{summary}");
    assert!(!t.path().join("refined").exists());
    let json = t.run_with(&["run", "--json"]);
    let refine = json
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["event"] == "task_cancelled" && v["label"] == "refine")
        .unwrap_or_else(|| panic!("refine is cancelled as one: {}", json.stdout));
    assert_eq!(refine["reason"], "select failed", "{refine}");
    let explained = t.success_with(&["explain", "refine"]);
    assert_eq!(
        explained,
        "refine: its instances are never known: it expands over `hits.txt` once its writers are done, and `select` failed\n"
    );
}

#[test]
fn an_expansion_file_that_cannot_be_expanded_fails_the_stage() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "search"
command = "echo '[1, 2' > hits.json"
outputs = ["hits.json"]

[[tasks]]
name = "refine"
from_json = "hits.json"
command = "echo {{ item }}"

[[tasks]]
name = "after_refine"
command = "true"
after = ["refine"]
"#,
    );
    let out = t.run_with(&["run"]);
    assert_code(&out, 1);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 2 instances of 3 tasks, + the instances of `refine` (known at run time)
        ✗ refine failed: `hits.json` cannot be expanded: it is not valid JSON at 2:0: EOF while parsing a list (workflow.toml:8:8)
        log:  flow log cat --failed
        report:  flow report
        run [RUN]: 1 succeeded, 1 failed, 1 cancelled in [TIME]
    ");
    let summary = last_summary(t.path());
    assert_eq!((summary["failed"].as_u64(), summary["cancelled"].as_u64()), (Some(1), Some(1)), "{summary}");
}

#[test]
fn changing_one_line_of_the_list_reruns_only_its_instance() {
    let t = Test::new().workflow(
        r#"
[vars]
list = "a b c d"

[[tasks]]
name = "list"
command = "for x in {{ vars.list }}; do echo $x; done > list.txt"
outputs = ["list.txt"]

[[tasks]]
name = "work"
each_line = "list.txt"
command = "mkdir -p out && echo {{ item }} > out/{{ index }}.txt"
outputs = ["out/{{ index }}.txt"]
"#,
    );
    assert_code(&t.run_with(&["run"]), 0);
    let out = t.run_with(&["run", "--var", "list=a b X d"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 1 instance of 2 tasks, + the instances of `work` (known at run time)
        + work: 4 instances from list.txt
        results: out/0.txt, out/1.txt, out/2.txt and 1 more
        log:  flow log list
        report:  flow report
        run [RUN]: 2 succeeded, 3 unchanged (skipped) in [TIME]
    ");
    assert_eq!(read(&t, "out/2.txt"), "X\n");
}

#[test]
fn kill_9_in_a_half_done_dynamic_stage_resumes_the_rest() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "list"
command = "seq 1 6 > list.txt"
outputs = ["list.txt"]

[[tasks]]
name = "slow"
each_line = "list.txt"
command = "mkdir -p done && if [ {{ item }} -gt 3 ] && [ ! -e go ]; then sleep 30; fi; echo {{ item }} >> ran.txt; touch done/{{ item }}"
outputs = ["done/{{ item }}"]
"#,
    );
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "6"], "flow.stderr");
    // Three instances done and recorded (the journal follows the files by a moment).
    let half = wait_for(Duration::from_secs(20), || {
        entries(&t.path().join("done")).len() == 3
            && statuses(&t, None).iter().filter(|(l, s)| l.starts_with("slow[") && *s == "succeeded").count() == 3
    });
    signal(flow.id(), "-KILL");
    let _ = wait_child(&mut flow, Duration::from_secs(5));
    assert!(half, "three instances never finished: {}", read(&t, "flow.stderr"));
    // The guard ends the killed run's sleeping tasks.
    let _ = wait_for(Duration::from_secs(5), || std::fs::metadata(t.path().join(".flow")).is_ok());
    let t = t.file("go", "").timeout(Duration::from_secs(60));
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    let mut ran: Vec<String> = read(&t, "ran.txt").lines().map(str::to_owned).collect();
    ran.sort();
    assert_eq!(ran, ["1", "2", "3", "4", "5", "6"], "each item ran once");
}

#[test]
fn dynamic_stages_are_checked_like_static_ones() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "select"
command = "echo a > hits.txt"
outputs = ["hits.txt"]
after = ["refine"]

[[tasks]]
name = "refine"
each_line = "hits.txt"
command = "echo {{ item }}"

[[tasks]]
name = "pick"
command = "true"
after = ["refine[1]"]
"#,
    );
    let err = t.run_with(&["check"]);
    assert_code(&err, 2);
    insta::assert_snapshot!(t.normalize(&err.stderr));
}

#[test]
fn the_hit_refinement_example_refines_every_hit() {
    let t = Test::new();
    copy_example(&crate::support::root().join("examples/workflows/hit-refinement"), t.path());
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 10 instances of 4 tasks, + the instances of `refine` (known at run time)
        + refine: 4 instances from hits.txt
        results: report.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 14 succeeded in [TIME]
    ");
    assert_eq!(read(&t, "report.txt"), "refined acetic-acid\nrefined benzene\nrefined isopropanol\nrefined pyridine\n");
    // A stricter threshold: fewer hits, and the refinement follows.
    let out = t.run_with(&["run", "--var", "threshold=84"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 10 instances of 4 tasks, + the instances of `refine` (known at run time)
        ~ refine: moved 2 outputs no instance writes any more (left by refine[2], refine[3]) to .flow/runs/[RUN]/stale/: refined/acetic-acid.txt, refined/isopropanol.txt
        + refine: 2 instances from hits.txt
        results: report.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 2 succeeded, 10 unchanged (skipped) in [TIME]
    ");
    assert_eq!(read(&t, "hits.txt"), "benzene\npyridine\n");
}

#[test]
fn graph_marks_a_stage_known_at_run_time() {
    let t = Test::new().workflow(&screening(4));
    let dot = t.success_with(&["graph"]);
    insta::assert_snapshot!(dot);
    let instances = t.success_with(&["graph", "--instances"]);
    insta::assert_snapshot!(instances);
}

#[test]
fn a_dynamic_stage_runs_on_remote_workers() {
    let t = Test::new().workflow(&screening(4));
    let (mut run, access) = crate::workers::start_run(&t, &["--no-local-worker"]);
    let mut worker = crate::workers::start_worker(&t, &access, &["--cpus", "2"], "worker.stderr");
    let code = crate::support::process::finish(&t, &mut run, Duration::from_secs(60));
    assert_eq!(code, 0, "{}", read(&t, "run.stderr"));
    let _ = wait_child(&mut worker, Duration::from_secs(10));
    insta::assert_snapshot!(t.normalize(&read(&t, "run.stderr")), @r"
        run [RUN]: 8 instances of 5 tasks, + the instances of `refine`, `report` (known at run time)
        workers join with: flow worker --access [DIR]/.flow/runs/[RUN]/access.json
        + worker 0 joined: [HOST] ([ADDR]), 2 cpus, 0 gpus
        + refine: 3 instances from hits.txt
        + report: 3 instances from hits.txt
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 14 succeeded in [TIME]
    ");
    assert_eq!(read(&t, "all.txt"), "refined 1\nrefined 4\nrefined 5\n");
}

#[test]
fn only_a_dynamic_stage_reruns_it_whole_and_what_follows() {
    let t = Test::new().workflow(&screening(4));
    assert_code(&t.run_with(&["run"]), 0);
    let out = t.run_with(&["run", "--only", "refine"]);
    assert_code(&out, 0);
    // refine's 3, report's 3 (they follow it) and combine; score and select skipped.
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 8 instances of 5 tasks, + the instances of `refine`, `report` (known at run time)
        + refine: 3 instances from hits.txt
        + report: 3 instances from hits.txt
        results: all.txt
        log:  flow log list
        report:  flow report
        run [RUN]: 7 succeeded, 7 unchanged (skipped) in [TIME]
    ");
    let refused = t.run_with(&["run", "--only", "refine[0]"]);
    assert_code(&refused, 2);
    insta::assert_snapshot!(t.normalize(&refused.stderr), @"error: `--only`: the instances of `refine` are known only when the run reaches it; select the whole task");
}

#[test]
fn a_dynamic_stage_has_resources_variants_and_retries() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "list"
command = "printf '1\n2\n3\n' > list.txt"
outputs = ["list.txt"]

[[tasks]]
name = "work"
each_line = "list.txt"
retries = 1
variants = [{ cpus = 64 }, { cpus = 2 }]
command = "if [ {{ attempt }} = 0 ] && [ {{ item }} = 2 ]; then exit 1; fi; echo $FLOW_CPUS > cpus{{ item }}.txt"
"#,
    );
    let out = t.run_with(&["run", "--cpus", "4", "--max-fails", "1"]);
    assert_code(&out, 0);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 1 instance of 2 tasks, + the instances of `work` (known at run time)
        + work: 3 instances from list.txt
        ! work[1] failed (exit code 1), retrying (attempt 1)
        log:  flow log list
        report:  flow report
        run [RUN]: 4 succeeded in [TIME]
    ");
    // The second variant fits the 4-cpu worker: two CPU ids each.
    assert_eq!(read(&t, "cpus2.txt").trim().split(',').count(), 2);
}

/// Issue 18: a glob input was rejected as matching nothing when only a task
/// whose instances are known at run time writes there (`out/{{ item }}`).
/// The glob now matches that task's output pattern, so the consumer waits
/// for every instance and reads all their files.
#[test]
fn a_glob_input_waits_for_a_task_known_only_at_run_time() {
    for output in ["out/{{ item }}", "out/{{ item }}.txt"] {
        let t = Test::new().workflow(&format!(
            r#"
[[tasks]]
name = "list"
command = "sleep 0.2; printf 'a.txt\nb.txt\nc.txt\n' > names.txt"
outputs = ["names.txt"]

[[tasks]]
name = "make"
each_line = "names.txt"
command = "sleep 0.3; echo made {{{{ item | shell_quote }}}} > {output_cmd}"
outputs = ["{output}"]

[[tasks]]
name = "gather"
command = "cat out/*.txt > all.txt"
inputs = ["out/*.txt"]
outputs = ["all.txt"]
"#,
            output_cmd = output.replace("{{ item }}", "{{ item | shell_quote }}")
        ));
        let check = t.success_with(&["check"]);
        assert_eq!(
            check,
            "ok: workflow (workflow.toml) — 3 tasks, 2 instances (+ 1 task known at run time), 2 edges\n"
        );
        let out = t.run_with(&["run"]);
        assert_code(&out, 0);
        assert_eq!(read(&t, "all.txt"), "made a.txt\nmade b.txt\nmade c.txt\n", "{output}");
    }
}
