//! The trace fields of `flow log list` (fingerprint, %cpu, what the
//! variant asked for) and the metrics on `flow run --json`'s
//! `task_finished` events, read through the CLI.

use serde_json::Value;

use crate::support::Test;

/// Two tasks: one that asks for 2 CPUs, 1 GiB and 10 minutes and burns
/// some CPU time, one that fails once and then succeeds.
const WORKFLOW: &str = "[[tasks]]\nname = \"burn\"\ncpus = 2\nmemory = \"1 GiB\"\ntime_request = \"10m\"\n\
     command = \"i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done\"\n\n\
     [[tasks]]\nname = \"flaky\"\nretries = 1\n\
     command = \"if [ -e once ]; then exit 0; fi; touch once; exit 3\"\n";

fn lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

#[test]
fn task_finished_events_carry_the_attempts_metrics() {
    let t = Test::new().workflow(WORKFLOW);
    let out = t.success_with(&["run", "--cpus", "2", "--json"]);
    let finished: Vec<Value> = lines(&out).into_iter().filter(|e| e["event"] == "task_finished").collect();
    assert_eq!(finished.len(), 3, "{finished:?}");
    for e in &finished {
        let m = &e["metrics"];
        assert!(m["wall_us"].as_u64().is_some_and(|w| w > 0), "{e}");
        assert_eq!(m["cpu_us"].as_u64(), Some(m["user_us"].as_u64().unwrap() + m["system_us"].as_u64().unwrap()));
        assert!(m["started_us"].as_u64() <= m["ended_us"].as_u64(), "{e}");
        assert_eq!(m["variant"], 0, "{e}");
    }
    let burn = finished.iter().find(|e| e["label"] == "burn").expect("burn");
    assert_eq!(burn["metrics"]["cpu_ids"].as_array().map(Vec::len), Some(2), "{burn}");

    // What --json said on the way is what the journal kept.
    let listed = lines(&t.success_with(&["log", "list", "--json", "burn"]));
    assert_eq!(listed[0]["wall_us"], burn["metrics"]["wall_us"]);
    assert_eq!(listed[0]["rss_bytes"], burn["metrics"]["rss_bytes"]);
}

#[test]
fn a_dry_run_finishes_tasks_without_metrics() {
    let t = Test::new().workflow(WORKFLOW);
    let out = t.success_with(&["run", "--dry-exec", "--json"]);
    let finished: Vec<Value> = lines(&out).into_iter().filter(|e| e["event"] == "task_finished").collect();
    assert_eq!(finished.len(), 2, "{finished:?}");
    assert!(finished.iter().all(|e| e["metrics"].is_null()), "{finished:?}");
}

#[test]
fn the_trace_has_fingerprints_cpu_percent_and_what_was_asked_for() {
    let t = Test::new().workflow(WORKFLOW);
    t.success_with(&["run", "--cpus", "2"]);
    let columns = "task,attempt,state,fingerprint,pcpu,req_cpus,req_gpus,req_memory,req_time";
    let tsv = t.success_with(&["log", "list", "--format", "tsv", "--columns", columns]);
    let rows: Vec<Vec<&str>> = tsv.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows[0], columns.split(',').collect::<Vec<_>>());
    let (burn, failed, retried) = (&rows[1], &rows[2], &rows[3]);
    assert_eq!(burn[..3], ["burn", "0", "succeeded"]);
    assert_eq!(burn[5..], ["2", "0", "1073741824", "600000000"], "{tsv}");
    assert_eq!((failed[2], failed[3]), ("failed", ""), "a failure has no fingerprint: {tsv}");
    assert_eq!(failed[5..], ["1", "0", "0", ""], "{tsv}");
    assert_eq!(retried[..3], ["flaky", "1", "succeeded"]);
    for row in [burn, retried] {
        assert!(row[3].len() == 64 && row[3].bytes().all(|b| b.is_ascii_hexdigit()), "{tsv}");
    }
    let pcpu: f64 = burn[4].parse().expect("a number");
    assert!(pcpu > 0.0, "{tsv}");

    // The same fingerprint in a table, shortened, and in JSON, whole.
    let table = t.success_with(&["log", "list", "--columns", "task,fingerprint", "burn"]);
    assert_eq!(table, format!("TASK  FINGERPRINT\nburn  {}\n", &burn[3][..12]));
    let json = lines(&t.success_with(&["log", "list", "--json", "burn"]));
    assert_eq!(json[0]["fingerprint"], burn[3]);
    assert_eq!(json[0]["requested_memory_bytes"], 1u64 << 30);
}
