//! `flow check`: valid files, default file names, variables, every problem
//! reported at once, and checks against a worker or a profile's queue.

use crate::support::Test;

const HELLO: &str = r#"
name = "hello"
[[tasks]]
name = "greet"
command = "echo hi > hello.txt"
outputs = ["hello.txt"]

[[tasks]]
name = "shout"
command = "tr a-z A-Z < hello.txt"
inputs = ["hello.txt"]
"#;

#[test]
fn valid_workflow_is_ok() {
    let out = Test::new().workflow(HELLO).args(["check"]).success();
    assert_eq!(out, "ok: hello (workflow.toml) — 2 tasks, 2 instances, 1 edge\n");
}

#[test]
fn finds_workflow_yaml_by_default() {
    let yaml = "name: y\ntasks:\n  - name: a\n    command: echo a\n";
    let out = Test::new().file("workflow.yaml", yaml).args(["check"]).success();
    assert!(out.starts_with("ok: y (workflow.yaml)"), "{out}");
}

#[test]
fn no_workflow_file_is_a_usage_error() {
    let err = Test::new().args(["check"]).invalid();
    assert!(err.contains("no workflow.toml"), "{err}");
    let err = Test::new().args(["check", "nope.toml"]).invalid();
    assert!(err.contains("cannot read `nope.toml`"), "{err}");
}

#[test]
fn reports_every_problem_at_once() {
    let text = r#"
[[tasks]]
name = "a"
command = "echo {{ vars.nope }}"
cpus = "many"

[[tasks]]
name = "b"
command = "x"
after = ["c"]
inputs = ["missing.txt"]

[[tasks]]
name = "c"
command = "x"
after = ["b"]
timeout = "3 fortnights"
"#;
    let err = Test::new().workflow(text).args(["check"]).invalid();
    for expected in [
        "`vars.nope` is undefined",
        "bad `cpus`",
        "input `missing.txt` does not exist",
        "dependency cycle",
        "bad `timeout`",
        "error: 5 problems in workflow.toml",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in:\n{err}");
    }
    assert!(err.contains("workflow.toml:4:"), "{err}");
}

#[test]
fn parse_and_compile_problems_are_reported_together() {
    let text =
        "[[tasks]]\nname = \"a\"\ncomand = \"x\"\n\n[[tasks]]\nname = \"b\"\ncommand = \"x\"\nafter = [\"nope\"]\n";
    let err = Test::new().workflow(text).args(["check"]).invalid();
    assert!(err.contains("did you mean `command`?"), "{err}");
    assert!(err.contains("`after` names unknown task `nope`"), "{err}");
}

#[test]
fn variables_can_be_overridden() {
    let text = "[vars]\nn = 3\n[[tasks]]\nname = \"a\"\nrange = \"1-{{ vars.n }}\"\ncommand = \"echo {{ index }}\"\n";
    let t = Test::new().workflow(text).file("vars.toml", "n = 7\n");
    assert!(t.success_with(&["check"]).contains("3 instances"));
    assert!(t.success_with(&["check", "--vars", "vars.toml"]).contains("7 instances"));
    assert!(t.success_with(&["check", "--vars", "vars.toml", "-v", "n=12"]).contains("12 instances"));
    let err = Test::new().workflow(text).args(["check", "-v", "n"]).invalid();
    assert!(err.contains("NAME=VALUE"), "{err}");
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
    Test::new().workflow(text).args(["check", "--cpus", "8", "--gpus", "0"]).success();
    Test::new().workflow(text).args(["check", "--cpus", "2", "--gpus", "1"]).success();
    let err = Test::new().workflow(text).args(["check", "--cpus", "4", "--gpus", "0"]).invalid();
    assert!(err.contains("no variant fits: variant 1 needs 1 gpu, the largest worker has 0; variant 2"), "{err}");
    assert!(err.contains("needs 8 cpus, the\n"), "wrapped: {err}");
    let err = Test::new()
        .workflow("[[tasks]]\nname = \"a\"\ncommand = \"x\"\nresources = { fpga = 2 }\n")
        .args(["check", "--resource", "fpga=1"])
        .invalid();
    assert!(err.contains("the request needs 2 `fpga`, the largest worker has 1"), "{err}");
}

