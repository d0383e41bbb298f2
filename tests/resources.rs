//! `flow run` end to end on resources: CPUs, memory, custom resources and
//! GPUs are never oversubscribed, variants fall back, a request no worker
//! can satisfy is refused, and priority orders what starts.

use std::collections::BTreeSet;

use crate::run::assert_code;
use crate::support::Test;
use crate::support::process::{lines, read};

/// CPU ids this process may use (`Cpus_allowed_list`), as flow detects them.
fn allowed_cpus() -> Vec<u32> {
    let status = fs_err::read_to_string("/proc/self/status").expect("/proc/self/status");
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).expect("Cpus_allowed_list").trim();
    let mut ids = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => ids.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => ids.push(part.parse().unwrap()),
        }
    }
    ids
}

// 2
#[test]
fn cpus_are_never_oversubscribed() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "work"
range = "1-12"
cpus = 1
command = '''
mkdir lock-$FLOW_CPUS 2>/dev/null || echo "overlap on $FLOW_CPUS" >> overlaps
echo "$FLOW_CPUS" >> cpus.txt
sleep 0.1
rmdir lock-$FLOW_CPUS
'''
"#,
        )
        .args(["run", "--cpus", "2"]);
    assert_code(&t.run(), 0);
    assert!(!t.path().join("overlaps").exists(), "two tasks held one CPU at once: {}", read(&t, "overlaps"));
    let seen = lines(&t, "cpus.txt");
    assert_eq!(seen.len(), 12, "{seen:?}");
    let found = allowed_cpus();
    let expected: BTreeSet<String> = (0..2).map(|i| found.get(i).copied().unwrap_or(i as u32).to_string()).collect();
    let seen: BTreeSet<String> = seen.into_iter().collect();
    assert!(seen.is_subset(&expected), "FLOW_CPUS {seen:?} not within {expected:?}");
    assert_eq!(seen.len(), 2, "both CPUs are used: {seen:?}");
}

// 2, continued
#[test]
fn memory_and_custom_resources_are_limits_too() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "mem"
range = "1-4"
memory = "600 MiB"
command = "mkdir mem.lock 2>/dev/null || echo mem >> overlaps; sleep 0.1; rmdir mem.lock"

[[tasks]]
name = "licensed"
range = "1-4"
resources = { licence = 1 }
command = "mkdir lic.lock 2>/dev/null || echo licence >> overlaps; sleep 0.1; rmdir lic.lock"

[[tasks]]
name = "pair"
cpus = 2
command = "echo $FLOW_CPUS > pair.txt"
"#,
        )
        .args(["run", "--cpus", "2", "--memory", "1GiB", "--resource", "licence=1"]);
    assert_code(&t.run(), 0);
    assert!(!t.path().join("overlaps").exists(), "oversubscribed: {}", read(&t, "overlaps"));
    let found = allowed_cpus();
    let ids: Vec<String> = (0..2).map(|i| found.get(i).copied().unwrap_or(i as u32).to_string()).collect();
    assert_eq!(read(&t, "pair.txt").trim(), ids.join(","));
}

// 3
#[test]
fn quarter_gpus_share_one_device() {
    // 8 CPUs so that the GPU, not the CPUs, keeps the fifth instance waiting.
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "gpu"
range = "0-4"
gpus = 0.25
cpus = 1
command = '''
mkdir -p running live seen
touch running/$FLOW_INDEX live/$FLOW_INDEX
n=0
while [ "$(ls running | wc -l)" -lt 4 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n+1)); done
[ "$(ls running | wc -l)" -ge 4 ] || { echo "never saw four running" >&2; exit 1; }
sleep 0.3
ls live | wc -l >> concurrency
echo "$CUDA_VISIBLE_DEVICES $FLOW_GPUS" > seen/$FLOW_INDEX
rm live/$FLOW_INDEX
'''
"#,
        )
        .env("CUDA_VISIBLE_DEVICES", "0")
        .args(["run", "--cpus", "8"]);
    assert_code(&t.run(), 0);
    for i in 0..5 {
        assert_eq!(read(&t, &format!("seen/{i}")), "0 0\n", "gpu[{i}]");
    }
    let counts: Vec<u32> = lines(&t, "concurrency").iter().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(counts.len(), 5, "{counts:?}");
    assert!(counts.iter().all(|&n| n <= 4), "more than four quarter-GPU tasks at once: {counts:?}");
}

