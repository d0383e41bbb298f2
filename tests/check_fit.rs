//! `flow check` against a worker described on the command line
//! (`--cpus`, `--gpus`, `--memory`, `--resource`) or a profile's queue —
//! each with exactly what it prints.

use crate::support::Test;

/// What `flow check` prints when task `a`, the first in the file, fits no
/// worker described on the command line: pointed at the key of the
/// resource that is short (issue 27: it pointed at the task's name), which
/// `at` draws.
fn does_not_fit(message: &str, at: &str) -> String {
    format!(
        r#"flow::compile::impossible_resources

  × {message}
{at}   ╰────
  help: lower the request, add a smaller variant, or describe a bigger worker (--cpus, --gpus,
        --memory, --resource)
error: 1 problem in workflow.toml
"#
    )
}

/// The snippet of a `KEY = VALUE` line 4 (after `command = "x"`), its value
/// at column `col` and `width` characters wide.
fn line_4(text: &str, col: usize, width: usize) -> String {
    let (pad, mid) = (" ".repeat(col - 1), width / 2);
    let underline = if width == 1 {
        "┬".to_owned()
    } else {
        format!("{}┬{}", "─".repeat(mid), "─".repeat(width - mid - 1))
    };
    format!(
        "   ╭─[workflow.toml:4:{col}]\n 3 │ command = \"x\"\n 4 │ {text}\n   · {pad}{underline}\n   · {pad}{}╰── cannot fit on any worker\n",
        " ".repeat(mid)
    )
}

#[test]
fn resources_must_fit_the_described_worker() {
    let text = r#"
[[tasks]]
name = "score"
command = "x"
cpus = 8
[[tasks.variants]]
gpus = 1
cpus = 1
[[tasks.variants]]
cpus = 8
"#;
    for worker in [["--cpus", "8", "--gpus", "0"], ["--cpus", "2", "--gpus", "1"]] {
        Test::new()
            .workflow(text)
            .args(["check"])
            .args(worker)
            .stdout("ok: workflow (workflow.toml) — 1 task, 1 instance, 0 edges\n")
            .stderr("")
            .success();
    }
    Test::new()
        .workflow(text)
        .args(["check", "--cpus", "4", "--gpus", "0"])
        .stdout("")
        .stderr(
            r#"flow::compile::impossible_resources

  × no variant fits: variant 1 needs 1 gpu, the largest worker has 0; variant 2 needs 8 cpus, the
  │ largest worker has 4
   ╭─[workflow.toml:6:1]
 5 │ cpus = 8
 6 │ [[tasks.variants]]
   · ─────────┬────────
   ·          ╰── cannot fit on any worker
 7 │ gpus = 1
   ╰────
  help: lower the request, add a smaller variant, or describe a bigger worker (--cpus, --gpus,
        --memory, --resource)
error: 1 problem in workflow.toml
"#,
        )
        .invalid();
    Test::new()
        .workflow("[[tasks]]\nname = \"a\"\ncommand = \"x\"\nresources = { fpga = 2 }\n")
        .args(["check", "--resource", "fpga=1"])
        .stdout("")
        .stderr(&does_not_fit(
            "the request needs 2 `fpga`, the largest worker has 1",
            &line_4("resources = { fpga = 2 }", 22, 1),
        ))
        .invalid();
}

/// Issue 13: `flow check --cpus` said "8 cpus > 4"; it now says what is
/// short in the scheduler's words, with the right plural, and a fraction
/// of a CPU fits a worker described with that fraction.
#[test]
fn a_request_too_big_for_the_described_worker_is_a_sentence() {
    let too_big = |request: &str, worker: &[&str], message: &str, at: &str| {
        Test::new()
            .workflow(&format!("[[tasks]]\nname = \"a\"\ncommand = \"x\"\n{request}\n"))
            .args(["check"])
            .args(worker)
            .stdout("")
            .stderr(&does_not_fit(message, at))
            .invalid();
    };
    let (cpus, gpus) = (line_4("cpus = 8", 8, 1), line_4("gpus = 1", 8, 1));
    too_big("cpus = 8", &["--cpus", "4"], "the request needs 8 cpus, the largest worker has 4", &cpus);
    too_big("gpus = 1", &["--gpus", "0.5"], "the request needs 1 gpu, the largest worker has 0.5", &gpus);
    let text = "[[tasks]]\nname = \"a\"\ncommand = \"x\"\ncpus = 1.5\nmemory = \"1 GiB\"\n";
    Test::new()
        .workflow(text)
        .args(["check", "--cpus", "1.5", "--memory", "1GiB"])
        .stdout("ok: workflow (workflow.toml) — 1 task, 1 instance, 0 edges\n")
        .stderr("")
        .success();
    too_big(
        "cpus = 1.5\nmemory = \"1 GiB\"",
        &["--memory", "512MiB"],
        "the request needs 1 GiB of memory, the largest worker has 512 MiB",
        "   ╭─[workflow.toml:5:10]\n 4 │ cpus = 1.5\n 5 │ memory = \"1 GiB\"\n   ·          ───┬───\n   ·             ╰── cannot fit on any worker\n",
    );
}