/// Issue 13: `flow check --cpus` said "8 cpus > 4"; it now says what is
/// short in the scheduler's words, with the right plural, and a fraction
/// of a CPU fits a worker described with that fraction.
#[test]
fn a_request_too_big_for_the_described_worker_is_a_sentence() {
    let text = "[[tasks]]\nname = \"a\"\ncommand = \"x\"\ncpus = 8\n";
    let err = Test::new().workflow(text).args(["check", "--cpus", "4"]).invalid();
    assert!(err.contains("× the request needs 8 cpus, the largest worker has 4\n"), "{err}");
    let text = "[[tasks]]\nname = \"a\"\ncommand = \"x\"\ngpus = 1\n";
    let err = Test::new().workflow(text).args(["check", "--gpus", "0.5"]).invalid();
    assert!(err.contains("× the request needs 1 gpu, the largest worker has 0.5\n"), "{err}");
    let text = "[[tasks]]\nname = \"a\"\ncommand = \"x\"\ncpus = 1.5\nmemory = \"1 GiB\"\n";
    Test::new().workflow(text).args(["check", "--cpus", "1.5", "--memory", "1GiB"]).success();
    let err = Test::new().workflow(text).args(["check", "--memory", "512MiB"]).invalid();
    assert!(err.contains("× the request needs 1 GiB of memory, the largest worker has 512 MiB\n"), "{err}");
}

/// Issue 13: a bad value in a queue's table (`memory = "lots"`) showed
/// only after a misspelt key and a missing one in the same table were fixed.
#[test]
fn a_profile_reports_bad_values_beside_misspelt_keys() {
    let profiles = "[profile.hpc.queue]\nmanager = \"slurm\"\ntime_limt = \"1h\"\nworker = { memory = \"lots\" }\n";
    let t = Test::new().workflow("[[tasks]]\nname = \"a\"\ncommand = \"x\"\n").file("flow.profiles.toml", profiles);
    let err = t.run_with(&["check", "--profile", "hpc"]);
    assert_eq!(err.code, 2, "{}", err.stderr);
    assert!(err.stderr.contains("missing key `time_limit` in a queue"), "{}", err.stderr);
    assert!(err.stderr.contains("unknown key `time_limt` in a queue"), "{}", err.stderr);
    assert!(err.stderr.contains("`worker.memory`"), "{}", err.stderr);
    assert!(err.stderr.contains("3 problems in flow.profiles.toml"), "{}", err.stderr);
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
    let t = Test::new().workflow(workflow).file("flow.profiles.toml", &profiles);
    let err = t.run_with(&["check", "--profile", "hpc"]);
    assert_eq!(err.code, 2, "{}", err.stderr);
    assert!(
        err.stderr.contains("the queue of profile `hpc` can never run `long`: its time_request (2h)"),
        "{}",
        err.stderr
    );
    assert!(err.stderr.contains("workflow.toml:2:8"), "at the task: {}", err.stderr);
    assert!(err.stderr.contains("can never run `wide`"), "{}", err.stderr);
    assert!(err.stderr.contains("2 problems in workflow.toml"), "{}", err.stderr);
    // With the embedded worker kept, those tasks can still run there: notes only.
    let out = t.success_with(&["check", "--profile", "mixed"]);
    assert!(out.contains("note: `long` can run only on the embedded worker"), "{out}");
    t.success_with(&["check", "--profile", "big"]);
    let bad = Test::new().workflow(workflow).file("flow.profiles.toml", "[profile.bad.queue]\nmanager = \"lsf\"\n");
    let err = bad.run_with(&["check", "--profile", "bad"]);
    assert_eq!(err.code, 2);
    assert!(err.stderr.contains("flow.profiles.toml") && err.stderr.contains("lsf"), "{}", err.stderr);
}