// 4
#[test]
fn variants_fall_back_when_there_is_no_gpu() {
    let workflow = r#"
[[tasks]]
name = "score"
command = "echo $FLOW_VARIANT > variant.txt"

[[tasks.variants]]
gpus = 1
cpus = 1

[[tasks.variants]]
cpus = 2
"#;
    let with_gpu = Test::new().workflow(workflow).env("CUDA_VISIBLE_DEVICES", "0").args(["run"]);
    assert_code(&with_gpu.run(), 0);
    assert_eq!(read(&with_gpu, "variant.txt"), "0\n");

    let without = Test::new().workflow(workflow).env("CUDA_VISIBLE_DEVICES", "").args(["run", "--cpus", "2"]);
    assert_code(&without.run(), 0);
    assert_eq!(read(&without, "variant.txt"), "1\n");
}

// 5
#[test]
fn a_request_no_worker_can_satisfy_is_invalid_input() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "small"
command = "touch small.done"

[[tasks]]
name = "big"
gpus = 2
command = "touch big.done"
"#,
        )
        .env("CUDA_VISIBLE_DEVICES", "0")
        .args(["run"])
        .stderr_normalized(
            r#"flow::compile::impossible_resources

  × task `big` can never run here: needs 2 gpus, the largest worker has 1
   ╭─[workflow.toml:8:8]
 7 │ name = "big"
 8 │ gpus = 2
   ·        ┬
   ·        ╰── cannot fit on any worker
 9 │ command = "touch big.done"
   ╰────
  help: lower the request, add a smaller variant, or describe a bigger worker (--cpus, --gpus,
        --memory, --resource)
error: 1 problem in workflow.toml
"#,
        );
    t.invalid();
    assert!(!t.path().join("big.done").exists());
    assert!(!t.path().join("small.done").exists(), "nothing runs when a task never can");
}

// 6
#[test]
fn higher_priority_runs_first() {
    let t = Test::new()
        .workflow(
            r#"
[[tasks]]
name = "low"
priority = 0
command = "echo low >> order.txt"

[[tasks]]
name = "mid"
priority = 5
command = "echo mid >> order.txt"

[[tasks]]
name = "high"
priority = 10
command = "echo high >> order.txt"
"#,
        )
        .args(["run", "--cpus", "1"]);
    assert_code(&t.run(), 0);
    assert_eq!(lines(&t, "order.txt"), ["high", "mid", "low"]);
}

/// A worker told how many GPUs it has does not run `nvidia-smi` to find
/// them: on every start of a worker it was a process of its own, and a
/// third of what a `flow worker --dry-exec --gpus 8` cost to start (issue
/// 28). One not told still runs it, and has the GPUs it lists.
#[test]
fn nvidia_smi_runs_only_when_the_number_of_gpus_is_not_given() {
    const FAKE: &str =
        "#!/bin/sh\necho ran >> \"$RECORD\"\necho 'GPU 0: Fake (UUID: GPU-a)'\necho 'GPU 1: Fake (UUID: GPU-b)'\n";
    for (flags, ran) in [(&["--gpus", "1"][..], false), (&[][..], true)] {
        let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ngpus = 1\ncommand = \"true\"\n");
        let record = t.path().join("record.txt");
        let path = crate::support::program_on_path(t.path(), "nvidia-smi", FAKE);
        let t = t.env("PATH", &path).env("RECORD", &record.display().to_string());
        let out = t.run_with(&[&["run"][..], flags].concat());
        assert_code(&out, 0);
        assert_eq!(record.exists(), ran, "{flags:?}: {}", out.stderr);
    }
}
