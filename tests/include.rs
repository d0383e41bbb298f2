//! `include`: another file's vars, templates and tasks under a namespace,
//! its paths relative to it, and its problems shown in it.

use crate::support::Test;

/// A library in a subdirectory with a script, inputs and outputs relative
/// to it, a template, defaults, and a nested YAML include of its own.
fn screening() -> Test {
    Test::new()
        .workflow(
            r#"include = [{ path = "lib/ligen.toml", vars = { receptor = "r.pdb" } }]

[defaults]
retries = 3

[[tasks]]
name = "report"
use = "ligen.small"
after = ["ligen.score"]
inputs = ["lib/scores/2.txt"]
command = "cat lib/scores/*.txt > all.txt"
outputs = ["all.txt"]
"#,
        )
        .file(
            "lib/ligen.toml",
            r#"include = ["prep/make.yaml"]

[vars]
receptor = "default.pdb"
label = "L"

[defaults]
retries = 1

[templates.small]
cpus = 0.5

[[tasks]]
name = "score"
use = "small"
range = "1-2"
after = ["make.data"]
inputs = ["data.txt"]
outputs = ["scores/{{ index }}.txt"]
command = "./score.sh {{ vars.receptor }} {{ vars.label }} {{ index }} > scores/{{ index }}.txt"
"#,
        )
        .file("lib/score.sh", "#!/bin/sh\necho \"$1 $2 $3 $(cat data.txt)\"\n")
        .file("lib/scores/.keep", "")
        .file(
            "lib/prep/make.yaml",
            "vars:\n  n: 3\ntasks:\n  - name: data\n    command: echo made {{ vars.n }} > ../data.txt\n    outputs: [\"../data.txt\"]\n",
        )
}

fn make_executable(t: &Test, path: &str) {
    use std::os::unix::fs::PermissionsExt;
    let file = t.path().join(path);
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn an_included_file_runs_under_its_namespace_with_its_own_paths() {
    let t = screening().args(["run"]).expect_file("all.txt", "r.pdb L 1 made 3\nr.pdb L 2 made 3\n");
    make_executable(&t, "lib/score.sh");
    t.success();
    let list = t.success_with(&["log", "list"]);
    let tasks: Vec<&str> = list.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(tasks, ["ligen.make.data", "ligen.score[1]", "ligen.score[2]", "report"]);
    let plan = t.success_with(&["plan"]);
    assert!(plan.contains("critical path: 3 tasks (ligen.make.data → ligen.score → report)"), "{plan}");
}

#[test]
fn the_command_line_sets_an_included_files_variables_by_namespace() {
    let t = screening()
        .args(["run", "-v", "ligen.label=X", "-v", "receptor=ignored"])
        .expect_file("all.txt", "r.pdb X 1 made 3\nr.pdb X 2 made 3\n");
    make_executable(&t, "lib/score.sh");
    t.success();
    t.success_with(&["run", "-v", "ligen.make.n=4", "-v", "ligen.receptor=s.pdb"]);
    assert_eq!(crate::support::process::read(&t, "all.txt"), "s.pdb L 1 made 4\ns.pdb L 2 made 4\n");
}

#[test]
fn defaults_apply_to_the_tasks_of_their_own_file() {
    let t = screening();
    let plan: serde_json::Value = serde_json::from_str(&t.success_with(&["plan", "--json"])).expect("plan --json");
    let groups = plan["groups"].as_array().expect("groups");
    let of = |name: &str| groups.iter().find(|g| g["name"] == name).expect(name);
    assert_eq!(of("report")["retries"], 3);
    assert_eq!(of("ligen.score")["retries"], 1);
    assert_eq!(of("ligen.make.data")["retries"], 0);
    assert_eq!(of("report")["variants"][0]["cpus"], 0.5, "`use` of an included template");
    assert_eq!(of("ligen.score")["source"], serde_json::json!({ "file": "lib/ligen.toml", "line": 14 }));
    assert_eq!(of("ligen.make.data")["source"], serde_json::json!({ "file": "lib/prep/make.yaml", "line": 4 }));
    assert_eq!(of("report").get("source"), None);
    assert_eq!(of("ligen.score")["template"]["cwd"], "lib");
    assert_eq!(of("ligen.make.data")["template"]["cwd"], "lib/prep");
    assert_eq!(of("ligen.score")["template"]["outputs"][0], "lib/scores/{{ index }}.txt");
}

#[test]
fn a_yaml_workflow_includes_a_toml_file_under_the_name_it_gives() {
    Test::new()
        .file(
            "workflow.yaml",
            "include:\n  - path: tools/hello.toml\n    as: hi\ntasks:\n  - name: last\n    after: [hi.greet]\n    command: cat tools/greeting.txt\n",
        )
        .file(
            "tools/hello.toml",
            "[[tasks]]\nname = \"greet\"\ncommand = \"echo hello > greeting.txt\"\noutputs = [\"greeting.txt\"]\n",
        )
        .args(["run", "workflow.yaml"])
        .expect_file("tools/greeting.txt", "hello\n")
        .success();
}

/// What `flow check` prints for `t`'s workflow, which it must reject.
fn check(t: Test) -> String {
    t.args(["check"]).invalid()
}

#[test]
fn a_problem_in_an_included_file_is_shown_there_with_the_include_chain() {
    let t = Test::new()
        .workflow("name = \"w\"\ninclude = [\"lib/outer.toml\"]\n\n[[tasks]]\nname = \"a\"\ncommand = \"true\"\n")
        .file("lib/outer.toml", "include = [{ path = \"inner/x.yaml\", as = \"x\" }]\n")
        .file("lib/inner/x.yaml", "tasks:\n  - name: t\n    comand: echo\n    cpus: many\n");
    insta::assert_snapshot!("problem_in_nested_include", check(t));
}

#[test]
fn include_mistakes_are_reported_together() {
    let t = Test::new()
        .workflow(
            r#"include = [
    "lib/ligenn.toml",
    { path = "lib/ligen.toml", vars = { receptr = 1 } },
    "other/ligen.toml",
    { path = "lib/ligen.toml", as = "a" },
    { path = "lib/ligen.toml", as = "my.lib" },
]

[[tasks]]
name = "a"
after = ["ligen.scroe"]
command = "true"

[[tasks]]
name = "b.c"
command = "true"
"#,
        )
        .file("lib/ligen.toml", "[vars]\nreceptor = 1\n\n[[tasks]]\nname = \"score\"\ncommand = \"true\"\n")
        .file("other/ligen.toml", "[[tasks]]\nname = \"score\"\ncommand = \"true\"\n");
    insta::assert_snapshot!("include_mistakes", check(t));
}