/// Issue 13: a bad value in a queue's table (`memory = "lots"`) showed
/// only after a misspelt key and a missing one in the same table were fixed.
#[test]
fn a_profile_reports_bad_values_beside_misspelt_keys() {
    let profiles = "[profile.hpc.queue]\nmanager = \"slurm\"\ntime_limt = \"1h\"\nworker = { memory = \"lots\" }\n";
    Test::new()
        .workflow("[[tasks]]\nname = \"a\"\ncommand = \"x\"\n")
        .file("flow.profiles.toml", profiles)
        .args(["check", "--profile", "hpc"])
        .stdout("")
        .stderr(
            r#"flow::spec::missing_key

  × missing key `time_limit` in a queue
   ╭─[flow.profiles.toml:1:1]
 1 │ [profile.hpc.queue]
   · ─────────┬─────────
   ·          ╰── `time_limit` is required here
 2 │ manager = "slurm"
   ╰────
  help: add `time_limit = ...`
flow::spec::unknown_key

  × unknown key `time_limt` in a queue
   ╭─[flow.profiles.toml:3:1]
 2 │ manager = "slurm"
 3 │ time_limt = "1h"
   · ────┬────
   ·     ╰── unknown key
 4 │ worker = { memory = "lots" }
   ╰────
  help: did you mean `time_limit`?
flow::profile::value

  × `worker.memory`: `lots` is not a size like "4 GiB"
   ╭─[flow.profiles.toml:4:21]
 3 │ time_limt = "1h"
 4 │ worker = { memory = "lots" }
   ·                     ───┬──
   ·                        ╰── not a size
   ╰────
  help: write a size such as "16 GiB"
error: 3 problems in flow.profiles.toml
"#,
        )
        .invalid();
}

/// Issue 18: a `time_request` of exactly what a worker of the queue gets
/// (`time_limit` less the margin: 9m30s of 10m) passed `flow check
/// --profile`, and the queue then submitted allocations for it in a loop.
#[test]
fn a_time_request_of_exactly_a_workers_limit_is_rejected() {
    let workflow = "[[tasks]]\nname = \"edge\"\ncommand = \"x\"\ntime_request = \"9m30s\"\n\
                    [[tasks]]\nname = \"inside\"\ncommand = \"x\"\ntime_request = \"9m29s\"\n";
    let profiles = "[profile.hpc.queue]\nmanager = \"slurm\"\ntime_limit = \"10m\"\nworker = { cpus = 4 }\n";
    Test::new()
        .workflow(workflow)
        .file("flow.profiles.toml", profiles)
        .args(["check", "--profile", "hpc"])
        .stdout("")
        .stderr(
            r#"flow::check::queue

  × the queue of profile `hpc` can never run `edge`: its time_request (9m30s) does not fit in the
  │ 9m30s a worker of the queue gets (its time_limit of 10m less a margin for starting and
  │ stopping; a task must end before its worker)
   ╭─[workflow.toml:2:8]
 1 │ [[tasks]]
 2 │ name = "edge"
   ·        ───┬──
   ·           ╰── this task
 3 │ command = "x"
   ╰────
  help: lower the task's `time_request`, or raise the queue's `time_limit` in the profile
error: 1 problem in workflow.toml
"#,
        )
        .invalid();
}

