//! `flow check`: valid files, default file names, variables, every problem
//! reported at once, files that cannot be expanded, instance limits and
//! unquoted data — each with exactly what it prints.

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
    Test::new()
        .workflow(HELLO)
        .args(["check"])
        .stdout("ok: hello (workflow.toml) — 2 tasks, 2 instances, 1 edge\n")
        .stderr("")
        .success();
}

#[test]
fn finds_workflow_yaml_by_default() {
    Test::new()
        .file("workflow.yaml", "name: y\ntasks:\n  - name: a\n    command: echo a\n")
        .args(["check"])
        .stdout("ok: y (workflow.yaml) — 1 task, 1 instance, 0 edges\n")
        .stderr("")
        .success();
}

#[test]
fn no_workflow_file_is_a_usage_error() {
    Test::new()
        .args(["check"])
        .stdout("")
        .stderr("error: no workflow.toml, workflow.yaml or workflow.yml here; name the workflow file\n")
        .invalid();
    Test::new()
        .args(["check", "nope.toml"])
        .stdout("")
        .stderr("error: cannot read `nope.toml`: no such file\n")
        .invalid();
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
    Test::new()
        .workflow(text)
        .args(["check"])
        .stdout("")
        .stderr(
            r#"flow::compile::template

  × template error in `command`: `vars.nope` is undefined
   ╭─[workflow.toml:4:20]
 3 │ name = "a"
 4 │ command = "echo {{ vars.nope }}"
   ·                    ────┬────
   ·                        ╰── undefined value
 5 │ cpus = "many"
   ╰────
  help: templates see `vars`, `index`, `item`, `item_json`, `chunk`, `attempt`, `task`,
        `resources` and `env`; check the spelling, or add the variable to [vars]
flow::compile::bad_value

  × bad `cpus`: `many` is not a number
   ╭─[workflow.toml:5:8]
 4 │ command = "echo {{ vars.nope }}"
 5 │ cpus = "many"
   ·        ───┬──
   ·           ╰── invalid value
 6 │ 
   ╰────
  help: `cpus` takes a non-negative number, e.g. 2 or 0.25
flow::compile::cycle

  × dependency cycle: b → c → b
   ╭─[workflow.toml:8:8]
 7 │ [[tasks]]
 8 │ name = "b"
   ·        ─┬─
   ·         ╰── part of the cycle
 9 │ command = "x"
   ╰────
  help: remove one of these dependencies: `b` → `c` (after), `c` → `b` (after)
flow::compile::missing_input

  × input `missing.txt` does not exist, and no task produces it
    ╭─[workflow.toml:11:11]
 10 │ after = ["c"]
 11 │ inputs = ["missing.txt"]
    ·           ──────┬──────
    ·                 ╰── needed here
 12 │ 
    ╰────
  help: create the file, fix the path (relative to the workflow file), or add a task that lists it
        in `outputs`
flow::compile::bad_value

  × bad `timeout`: unknown duration unit `fortnights` in `3 fortnights`
    ╭─[workflow.toml:17:11]
 16 │ after = ["b"]
 17 │ timeout = "3 fortnights"
    ·           ───────┬──────
    ·                  ╰── invalid value
    ╰────
  help: use a duration like "90s", "15m", "2h", "1h30m", "HH:MM:SS", or a number of seconds
error: 5 problems in workflow.toml
"#,
        )
        .invalid();
}

#[test]
fn parse_and_compile_problems_are_reported_together() {
    let text =
        "[[tasks]]\nname = \"a\"\ncomand = \"x\"\n\n[[tasks]]\nname = \"b\"\ncommand = \"x\"\nafter = [\"nope\"]\n";
    Test::new()
        .workflow(text)
        .args(["check"])
        .stdout("")
        .stderr(
            r#"flow::spec::unknown_key

  × unknown key `comand` in task
   ╭─[workflow.toml:3:1]
 2 │ name = "a"
 3 │ comand = "x"
   · ───┬──
   ·    ╰── unknown key
 4 │ 
   ╰────
  help: did you mean `command`?
flow::compile::bad_after

  × `after` names unknown task `nope`
   ╭─[workflow.toml:8:10]
 7 │ command = "x"
 8 │ after = ["nope"]
   ·          ───┬──
   ·             ╰── in this `after`
   ╰────
  help: tasks are: a, b
error: 2 problems in workflow.toml
"#,
        )
        .invalid();
}

