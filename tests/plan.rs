//! `flow plan`: the human summary and the JSON IR.

use crate::support::Test;

const PIPELINE: &str = r#"
name = "pipe"
[[tasks]]
name = "gen"
range = "1-4"
command = "echo {{ index }} > gen/{{ index }}.txt"
outputs = ["gen/{{ index }}.txt"]

[[tasks]]
name = "square"
for_each = "gen"
command = "x"
inputs = ["gen/{{ index }}.txt"]
outputs = ["sq/{{ index }}.txt"]
cpus = 2

[[tasks]]
name = "sum"
command = "cat sq/*.txt"
inputs = ["sq/*.txt"]

[[tasks]]
name = "chain"
range = "0-2"
command = "x"
after = ["{% if index > 0 %}chain[{{ index - 1 }}]{% endif %}"]
"#;

#[test]
fn summary_lists_tasks_edges_totals_and_critical_path() {
    let out = Test::new().workflow(PIPELINE).args(["plan"]).success();
    insta::assert_snapshot!(out);
}

#[test]
fn json_is_the_compact_ir() {
    let out = Test::new().workflow(PIPELINE).args(["plan", "--json"]).success();
    let ir: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let groups = ir["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 4);
    assert_eq!(
        groups[0]["domain"],
        serde_json::json!({ "kind": "range", "ranges": [{ "start": 1, "count": 4, "step": 1 }] })
    );
    assert_eq!(groups[1]["domain"]["kind"], "same");
    let kinds: Vec<&str> =
        ir["edges"].as_array().unwrap().iter().map(|e| e["kind"]["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["element_wise", "all", "explicit"]);
    let graph: flow_engine::ir::Graph = serde_json::from_str(&out).expect("deserializes into the IR");
    assert_eq!(graph.instance_count(), 12);
}

#[test]
fn a_million_instances_stay_one_group() {
    let text = "[[tasks]]\nname = \"big\"\nrange = \"1-1000000\"\ncommand = \"echo {{ index }}\"\n";
    let out = Test::new().workflow(text).args(["plan", "--json"]).success();
    assert!(out.len() < 2_000, "IR of a 1,000,000-instance range is {} bytes", out.len());
    let ir: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(ir["groups"][0]["domain"]["ranges"][0]["count"], 1_000_000, "{ir}");
}

const SCRIPTED: &str = r#"
[[tasks]]
name = "gen"
range = "1-4"
command = "echo {{ index }} > g{{ index }}.txt"
outputs = ["g{{ index }}.txt"]

[[tasks]]
name = "use"
for_each = "gen"
command = "sh scripts/use.sh g{{ index }}.txt > u{{ index }}.txt"
inputs = ["g{{ index }}.txt"]
outputs = ["u{{ index }}.txt"]

[[tasks]]
name = "sum"
command = "cat u*.txt > sum.txt; exit $(cat fail 2>/dev/null || echo 0)"
inputs = ["u*.txt"]
outputs = ["sum.txt"]
"#;

/// `flow plan --why --json`: task → the plan's object for it.
fn why(t: &Test) -> std::collections::BTreeMap<String, serde_json::Value> {
    t.success_with(&["plan", "--why", "--json"])
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON line"))
        .map(|v| (v["task"].as_str().expect("task").to_owned(), v))
        .collect()
}

#[test]
fn plan_why_says_what_would_run_and_why_and_the_run_agrees() {
    let t = Test::new().workflow(SCRIPTED).file("scripts/use.sh", "cat $1\n");
    let fresh = why(&t);
    assert_eq!(fresh["gen"]["reasons"][0]["reason"], "new", "{fresh:?}");
    assert_eq!(fresh["use"]["implicit_inputs"][0], "scripts/use.sh", "{fresh:?}");
    assert_eq!(t.run_with(&["run"]).code, 0);
    let t = t.file("g3.txt", "edited\n");
    fs_err::remove_file(t.path().join("u2.txt")).expect("rm");
    let plan = t.success_with(&["plan", "--why"]);
    // g3.txt is gen[3]'s output, edited by hand: not trusted (issue 18).
    insta::assert_snapshot!(t.normalize(&plan), @r"
        gen: 1 of 4 would run, 3 unchanged
          1 output `g3.txt` changed since it was written: gen[3]
        use: 2 of 4 would run, 2 unchanged
          1 output `u2.txt` missing: use[2]
          1 after `gen`, which runs first: use[3]
          scripts counted as inputs: scripts/use.sh
        sum: 1 of 1 would run, 0 unchanged
          1 after `use`, which runs first: sum
    ");
    let planned = why(&t);
    assert_eq!(t.run_with(&["run"]).code, 0);
    let ran = crate::run::statuses(&t, None);
    // Exact, except that what waits for a rerun upstream is counted as
    // running: gen[3] writes g3.txt's old bytes again, so use[3] and sum
    // are skipped by the run (early cut-off).
    for (task, p) in &planned {
        let succeeded = ran.iter().filter(|(l, s)| l.split('[').next() == Some(task) && *s == "succeeded").count();
        let after = p["reasons"].as_array().map_or(0, |r| {
            r.iter().filter(|r| r["reason"] == "after_upstream").map(|r| r["count"].as_u64().unwrap_or(0)).sum()
        });
        let run = p["run"].as_u64().unwrap_or(0);
        assert!(run - after <= succeeded as u64 && succeeded as u64 <= run, "{task}: plan {p} vs run {ran:?}");
    }
    assert_eq!(ran["use[3]"], "cached", "{ran:?}");
}

#[test]
fn plan_why_names_changed_commands_scripts_and_failures() {
    let t = Test::new().workflow(SCRIPTED).file("scripts/use.sh", "cat $1\n").file("fail", "3\n");
    assert_eq!(t.run_with(&["run"]).code, 1);
    let plan = t.success_with(&["plan", "--why"]);
    insta::assert_snapshot!(t.normalize(&plan), @r"
        gen: 0 of 4 would run, 4 unchanged
        use: 0 of 4 would run, 4 unchanged
          scripts counted as inputs: scripts/use.sh
        sum: 1 of 1 would run, 0 unchanged
          1 failed last time: sum
    ");
    let t = t.file("scripts/use.sh", "cat $1; echo more\n");
    let plan = t.success_with(&["plan", "--why"]);
    insta::assert_snapshot!(t.normalize(&plan), @r"
        gen: 0 of 4 would run, 4 unchanged
        use: 4 of 4 would run, 0 unchanged
          4 input `scripts/use.sh` changed: use[1], use[2], use[3], …
          scripts counted as inputs: scripts/use.sh
        sum: 1 of 1 would run, 0 unchanged
          1 after `use`, which runs first: sum
    ");
    let t = t.file("workflow.toml", &SCRIPTED.replace("echo {{ index }} >", "echo v2 {{ index }} >"));
    let plan = t.success_with(&["plan", "--why"]);
    insta::assert_snapshot!(t.normalize(&plan), @r"
        gen: 4 of 4 would run, 0 unchanged
          4 command changed: gen[1], gen[2], gen[3], …
        use: 4 of 4 would run, 0 unchanged
          4 after `gen`, which runs first: use[1], use[2], use[3], …
          scripts counted as inputs: scripts/use.sh
        sum: 1 of 1 would run, 0 unchanged
          1 after `use`, which runs first: sum
    ");
    fs_err::remove_file(t.path().join("fail")).expect("rm");
    let t = t.file("workflow.toml", SCRIPTED);
    let plan = t.success_with(&["plan", "--why"]);
    insta::assert_snapshot!(t.normalize(&plan), @r"
        gen: 0 of 4 would run, 4 unchanged
        use: 4 of 4 would run, 0 unchanged
          4 input `scripts/use.sh` changed: use[1], use[2], use[3], …
          scripts counted as inputs: scripts/use.sh
        sum: 1 of 1 would run, 0 unchanged
          1 after `use`, which runs first: sum
    ");
}

/// Issue 18: `flow plan --why` lists the scripts it counts as inputs,
/// found from the task's `cwd`, and notes those it cannot track.
#[test]
fn plan_why_lists_scripts_from_the_cwd_and_notes_untracked_ones() {
    let t = Test::new()
        .workflow("[[tasks]]\nname = \"t\"\ncwd = \"sub\"\ncommand = \"sh s.sh; sh $PWD/helper.sh\"\n")
        .file("sub/s.sh", "echo one\n")
        .file("sub/helper.sh", "echo two\n");
    t.args(["plan", "--why"])
        .stdout(
            "t: 1 of 1 would run, 0 unchanged\n  \
             1 new: t\n  \
             scripts counted as inputs: sub/s.sh\n  \
             note: `t` runs `$PWD/helper.sh` (the shell expands it), which flow does not track: editing it does \
             not rerun the task; to track it, add its path from the workflow directory to the task's `inputs`\n",
        )
        .stderr("")
        .success();
}

/// `--instances` names every instance that would run with its reason, so a
/// script (or the model check) can use the exact set (issue 18).
#[test]
fn plan_why_instances_names_each_one() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"gen\"\nrange = \"1-3\"\ncommand = \"echo {{ index }} > g{{ index }}.txt\"\noutputs = [\"g{{ index }}.txt\"]\n",
    );
    assert_eq!(t.run_with(&["run"]).code, 0);
    fs_err::remove_file(t.path().join("g2.txt")).expect("rm");
    let t = t.file("g3.txt", "edited\n");
    assert_eq!(
        t.success_with(&["plan", "--why", "--instances"]),
        "gen: 2 of 3 would run, 1 unchanged\n  gen[2]: output `g2.txt` missing\n  gen[3]: output `g3.txt` changed since it was written\n"
    );
    let json: serde_json::Value =
        serde_json::from_str(&t.success_with(&["plan", "--why", "--instances", "--json"])).expect("JSON");
    assert_eq!(
        json["instances_run"],
        serde_json::json!([
            {"label": "gen[2]", "reason": "output_missing", "detail": "g2.txt", "text": "output `g2.txt` missing"},
            {"label": "gen[3]", "reason": "output_changed", "detail": "g3.txt", "text": "output `g3.txt` changed since it was written"}
        ])
    );
}

/// Issue 27: `flow plan --command SELECTOR` prints each named instance's
/// command as the shell gets it — `cd`, the variables added, the program
/// and its redirections — for an instance range, in the order named; an
/// index the task does not have, and a task whose instances are known only
/// at run time, are usage errors.
#[test]
fn plan_command_prints_what_the_shell_gets() {
    let t = Test::new()
        .workflow(
            r#"
[vars]
greeting = "it's"

[[tasks]]
name = "greet"
range = "1-3"
env = { WHO = "world {{ index }}" }
stdin = "in.txt"
stdout = "out/{{ index }}.txt"
command = "echo {{ vars.greeting | shell_quote }} $WHO"

[[tasks]]
name = "list"
command = "printf 'a\nb\n' > items.txt"
outputs = ["items.txt"]

[[tasks]]
name = "each"
each_line = "items.txt"
command = "echo {{ item }}"
"#,
        )
        .file("in.txt", "")
        .args(["plan", "--command", "greet[3,1]"]);
    let out = t.status(0);
    let dir = t.path().canonicalize().unwrap();
    let script = |i: u32| {
        format!(
            "# greet[{i}]\ncd [DIR]\nenv \\\n  'WHO=world {i}' \\\n  FLOW_TASK=greet \\\n  FLOW_INDEX={i} \\\n  \
             FLOW_ITEM={i} \\\n  FLOW_INSTANCE=0 \\\n  FLOW_RUN_DIR=[DIR]/.flow/runs/RUN_ID \\\n  FLOW_VARIANT=0 \\\n  \
             FLOW_CPUS= \\\n  FLOW_GPUS= \\\n  CUDA_VISIBLE_DEVICES= \\\n  \
             sh -c 'echo '\\''it'\\''\\'\\'''\\''s'\\'' $WHO' < [DIR]/in.txt > [DIR]/out/{i}.txt\n"
        )
    };
    let shown = crate::support::normalize::normalize_in(&out.stdout, &dir);
    assert_eq!(shown, format!("{}\n{}", script(1), script(3)));

    let bad = t.run_with(&["plan", "--command", "greet[7]"]);
    let expected = "error: `greet[7]` in this workflow: `greet` has no instance with index 7 (its indices: 1-3)\n";
    assert_eq!((bad.code, bad.stderr.as_str()), (2, expected));
    let later = t.run_with(&["plan", "--command", "each"]);
    let expected = "error: `each`: the instances of `each` are known only when `list` has run\n";
    assert_eq!((later.code, later.stderr.as_str()), (2, expected));
}