#[test]
fn a_profile_is_checked_with_the_tasks_its_queue_can_never_run() {
    let workflow = "[[tasks]]\nname = \"long\"\ncommand = \"x\"\ntime_request = \"2h\"\n\
                    [[tasks]]\nname = \"wide\"\ncommand = \"x\"\ncpus = 64\n\
                    [[tasks]]\nname = \"fine\"\ncommand = \"x\"\n";
    let queue = "manager = \"slurm\"\ntime_limit = \"1h\"\nworker = { cpus = 32 }\n";
    let profiles = format!(
        "[profile.hpc.queue]\n{queue}[profile.mixed]\nlocal_worker = true\n[profile.mixed.queue]\n{queue}\
         [profile.big.queue]\nmanager = \"slurm\"\ntime_limit = \"4h\"\n"
    );
    let test = |profile: &str| {
        Test::new().workflow(workflow).file("flow.profiles.toml", &profiles).args(["check", "--profile", profile])
    };
    test("hpc")
        .stdout("")
        .stderr(
            r#"flow::check::queue

  × the queue of profile `hpc` can never run `long`: its time_request (2h) is longer than the
  │ queue's time_limit (1h)
   ╭─[workflow.toml:2:8]
 1 │ [[tasks]]
 2 │ name = "long"
   ·        ───┬──
   ·           ╰── this task
 3 │ command = "x"
   ╰────
  help: lower the task's `time_request`, or raise the queue's `time_limit` in the profile
flow::check::queue

  × the queue of profile `hpc` can never run `wide`: needs 64 cpus, the queue's workers have 32
   ╭─[workflow.toml:6:8]
 5 │ [[tasks]]
 6 │ name = "wide"
   ·        ───┬──
   ·           ╰── this task
 7 │ command = "x"
   ╰────
  help: lower the task's request (or add a smaller variant), or raise the queue's `worker` in the
        profile
error: 2 problems in workflow.toml
"#,
        )
        .invalid();
    // With the embedded worker kept, those tasks can still run there: notes only.
    test("mixed")
        .stdout(r#"note: `long` can run only on the embedded worker: the queue of profile `mixed` cannot: its time_request (2h) is longer than the queue's time_limit (1h)
note: `wide` can run only on the embedded worker: the queue of profile `mixed` cannot: needs 64 cpus, the queue's workers have 32
ok: workflow (workflow.toml) — 3 tasks, 3 instances, 0 edges
"#)
        .stderr("")
        .success();
    test("big").stdout("ok: workflow (workflow.toml) — 3 tasks, 3 instances, 0 edges\n").stderr("").success();
    Test::new()
        .workflow(workflow)
        .file("flow.profiles.toml", "[profile.bad.queue]\nmanager = \"lsf\"\n")
        .args(["check", "--profile", "bad"])
        .stdout("")
        .stderr(
            r#"flow::spec::type

  × invalid `manager`: unknown variant `lsf`, expected `slurm` or `pbs`
   ╭─[flow.profiles.toml:2:11]
 1 │ [profile.bad.queue]
 2 │ manager = "lsf"
   ·           ──┬──
   ·             ╰── invalid value
   ╰────
error: 1 problem in flow.profiles.toml
"#,
        )
        .invalid();
}

/// `flow check --memory …` refuses what `flow run --memory …` refuses: a
/// task needing more workers than the one described, at its `nodes` key,
/// and one needing more memory (issue 27: check reported only the second).
#[test]
fn check_refuses_a_task_needing_more_workers_than_the_one_described_as_run_does() {
    let text = "[[tasks]]\nname = \"mpi\"\nnodes = 2\ncommand = \"x\"\n\n[[tasks]]\nname = \"huge\"\nmemory = \"64 GiB\"\ncommand = \"x\"\n";
    // Issue 27: run points at the `nodes` and `memory` keys too, not at `name`.
    Test::new()
        .workflow(text)
        .args(["run", "--memory", "16GiB"])
        .stdout("")
        .stderr(
            r#"flow::compile::impossible_resources

  × task `mpi` can never run here: needs 2 workers, there are 1
   ╭─[workflow.toml:3:9]
 2 │ name = "mpi"
 3 │ nodes = 2
   ·         ┬
   ·         ╰── more workers than there are
 4 │ command = "x"
   ╰────
  help: lower `nodes`, or run it where more workers join (--listen, or --profile for a cluster
        queue)
flow::compile::impossible_resources

  × task `huge` can never run here: needs 64 GiB of memory, the largest worker has 16 GiB
   ╭─[workflow.toml:8:10]
 7 │ name = "huge"
 8 │ memory = "64 GiB"
   ·          ────┬───
   ·              ╰── cannot fit on any worker
 9 │ command = "x"
   ╰────
  help: lower the request, add a smaller variant, or describe a bigger worker (--cpus, --gpus,
        --memory, --resource)
error: 2 problems in workflow.toml
"#,
        )
        .invalid();
    Test::new()
        .workflow(text)
        .args(["check", "--memory", "16GiB"])
        .stdout("")
        .stderr(
            r#"flow::compile::impossible_resources

  × the task needs 2 workers, there are 1
   ╭─[workflow.toml:3:9]
 2 │ name = "mpi"
 3 │ nodes = 2
   ·         ┬
   ·         ╰── more workers than there are
 4 │ command = "x"
   ╰────
  help: lower `nodes`, or run it where more workers join (--listen, or --profile for a cluster
        queue)
flow::compile::impossible_resources

  × the request needs 64 GiB of memory, the largest worker has 16 GiB
   ╭─[workflow.toml:8:10]
 7 │ name = "huge"
 8 │ memory = "64 GiB"
   ·          ────┬───
   ·              ╰── cannot fit on any worker
 9 │ command = "x"
   ╰────
  help: lower the request, add a smaller variant, or describe a bigger worker (--cpus, --gpus,
        --memory, --resource)
error: 2 problems in workflow.toml
"#,
        )
        .invalid();
}