#[test]
fn variables_can_be_overridden() {
    let text = "[vars]\nn = 3\n[[tasks]]\nname = \"a\"\nrange = \"1-{{ vars.n }}\"\ncommand = \"echo {{ index }}\"\n";
    let check = |args: &[&str], instances: u32| {
        Test::new()
            .workflow(text)
            .file("vars.toml", "n = 7\n")
            .args(args)
            .stdout(&format!("ok: workflow (workflow.toml) — 1 task, {instances} instances, 0 edges\n"))
            .stderr("")
            .success();
    };
    check(&["check"], 3);
    check(&["check", "--vars", "vars.toml"], 7);
    check(&["check", "--vars", "vars.toml", "-v", "n=12"], 12);
    Test::new()
        .workflow(text)
        .args(["check", "-v", "n"])
        .stdout("")
        .stderr("error: `-v n` needs the form NAME=VALUE\n")
        .invalid();
}

#[test]
fn inputs_on_disk_need_no_producer() {
    let text =
        "[[tasks]]\nname = \"a\"\neach_line = \"list.txt\"\ncommand = \"x\"\ninputs = [\"data/{{ item }}.smi\"]\n";
    Test::new()
        .workflow(text)
        .file("list.txt", "x\ny\n")
        .file("data/x.smi", "")
        .file("data/y.smi", "")
        .args(["check"])
        .stdout("ok: workflow (workflow.toml) — 1 task, 2 instances, 0 edges\n")
        .stderr("")
        .success();
    Test::new()
        .workflow(text)
        .file("list.txt", "x\nz\n")
        .file("data/x.smi", "")
        .args(["check"])
        .stdout("")
        .stderr(
            r#"flow::compile::missing_input

  × input `data/z.smi` (in `a[1]`) does not exist, and no task produces it
   ╭─[workflow.toml:5:11]
 4 │ command = "x"
 5 │ inputs = ["data/{{ item }}.smi"]
   ·           ──────────┬──────────
   ·                     ╰── needed here
   ╰────
  help: create the file, fix the path (relative to the workflow file), or add a task that lists it
        in `outputs`
error: 1 problem in workflow.toml
"#,
        )
        .invalid();
}

/// Makes a FIFO at `path`.
pub(crate) fn mkfifo(path: &std::path::Path) {
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
        .timeout(std::time::Duration::from_secs(20))
        .stdout("")
        .stderr(
            r#"flow::compile::not_a_file

  × `pipe` for `each_line` is a FIFO, not a regular file
   ╭─[workflow.toml:3:13]
 2 │ name = "a"
 3 │ each_line = "pipe"
   ·             ───┬──
   ·                ╰── this path
 4 │ command = "echo"
   ╰────
  help: point at a regular file; to read a stream, save it to a file first
flow::compile::not_a_file

  × `/dev/urandom` for `each_line` is a device, not a regular file
   ╭─[workflow.toml:8:13]
 7 │ name = "b"
 8 │ each_line = "/dev/urandom"
   ·             ───────┬──────
   ·                    ╰── this path
 9 │ command = "echo"
   ╰────
  help: point at a regular file; to read a stream, save it to a file first
error: 2 problems in workflow.toml
"#,
        );
    mkfifo(&test.path().join("pipe"));
    test.invalid();
}

