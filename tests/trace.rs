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

/// Three one-CPU instances on one CPU, then one that waits for them all.
const QUEUED: &str = "[[tasks]]\nname = \"nap\"\nrange = \"1-3\"\ncommand = \"sleep 0.3\"\n\n\
     [[tasks]]\nname = \"last\"\nafter = [\"nap\"]\ncommand = \"true\"\n";

#[test]
fn the_trace_says_when_each_instance_was_ready_and_how_long_it_queued() {
    let t = Test::new().workflow(QUEUED);
    t.success_with(&["run", "--cpus", "1"]);
    let records = lines(&t.success_with(&["log", "list", "--json"]));
    assert_eq!(records.len(), 4, "{records:?}");
    let field = |r: &Value, name: &str| r[name].as_u64().unwrap_or_else(|| panic!("no {name}: {r}"));
    for r in &records {
        assert!(field(r, "ready_us") <= field(r, "started_us"), "ready after start: {r}");
    }
    // The naps were all ready at once and ran one after the other.
    let mut naps: Vec<u64> = records[..3].iter().map(|r| field(r, "queue_wait_us")).collect();
    naps.sort_unstable();
    assert!(naps[2] >= 500_000, "the last nap waited for two others: {records:?}");
    // `last` became ready when the last nap ended, not when the run began.
    let last_nap_end = records[..3].iter().map(|r| field(r, "ended_us")).max().unwrap();
    let last = &records[3];
    assert!(field(last, "ready_us") >= last_nap_end, "{last}");
    assert!(field(last, "queue_wait_us") < 500_000, "{last}");

    // The trace file has the same wait, in µs, and the ready time.
    let tsv = t.success_with(&["log", "list", "--format", "tsv", "--columns", "task,ready,queue_wait", "last"]);
    let row: Vec<&str> = tsv.lines().nth(1).expect("a row").split('\t').collect();
    assert_eq!(row[2], field(last, "queue_wait_us").to_string(), "{tsv}");
    assert!(row[1].ends_with('Z') && row[1].contains('T'), "{tsv}");

    // The summary has each task's median and longest wait.
    let summary: Value = serde_json::from_str(&t.success_with(&["log", "summary", "--json"])).expect("JSON");
    let nap = &summary["tasks"][0];
    assert_eq!(nap["task"], "nap", "{summary}");
    assert_eq!(nap["queue_wait_us"]["max"].as_u64(), Some(naps[2]), "{summary}");
    assert_eq!(nap["queue_wait_us"]["median"].as_u64(), Some(naps[1]), "{summary}");
    let text = t.success_with(&["log", "summary"]);
    assert!(text.contains("QUEUE WAIT"), "{text}");
}

#[test]
fn a_retry_is_ready_when_the_attempt_before_it_failed() {
    let t = Test::new().workflow(WORKFLOW);
    t.success_with(&["run", "--cpus", "2"]);
    let attempts = lines(&t.success_with(&["log", "list", "--json", "flaky"]));
    let [first, second] = &attempts[..] else { panic!("{attempts:?}") };
    let field = |r: &Value, name: &str| r[name].as_u64().unwrap_or_else(|| panic!("no {name}: {r}"));
    assert!(field(second, "ready_us") >= field(first, "ended_us"), "{attempts:?}");
    assert!(field(first, "ready_us") <= field(first, "started_us"), "{attempts:?}");
}

/// Whether `dir` is on a tmpfs, where written pages never go to storage.
fn on_tmpfs(dir: &std::path::Path) -> bool {
    let out = std::process::Command::new("stat").args(["-f", "-c", "%T"]).arg(dir).output().expect("stat");
    String::from_utf8_lossy(&out.stdout).trim() == "tmpfs"
}

#[cfg(target_os = "linux")]
#[test]
fn the_trace_has_the_bytes_a_task_wrote_and_its_peak_virtual_memory() {
    let workflow = "[[tasks]]\nname = \"write\"\n\
         command = \"dd if=/dev/zero of=blob bs=1M count=4 2>/dev/null; sleep 0.2\"\n";
    let t = Test::new().workflow(workflow);
    let out = t.success_with(&["run", "--json"]);
    let columns = "task,peak_vmem,read_bytes,write_bytes,rchar,wchar";
    let tsv = t.success_with(&["log", "list", "--format", "tsv", "--columns", columns]);
    let row: Vec<u64> = tsv.lines().nth(1).expect("a row").split('\t').skip(1).map(|c| c.parse().unwrap()).collect();
    let [peak_vmem, _read, write, _rchar, wchar] = row[..] else { panic!("{tsv}") };
    assert!(wchar >= 4 << 20, "{tsv}");
    if !on_tmpfs(t.path()) {
        assert!(write >= 4 << 20, "{tsv}");
    }
    assert!(peak_vmem > 1 << 20, "{tsv}");

    // `task_finished` carries the same numbers.
    let finished = lines(&out).into_iter().find(|e| e["event"] == "task_finished").expect("task_finished");
    assert_eq!(finished["metrics"]["wchar"].as_u64(), Some(wchar));
    assert_eq!(finished["metrics"]["write_bytes"].as_u64(), Some(write));
    assert_eq!(finished["metrics"]["peak_vmem_bytes"].as_u64(), Some(peak_vmem));
}