#[test]
fn an_include_cycle_is_a_diagnostic_at_the_include_that_closes_it() {
    let t = Test::new()
        .workflow("include = [\"a.toml\"]\n\n[[tasks]]\nname = \"t\"\ncommand = \"true\"\n")
        .file("a.toml", "include = [\"lib/b.toml\"]\n\n[[tasks]]\nname = \"t\"\ncommand = \"true\"\n")
        .file("lib/b.toml", "include = [\"../a.toml\"]\n\n[[tasks]]\nname = \"t\"\ncommand = \"true\"\n");
    insta::assert_snapshot!("include_cycle", check(t));
}

#[test]
fn check_json_names_the_included_file() {
    let t = Test::new()
        .workflow("include = [\"lib/x.toml\"]\n\n[[tasks]]\nname = \"t\"\ncommand = \"true\"\n")
        .file("lib/x.toml", "[[tasks]]\nname = \"u\"\ncpus = -1\ncommand = \"true\"\n");
    let out = t.run_with(&["check", "--json"]);
    assert_eq!(out.code, 2);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("check --json");
    let d = &report["diagnostics"][0];
    assert_eq!((&d["file"], &d["line"], &d["column"]), (&"lib/x.toml".into(), &3.into(), &8.into()), "{report}");
    assert!(d["help"].as_str().is_some_and(|h| h.ends_with("included from workflow.toml:1:12")), "{report}");
}

/// Keys that hold for the whole run are the including file's to set; an
/// included file's image file is relative to it, like its other paths.
#[test]
fn run_keys_belong_to_the_including_file_and_image_files_are_relative() {
    let t = Test::new().workflow("include = [\"lib/x.toml\"]\n\n[[tasks]]\nname = \"a\"\ncommand = \"true\"\n").file(
        "lib/x.toml",
        "max_fails = 2\n\n[finally]\ncommand = \"true\"\n\n[[tasks]]\nname = \"t\"\ncommand = \"true\"\n",
    );
    insta::assert_snapshot!("include_run_keys", check(t));
    let t = Test::new()
        .workflow("include = [\"lib/x.toml\"]\n")
        .file("lib/x.toml", "[[tasks]]\nname = \"t\"\ncontainer = \"img.sif\"\ncommand = \"true\"\n");
    let plan: serde_json::Value = serde_json::from_str(&t.success_with(&["plan", "--json"])).expect("JSON");
    let group = &plan["groups"][0];
    assert_eq!((&group["name"], &group["template"]["container"]), (&"x.t".into(), &"lib/img.sif".into()), "{group}");
}

/// A condition in an included file reads that file's variables, set by
/// the command line through its namespace; `[finally]` reads the root's.
#[test]
fn a_condition_in_an_included_file_reads_its_own_variables() {
    let t = Test::new()
        .workflow(
            "include = [\"lib/x.toml\"]\n\n[vars]\nenabled = false\nword = \"root\"\n\n\
             [finally]\ncommand = \"echo {{ vars.word }} > finally.txt\"\n\n\
             [[tasks]]\nname = \"a\"\ncommand = \"true\"\n",
        )
        .file(
            "lib/x.toml",
            "[vars]\nenabled = true\nword = \"lib\"\n\n[[tasks]]\nname = \"t\"\nwhen = \"{{ vars.enabled }}\"\n\
             command = \"echo ran > t.txt\"\noutputs = [\"t.txt\"]\n",
        );
    let plan: serde_json::Value = serde_json::from_str(&t.success_with(&["plan", "--json"])).expect("JSON");
    assert_eq!(plan["dropped"], serde_json::Value::Null, "{plan}");
    let plan: serde_json::Value =
        serde_json::from_str(&t.success_with(&["plan", "--json", "-v", "x.enabled=false"])).expect("JSON");
    assert_eq!(plan["dropped"][0]["name"], "x.t", "{plan}");
    t.args(["run"]).expect_file("lib/t.txt", "ran\n").expect_file("finally.txt", "root\n").success();
}

/// Issue 27: `after = ["top"]` for a task that an included file names
/// `top` (so it is `qc.top` here) suggests `qc.top`.
#[test]
fn after_a_name_without_its_namespace_suggests_it() {
    let err = Test::new()
        .workflow("include = [\"lib/qc.toml\"]\n\n[[tasks]]\nname = \"align\"\nafter = [\"top\"]\ncommand = \"true\"\n")
        .file("lib/qc.toml", "[[tasks]]\nname = \"top\"\ncommand = \"true\"\n")
        .args(["check"])
        .invalid();
    assert!(err.contains("× `after` names unknown task `top`\n"), "{err}");
    assert!(err.contains("  help: did you mean `qc.top`?\n"), "{err}");
}