#[test]
fn inputs_on_disk_need_no_producer() {
    let text =
        "[[tasks]]\nname = \"a\"\neach_line = \"list.txt\"\ncommand = \"x\"\ninputs = [\"data/{{ item }}.smi\"]\n";
    let t = Test::new().workflow(text).file("list.txt", "x\ny\n").file("data/x.smi", "").file("data/y.smi", "");
    t.args(["check"]).success();
    let t = Test::new().workflow(text).file("list.txt", "x\nz\n").file("data/x.smi", "");
    let err = t.args(["check"]).invalid();
    assert!(err.contains("input `data/z.smi` (in `a[1]`) does not exist"), "{err}");
}

fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

/// Issue 12: `flow check` blocked on a FIFO, and `each_line = "/dev/urandom"`
/// never ended; both are refused at the key.
#[test]
fn expansion_files_must_be_regular_files() {
    let test = Test::new()
        .workflow(
            "[[tasks]]\nname = \"a\"\neach_line = \"pipe\"\ncommand = \"echo\"\n\n\
             [[tasks]]\nname = \"b\"\neach_line = \"/dev/urandom\"\ncommand = \"echo\"\n",
        )
        .args(["check"])
        .timeout(std::time::Duration::from_secs(20));
    mkfifo(&test.path().join("pipe"));
    let stderr = test.invalid();
    assert!(stderr.contains("`pipe` for `each_line` is a FIFO, not a regular file"), "{stderr}");
    assert!(stderr.contains("[workflow.toml:3:13]"), "{stderr}");
    assert!(stderr.contains("`/dev/urandom` for `each_line` is a device, not a regular file"), "{stderr}");
    assert!(stderr.contains("[workflow.toml:8:13]"), "{stderr}");
}

#[test]
fn a_workflow_file_that_is_a_fifo_is_refused() {
    let test = Test::new().args(["check", "flow.toml"]).timeout(std::time::Duration::from_secs(20));
    mkfifo(&test.path().join("flow.toml"));
    let stderr = test.invalid();
    assert_eq!(stderr, "error: cannot read `flow.toml`: not a regular file\n");
}

/// Issue 12: a range over all of i64 aborted on a huge allocation, a 1e10
/// matrix grew memory for ever, and a selector over all of i64 overflowed to
/// an empty set. Each is now an error at its key, and the limit can be raised.
#[test]
fn instance_counts_are_checked_and_capped() {
    let axis = "[1,2,3,4,5,6,7,8,9,10]";
    let axes: Vec<String> = "abcdefghij".chars().map(|c| format!("{c} = {axis}")).collect();
    let workflow = format!(
        "[[tasks]]\nname = \"a\"\nrange = \"-9223372036854775808-10\"\ncommand = \"echo\"\n\n\
         [[tasks]]\nname = \"m\"\nmatrix = {{ {} }}\ncommand = \"echo\"\n\n\
         [[tasks]]\nname = \"b\"\nrange = \"1-3\"\ncommand = \"echo\"\n\n\
         [[tasks]]\nname = \"c\"\nafter = [\"b[-9223372036854775808-9223372036854775807]\"]\ncommand = \"echo\"\n",
        axes.join(", ")
    );
    let test = Test::new().workflow(&workflow).args(["check"]).timeout(std::time::Duration::from_secs(20));
    let stderr = test.invalid();
    assert!(
        stderr.contains("`range` expands to 9223372036854775819 instances, over the limit of 100000000"),
        "{stderr}"
    );
    assert!(stderr.contains("[workflow.toml:3:9]"), "{stderr}");
    assert!(stderr.contains("`matrix` expands to 10000000000 instances, over the limit of 100000000"), "{stderr}");
    assert!(stderr.contains("holds more than 2^64 - 1 integers"), "{stderr}");
    assert!(stderr.contains("error: 3 problems in workflow.toml"), "{stderr}");
}

#[test]
fn the_instance_limit_can_be_changed() {
    let workflow = "[[tasks]]\nname = \"a\"\nrange = \"1-1000\"\ncommand = \"echo\"\n";
    let stderr = Test::new().workflow(workflow).args(["check", "--max-instances", "999"]).invalid();
    assert!(stderr.contains("`range` expands to 1000 instances, over the limit of 999"), "{stderr}");
    let out = Test::new().workflow(workflow).args(["check"]).env("FLOW_MAX_INSTANCES", "1000").success();
    assert!(out.contains("1000 instances"), "{out}");
}