#[test]
fn a_workflow_file_that_is_a_fifo_is_refused() {
    let test = Test::new()
        .args(["check", "flow.toml"])
        .timeout(std::time::Duration::from_secs(20))
        .stdout("")
        .stderr("error: cannot read `flow.toml`: a FIFO, not a regular file\n");
    mkfifo(&test.path().join("flow.toml"));
    test.invalid();
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
    Test::new()
        .workflow(&workflow)
        .args(["check"])
        .timeout(std::time::Duration::from_secs(20))
        .stdout("")
        .stderr(r#"flow::compile::too_many_instances

  × `range` expands to 9223372036854775819 instances, over the limit of 100000000
   ╭─[workflow.toml:3:9]
 2 │ name = "a"
 3 │ range = "-9223372036854775808-10"
   ·         ────────────┬────────────
   ·                     ╰── too many instances
 4 │ command = "echo"
   ╰────
  help: narrow it, or raise the limit with `--max-instances N` (or FLOW_MAX_INSTANCES) if the
        machine can hold them
flow::compile::too_many_instances

  × `matrix` expands to 10000000000 instances, over the limit of 100000000
   ╭─[workflow.toml:8:10]
 8 │ matrix = { a = [1,2,3,4,5,6,7,8,9,10], b = [1,2,3,4,5,6,7,8,9,10], c = [1,2,3,4,5,6,7,8,9,10], d = [1,2,3,4,5,6,7,8,9,10], e = [1
   ·          ────────────────────────────────────────────────────────────┬───────────────────────────────────────────────────────────
   ·                                                                      ╰── too many instances
   ╰────
  help: narrow it, or raise the limit with `--max-instances N` (or FLOW_MAX_INSTANCES) if the
        machine can hold them
flow::compile::bad_after

  × bad index list in `b[-9223372036854775808-9223372036854775807]`: range `-9223372036854775808-
  │ 9223372036854775807` holds more than 2^64 - 1 integers
    ╭─[workflow.toml:18:10]
 17 │ name = "c"
 18 │ after = ["b[-9223372036854775808-9223372036854775807]"]
    ·          ──────────────────────┬──────────────────────
    ·                                ╰── in this `after`
 19 │ command = "echo"
    ╰────
  help: write `task` or `task[1-10,20]`
error: 3 problems in workflow.toml
"#)
        .invalid();
}

#[test]
fn the_instance_limit_can_be_changed() {
    let workflow = "[[tasks]]\nname = \"a\"\nrange = \"1-1000\"\ncommand = \"echo\"\n";
    Test::new()
        .workflow(workflow)
        .args(["check", "--max-instances", "999"])
        .stdout("")
        .stderr(
            r#"flow::compile::too_many_instances

  × `range` expands to 1000 instances, over the limit of 999
   ╭─[workflow.toml:3:9]
 2 │ name = "a"
 3 │ range = "1-1000"
   ·         ────┬───
   ·             ╰── too many instances
 4 │ command = "echo"
   ╰────
  help: narrow it, or raise the limit with `--max-instances N` (or FLOW_MAX_INSTANCES) if the
        machine can hold them
error: 1 problem in workflow.toml
"#,
        )
        .invalid();
    Test::new()
        .workflow(workflow)
        .args(["check"])
        .env("FLOW_MAX_INSTANCES", "1000")
        .stdout("ok: workflow (workflow.toml) — 1 task, 1000 instances, 0 edges\n")
        .stderr("")
        .success();
}

/// Issue 12: items went into `command` unquoted, so a line `$(touch x)` ran.
/// `shell_quote` makes an item one shell word, and `flow check` notes a task
/// that puts data into its command without it.
#[test]
fn unquoted_items_from_data_are_noted_and_shell_quote_protects() {
    let lines = "plain\n$(touch pwned)\nit's\n";
    let both = Test::new()
        .file("lines.txt", lines)
        .workflow(
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
        )
        .args(["check"])
        .stdout(
            "note: workflow.toml:3:8: `unsafe` puts `{{ item }}`, read from a data file, into its shell command \
             unquoted, so shell syntax in the data runs; write `{{ item | shell_quote }}`\n\
             ok: workflow (workflow.toml) — 2 tasks, 6 instances, 0 edges\n",
        )
        .stderr("");
    both.success();
    // Issue 11: with --json the note is a diagnostic of severity `note`, and the workflow is ok.
    let json: serde_json::Value = serde_json::from_str(&both.success_with(&["check", "--json"])).expect("JSON");
    assert_eq!(json["ok"], true, "{json}");
    let note = &json["diagnostics"][0];
    assert_eq!(
        (&note["severity"], &note["code"], &note["line"], &note["column"]),
        (&"note".into(), &"flow::check::unquoted_data".into(), &3.into(), &8.into()),
        "{json}"
    );
    assert!(note["message"].as_str().is_some_and(|m| m.starts_with("`unsafe` puts `{{ item }}`")), "{json}");

    let safe = r#"
[[tasks]]
name = "safe"
each_line = "lines.txt"
command = "mkdir -p out && printf %s {{ item | shell_quote }} > out/{{ index }}"
"#;
    Test::new()
        .file("lines.txt", lines)
        .workflow(safe)
        .args(["check"])
        .stdout("ok: workflow (workflow.toml) — 1 task, 3 instances, 0 edges\n")
        .stderr("")
        .success();
    let t = Test::new()
        .file("lines.txt", lines)
        .workflow(safe)
        .args(["run"])
        .stdout("")
        .expect_file("out/0", "plain")
        .expect_file("out/1", "$(touch pwned)")
        .expect_file("out/2", "it's");
    t.success();
    assert!(!t.path().join("pwned").exists());
}

/// Issue 13: an empty workflow passed with "0 tasks", and a file that is not
/// UTF-8 said only "invalid data"; both are diagnostics with a place and help.
#[test]
fn an_empty_or_non_utf8_workflow_is_a_diagnostic() {
    Test::new()
        .workflow("name = \"nothing\"\n")
        .args(["check"])
        .stdout("")
        .stderr(
            r#"flow::compile::no_tasks

  × the workflow has no tasks
   ╭─[workflow.toml:1:17]
 1 │ name = "nothing"
   ·                 ▲
   ·                 ╰── tasks go here
   ╰────
  help: add a task: `[[tasks]]` with `name = "hello"` and `command = "echo hello"` (YAML: `tasks:`
        with `- name: hello`)
error: 1 problem in workflow.toml
"#,
        )
        .invalid();

    let t = Test::new().args(["check", "latin1.toml"]).stdout("").stderr(
        r#"flow::spec::not_utf8

  × the file is not UTF-8 text: byte 0xe9
   ╭─[latin1.toml:2:12]
 1 │ [[tasks]]
 2 │ name = "caf�"
   ·            ┬
   ·            ╰── not UTF-8
 3 │ command = "echo"
   ╰────
  help: save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`); workflow files are UTF-8 text
error: 1 problem in latin1.toml
"#,
    );
    fs_err::write(t.path().join("latin1.toml"), b"[[tasks]]\nname = \"caf\xe9\"\ncommand = \"echo\"\n").unwrap();
    t.invalid();
}

/// Issue 13: `cpus = "{{ index }}"` said only "`index` is undefined", a
/// misspelt variable got no suggestion, and an undefined name inside
/// arithmetic was not named.
#[test]
fn template_errors_say_what_a_key_can_see() {
    Test::new()
        .workflow(
            "[vars]\nthreads = 4\n\n[[tasks]]\nname = \"a\"\ncommand = \"echo\"\ncpus = \"{{ index }}\"\n\
             memory = \"{{ vars.thread }} GiB\"\n\n[[tasks]]\nname = \"b\"\ncommand = \"echo {{ vars.n * 2 }}\"\n",
        )
        .args(["check"])
        .stdout("")
        .stderr(
            r#"flow::compile::template

  × template error in `cpus`: `index` is undefined
   ╭─[workflow.toml:7:12]
 6 │ command = "echo"
 7 │ cpus = "{{ index }}"
   ·            ──┬──
   ·              ╰── undefined value
 8 │ memory = "{{ vars.thread }} GiB"
   ╰────
  help: `cpus` is worked out once for the task, before its instances exist, so it sees only
        `vars`, `env` and `attempt`, not `index`; use a variable (`{{ vars.NAME }}`)
flow::compile::template

  × template error in `memory`: `vars.thread` is undefined
   ╭─[workflow.toml:8:14]
 7 │ cpus = "{{ index }}"
 8 │ memory = "{{ vars.thread }} GiB"
   ·              ─────┬─────
   ·                   ╰── undefined value
 9 │ 
   ╰────
  help: did you mean `vars.threads`?
flow::compile::template

  × template error in `command`: `vars.n` is undefined (used in `echo {{ vars.n * 2 }}`)
    ╭─[workflow.toml:12:20]
 11 │ name = "b"
 12 │ command = "echo {{ vars.n * 2 }}"
    ·                    ───┬──
    ·                       ╰── undefined value
    ╰────
  help: templates see `vars`, `index`, `item`, `item_json`, `chunk`, `attempt`, `task`,
        `resources` and `env`; check the spelling, or add the variable to [vars]
error: 3 problems in workflow.toml
"#,
        )
        .invalid();
}

/// Issue 18: the tutorial's file broken in two places. `{{ itme | shell_quote }}`
/// passed `flow check` and rendered as `''`: a filter hid the undefined
/// name. Now both problems are reported, the first blamed on `itme`. The
/// tutorial shows this output.
#[test]
fn tutorial_file_broken_in_two_places_shows_both_problems() {
    let stderr = Test::new()
        .file("samples.txt", "alpha\nbeta\ngamma\ndelta\n")
        .workflow(
            r#"name = "lengths"

[vars]
samples = "samples.txt"

[[tasks]]
name = "measure"
each_line = "{{ vars.samples }}"
command = "echo {{ itme | shell_quote }} {{ item | length }} > sizes/{{ index }}.txt"
outputs = ["sizes/{{ index }}.txt"]

[[tasks]]
name = "report"
command = "sort -k2,2n sizes/*.txt > report.txt"
inputs = ["sizes/*.txt"]
outputs = ["report.txt"]

[[tasks]]
name = "shout"
for_each = "measure"
command = "tr '[:lower:]' '[:upper:]' < sizes/{{ index }}.txt > loud/{{ index }}.txt"
inputs = ["sizes/{{ index }}.txt"]
outputs = ["loud/{{ index }}.txt"]

[[tasks]]
name = "announce"
after = ["reprot", "shout"]
command = "echo 'all samples measured'"
"#,
        )
        .args(["check"])
        .stdout("")
        .invalid();
    insta::assert_snapshot!(stderr);
}
