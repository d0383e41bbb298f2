//! The `note:` lines of `flow check` on valid workflows: data put into a
//! shell command unquoted, and scripts flow cannot track (issue 18).

use crate::support::Test;

/// Issue 18: the quoting note follows the data, not the template's text. It
/// is silent for numbers made from an item, and catches an item passed
/// through `{% set %}` or a loop, and a filter after `shell_quote`.
#[test]
fn the_quoting_note_follows_the_data() {
    let task = |name: &str, command: &str| {
        format!("[[tasks]]\nname = \"{name}\"\neach_line = \"lines.txt\"\ncommand = \"{command}\"\n")
    };
    let workflow = [
        task("numbers", "echo {{ item | length }} {{ index }} {{ index * 2 + 1 }} > /dev/null"),
        task("set", "{% set x = item %}echo {{ x }}"),
        task("loop", "{% for c in [item] %}echo {{ c }}{% endfor %}"),
        task("requoted", "echo {{ item | shell_quote | replace('a', 'b') }}"),
        task("quoted", "echo {{ item | upper | shell_quote }}"),
    ]
    .concat();
    Test::new()
        .file("lines.txt", "a\nb\n")
        .workflow(&workflow)
        .args(["check"])
        .stdout(
            "note: workflow.toml:6:8: `set` puts `{{ item }}`, read from a data file, into its shell command \
             unquoted, so shell syntax in the data runs; write `{{ item | shell_quote }}`\n\
             note: workflow.toml:10:8: `loop` puts `{{ item }}`, read from a data file, into its shell command \
             unquoted, so shell syntax in the data runs; write `{{ item | shell_quote }}`\n\
             note: workflow.toml:14:8: `requoted` changes `{{ item | shell_quote }}` with a filter after \
             `shell_quote`, which can undo the quoting of data read from a file; make `shell_quote` the last filter\n\
             ok: workflow (workflow.toml) — 5 tasks, 10 instances, 0 edges\n",
        )
        .stderr("")
        .success();
}

/// Issue 18: a script the shell finds through a variable is not tracked;
/// `flow check` says so, once per task, and how to track it.
#[test]
fn scripts_flow_cannot_track_are_noted() {
    Test::new()
        .file("helper.sh", "echo hi\n")
        .workflow(
            r#"
[[tasks]]
name = "helped"
range = "1-3"
command = "sh $PWD/helper.sh {{ index }}; python3 ./gone.py"

[[tasks]]
name = "declared"
command = "sh $PWD/helper.sh"
inputs = ["helper.sh"]
"#,
        )
        .args(["check"])
        .stdout(
            "note: workflow.toml:3:8: `helped` runs `$PWD/helper.sh` (the shell expands it) and `./gone.py` (no \
             such file), which flow does not track: editing one does not rerun the task; to track it, add its \
             path from the workflow directory to the task's `inputs`\n\
             ok: workflow (workflow.toml) — 2 tasks, 4 instances, 0 edges\n",
        )
        .stderr("")
        .success();
}

/// Issue 29: a `setup` line is a shell string of the instance like its
/// command, and the quoting note covers it: `$(touch …)` in a line of the
/// data used to run from `setup = ["echo {{ item }}"]` unnoted.
#[test]
fn the_quoting_note_covers_setup_lines() {
    let t = Test::new()
        .file("lines.txt", "$(touch pwned)\n")
        .workflow(
            "[[tasks]]\nname = \"prep\"\neach_line = \"lines.txt\"\nsetup = [\"echo {{ item }}\", \"echo \\\"{{ item | shell_quote }}\\\"\"]\ncommand = \"true\"\n",
        )
        .args(["check"])
        .stdout(
            "note: workflow.toml:2:8: `prep` puts `{{ item }}`, read from a data file, into a `setup` line \
             unquoted, so shell syntax in the data runs; write `{{ item | shell_quote }}`\n\
             note: workflow.toml:2:8: `prep` puts `{{ item | shell_quote }}` inside quotes of a `setup` line, where \
             its own quotes are taken literally and shell syntax in the data runs; write it outside quotes\n\
             ok: workflow (workflow.toml) — 1 task, 1 instance, 0 edges\n",
        )
        .stderr("");
    t.success();
}
