//! Issue 27: `flow clean` removes old run directories and keeps what a new
//! run reads to decide what to skip: the newest run, live runs, and every
//! run an instance's last result stands on.

use std::time::Duration;

use crate::run::run_ids;
use crate::support::Test;
use crate::support::normalize::normalize;
use crate::support::process::{read, spawn_flow, wait_child, wait_for};

/// Three instances whose command follows `-v v=…`, and one that never changes.
const WORKFLOW: &str = r#"
[vars]
v = 1

[[tasks]]
name = "a"
range = "1-3"
command = "echo {{ index }} {{ vars.v }} > a{{ index }}.txt"
outputs = ["a{{ index }}.txt"]

[[tasks]]
name = "b"
command = "echo b > b.txt"
outputs = ["b.txt"]
"#;

/// Four runs: `b` did its work in the first, `a` in the second; the third
/// and fourth skipped everything. The third is the only one no instance
/// stands on and not the newest: `flow clean` removes it alone, and the
/// next run still skips every instance, and `flow log cat` still finds the
/// output of the runs that did the work.
#[test]
fn clean_removes_only_runs_no_new_run_reads() {
    let t = Test::new().workflow(WORKFLOW);
    for vars in [&["-v", "v=1"][..], &["-v", "v=2"], &["-v", "v=2"], &["-v", "v=2"]] {
        t.success_with(&[&["run"][..], vars].concat());
    }
    let ids = run_ids(t.path());
    let plan_before = t.success_with(&["plan", "--why", "-v", "v=2"]);

    let dry = normalize(&t.success_with(&["clean", "--dry-run"]));
    assert_eq!(
        dry,
        "kept run [RUN]: it holds the last result of 1 instance\n\
         kept run [RUN]: it holds the last result of 3 instances\n\
         would remove run [RUN] ([SIZE])\n\
         kept run [RUN]: the newest\n\
         would remove 1 run ([SIZE]), keep 3\n"
    );
    assert_eq!(run_ids(t.path()), ids, "--dry-run removed a run");

    let json: serde_json::Value = serde_json::from_str(&t.success_with(&["clean", "--json"])).unwrap();
    assert_eq!(json["dry_run"], false);
    assert_eq!(json["removed"][0]["run_id"], ids[2].as_str(), "{json}");
    let kept: Vec<(&str, &str)> = json["kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["run_id"].as_str().unwrap(), k["kept"].as_str().unwrap()))
        .collect();
    assert_eq!(kept, [(ids[0].as_str(), "in_use"), (ids[1].as_str(), "in_use"), (ids[3].as_str(), "newest")]);
    assert_eq!(json["bytes"], json["removed"][0]["bytes"]);
    let left: Vec<String> = [0, 1, 3].map(|i| ids[i].clone()).into();
    assert_eq!(run_ids(t.path()), left);

    // Nothing a new run reads went away.
    assert_eq!(t.success_with(&["plan", "--why", "-v", "v=2"]), plan_before);
    assert_eq!(t.success_with(&["log", "cat", "b"]), "");
    t.success_with(&["run", "-v", "v=2"]);
    assert_eq!(crate::run::last_summary(t.path())["cached"], 4);
    assert_eq!(
        normalize(&t.success_with(&["clean"])),
        "kept run [RUN]: it holds the last result of 1 instance\n\
         kept run [RUN]: it holds the last result of 3 instances\n\
         removed run [RUN] ([SIZE])\n\
         kept run [RUN]: the newest\n\
         removed 1 run ([SIZE]), kept 3\n"
    );
}

/// `flow clean` never removes a run in progress (its lock is held).
#[test]
fn clean_keeps_a_live_run() {
    let t = Test::new().workflow("[[tasks]]\nname = \"slow\"\ncommand = \"touch started; sleep 30\"\n");
    let mut flow = spawn_flow(t.path(), &["run"], "flow.stderr");
    assert!(wait_for(Duration::from_secs(10), || t.path().join("started").exists()), "{}", read(&t, "flow.stderr"));
    let out = normalize(&t.success_with(&["clean"]));
    assert_eq!(out, "kept run [RUN]: it is running\nremoved 0 runs (0 B), kept 1\n");
    crate::support::process::signal(flow.id(), "-INT");
    wait_child(&mut flow, Duration::from_secs(10)).expect("flow stops on SIGINT");
    assert_eq!(run_ids(t.path()).len(), 1);
}