/// Issue 12: items went into `command` unquoted, so a line `$(touch x)` ran.
/// `shell_quote` makes an item one shell word, and `flow check` notes a task
/// that puts data into its command without it.
#[test]
fn unquoted_items_from_data_are_noted_and_shell_quote_protects() {
    let t = Test::new().file("lines.txt", "plain\n$(touch pwned)\nit's\n").workflow(
        r#"
[[tasks]]
name = "unsafe"
each_line = "lines.txt"
command = "echo {{ item }} > /dev/null"

[[tasks]]
name = "safe"
each_line = "lines.txt"
command = "mkdir -p out && printf %s {{ item | shell_quote }} > out/{{ index }}"
"#,
    );
    let out = t.success_with(&["check"]);
    assert_eq!(
        out.lines().next().unwrap_or_default(),
        "note: workflow.toml:3:8: `unsafe` puts `{{ item }}`, read from a data file, into its shell command \
         unquoted, so shell syntax in the data runs; write `{{ item | shell_quote }}`"
    );
    assert_eq!(out.lines().count(), 2, "{out}");

    let safe = &r#"
[[tasks]]
name = "safe"
each_line = "lines.txt"
command = "mkdir -p out && printf %s {{ item | shell_quote }} > out/{{ index }}"
"#;
    let t = Test::new().file("lines.txt", "plain\n$(touch pwned)\nit's\n").workflow(safe);
    assert_eq!(t.success_with(&["check"]).lines().count(), 1, "no note for quoted items");
    t.success_with(&["run"]);
    let read = |i: u32| fs_err::read_to_string(t.path().join(format!("out/{i}"))).unwrap();
    assert_eq!([read(0), read(1), read(2)], ["plain", "$(touch pwned)", "it's"]);
    assert!(!t.path().join("pwned").exists());
}

/// Issue 13: an empty workflow passed with "0 tasks", and a file that is not
/// UTF-8 said only "invalid data"; both are diagnostics with a place and help.
#[test]
fn an_empty_or_non_utf8_workflow_is_a_diagnostic() {
    let t = Test::new().workflow("name = \"nothing\"\n").args(["check"]);
    let stderr = t.invalid();
    assert!(stderr.contains("× the workflow has no tasks"), "{stderr}");
    assert!(stderr.contains("[workflow.toml:1:17]"), "{stderr}");
    assert!(stderr.contains("help: add a task"), "{stderr}");

    let t = Test::new().args(["check", "latin1.toml"]);
    fs_err::write(t.path().join("latin1.toml"), b"[[tasks]]\nname = \"caf\xe9\"\ncommand = \"echo\"\n").unwrap();
    let stderr = t.invalid();
    assert!(stderr.contains("× the file is not UTF-8 text: byte 0xe9"), "{stderr}");
    assert!(stderr.contains("[latin1.toml:2:12]"), "{stderr}");
    assert!(stderr.contains("help: save the file as UTF-8"), "{stderr}");
}

/// Issue 13: `cpus = "{{ index }}"` said only "`index` is undefined", a
/// misspelt variable got no suggestion, and an undefined name inside
/// arithmetic was not named.
#[test]
fn template_errors_say_what_a_key_can_see() {
    let stderr = Test::new()
        .workflow(
            "[vars]\nthreads = 4\n\n[[tasks]]\nname = \"a\"\ncommand = \"echo\"\ncpus = \"{{ index }}\"\n\
             memory = \"{{ vars.thread }} GiB\"\n\n[[tasks]]\nname = \"b\"\ncommand = \"echo {{ vars.n * 2 }}\"\n",
        )
        .args(["check"])
        .invalid();
    assert!(
        stderr.contains("help: `cpus` is worked out once for the task, before its instances exist, so it"),
        "{stderr}"
    );
    assert!(stderr.contains("help: did you mean `vars.threads`?"), "{stderr}");
    assert!(
        stderr.contains("× template error in `command`: `vars.n` is undefined (used in `echo {{ vars.n * 2 }}`)"),
        "{stderr}"
    );
}
