//! Resources that grow with the attempt: `attempt` in the resource keys.

use crate::run::assert_code;
use crate::support::Test;
use crate::support::process::read;

#[test]
fn memory_and_time_request_grow_with_each_retry() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "fit"
range = "1-2"
retries = 2
memory = "{{ 100 * (attempt + 1) }} MiB"
time_request = "{{ 30 * (attempt + 1) }}m"
command = "echo {{ attempt }} {{ resources.memory }} >> mem{{ index }}.txt; [ {{ attempt }} -ge {{ index }} ]"
"#,
    );
    let plan: serde_json::Value = serde_json::from_str(&t.success_with(&["plan", "--json"])).expect("plan --json");
    let group = &plan["groups"][0];
    assert_eq!(group["variants"][0]["memory"], 100 << 20, "{group}");
    assert_eq!(group["retry_variants"][1][0]["memory"], 300 << 20, "{group}");
    assert_eq!(group["retry_variants"][1][0]["time_request"], 90 * 60, "{group}");
    let out = t.run_with(&["run"]);
    assert_code(&out, 0);
    assert_eq!(read(&t, "mem1.txt"), "0 100\n1 200\n");
    assert_eq!(read(&t, "mem2.txt"), "0 100\n1 200\n2 300\n");
}

#[test]
fn an_attempt_no_worker_can_hold_is_not_made() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "grow"
retries = 3
cpus = "{{ attempt + 1 }}"
command = "echo $FLOW_CPUS >> cpus.txt; exit 1"
"#,
    );
    // Attempts 0 and 1 fit two CPUs; attempt 2 asks for three and is not made.
    let out = t.run_with(&["run", "--cpus", "2"]);
    assert_code(&out, 1);
    assert_eq!(read(&t, "cpus.txt"), "0\n0,1\n");
    insta::assert_snapshot!(t.normalize(&out.stderr), @r"
        run [RUN]: 1 instance of 1 task
        ! grow failed (exit code 1), retrying (attempt 1)
        ✗ grow failed: exit code 1; not retried: attempt 2 asks for more than any worker has (workflow.toml:3:8)
        log:  flow log cat --failed
        report:  flow report
        run [RUN]: 0 succeeded, 1 failed in [TIME]
    ");
    let check = t.run_with(&["check", "--cpus", "2"]);
    assert_code(&check, 2);
    insta::assert_snapshot!(t.normalize(&check.stderr), @r#"
        flow::compile::impossible_resources

          × attempt 2: the request needs 3 cpus, the largest worker has 2
           ╭─[workflow.toml:5:8]
         4 │ retries = 3
         5 │ cpus = "{{ attempt + 1 }}"
           ·  ─────────┬─────────
           ·  ╰── cannot fit on any worker
         6 │ command = "echo $FLOW_CPUS >> cpus.txt; exit 1"
           ╰────
          help: lower the request, add a smaller variant, or describe a bigger worker (--cpus, --gpus,
                --memory, --resource)
        flow::compile::impossible_resources

          × attempt 3: the request needs 4 cpus, the largest worker has 2
           ╭─[workflow.toml:5:8]
         4 │ retries = 3
         5 │ cpus = "{{ attempt + 1 }}"
           ·  ─────────┬─────────
           ·  ╰── cannot fit on any worker
         6 │ command = "echo $FLOW_CPUS >> cpus.txt; exit 1"
           ╰────
          help: lower the request, add a smaller variant, or describe a bigger worker (--cpus, --gpus,
                --memory, --resource)
        error: 2 problems in workflow.toml
    "#);
}

#[test]
fn resource_keys_see_attempt_but_not_the_instance() {
    let t =
        Test::new().workflow("[[tasks]]\nname = \"t\"\nrange = \"1-2\"\ncpus = \"{{ index }}\"\ncommand = \"true\"\n");
    let out = t.run_with(&["check"]);
    assert_code(&out, 2);
    insta::assert_snapshot!(t.normalize(&out.stderr), @r#"
        flow::compile::template

          × template error in `cpus`: `index` is undefined
           ╭─[workflow.toml:4:12]
         3 │ range = "1-2"
         4 │ cpus = "{{ index }}"
           ·  ──┬──
           ·  ╰── undefined value
         5 │ command = "true"
           ╰────
          help: `cpus` is worked out once for the task, before its instances exist, so it sees only
                `vars`, `env` and `attempt`, not `index`; use a variable (`{{ vars.NAME }}`)
        error: 1 problem in workflow.toml
    "#);
}
