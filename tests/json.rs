//! Issue 11: every command's `--json` on one fixed run — a failure, then a
//! rerun that skips what did not change — snapshotted with times, sizes,
//! paths, run ids and host names redacted.

use crate::support::{Output, Test};

const WORKFLOW: &str = r#"
name = "json"

[[tasks]]
name = "prep"
command = "echo prep"

[[tasks]]
name = "score"
range = "1-3"
command = "echo scoring {{ index }}; test {{ index }} -ne 2 || { echo bad input >&2; exit 3; }"
after = ["prep"]

[[tasks]]
name = "report"
command = "echo done"
after = ["score"]
"#;

/// Snapshots `out` (stdout, then the exit code when it is not 0) with what
/// changes from run to run redacted.
fn snapshot(name: &str, t: &Test, out: &Output) {
    let dir = t.path().canonicalize().expect("test dir").display().to_string();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_owned();
    let mut filters = vec![
        (regex_escape(&dir), "[DIR]".to_owned()),
        (regex_escape(&t.path().display().to_string()), "[DIR]".to_owned()),
        (r"\d{8}-\d{6}-\d{3}".to_owned(), "[RUN]".to_owned()),
        (r#""(\w+_us|rss_bytes|median|max|memory_bytes|bytes)": ?\d+"#.to_owned(), r#""$1": "[N]""#.to_owned()),
        (r#""cpu_percent": ?[\d.]+"#.to_owned(), r#""cpu_percent": "[N]""#.to_owned()),
        (r#""(read_bytes|write_bytes)": ?\d+"#.to_owned(), r#""$1": "[N]""#.to_owned()),
        // Sampled: a short task may end before the first sample (issue 28).
        (r#""(peak_vmem_bytes|rchar|wchar)": ?(\d+|null)"#.to_owned(), r#""$1": "[N]""#.to_owned()),
        (r#""fingerprint": ?"[0-9a-f]{64}""#.to_owned(), r#""fingerprint": "[FINGERPRINT]""#.to_owned()),
        (r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC".to_owned(), "[TIME]".to_owned()),
        (r"\b\d+(\.\d+s|m\d\ds|h\d\dm)".to_owned(), "[DURATION]".to_owned()),
        (r#""location": ?"[^"]*""#.to_owned(), r#""location": "[LOC]""#.to_owned()),
    ];
    if !host.is_empty() {
        filters.push((format!("\"{}\"", regex_escape(&host)), "\"[HOST]\"".to_owned()));
        filters.push((format!("\\({}\\)", regex_escape(&host)), "([HOST])".to_owned()));
    }
    let text = if out.code == 0 { out.stdout.clone() } else { format!("{}[exit code {}]\n", out.stdout, out.code) };
    let filters: Vec<(&str, &str)> = filters.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    insta::with_settings!({ filters => filters }, {
        insta::assert_snapshot!(name, text);
    });
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '-' { c.to_string() } else { format!("\\{c}") }
        })
        .collect()
}

#[test]
fn every_command_speaks_one_vocabulary() {
    let t = Test::new().workflow(WORKFLOW);
    let json = |name: &str, args: &[&str]| snapshot(name, &t, &t.run_with(args));
    json("check", &["check", "--json"]);
    json("plan_why_first", &["plan", "--why", "--json"]);
    json("run_first", &["run", "--json", "--cpus", "1"]);
    json("plan_why_again", &["plan", "--why", "--json"]);
    json("run_again", &["run", "--json", "--cpus", "1"]);
    json("status", &["status", "--json"]);
    json("runs", &["runs", "--json"]);
    json("workers", &["workers", "--json"]);
    json("explain", &["explain", "score", "--json"]);
    json("log_list", &["log", "list", "--json"]);
    json("log_summary", &["log", "summary", "--json"]);
    json("log_grep", &["log", "grep", "--json", "scoring"]);
    json("log_export", &["log", "export", "--json", "score[2]"]);
    json("log_cat", &["log", "cat", "--json", "score[2]"]);
    json("log_tail", &["log", "tail", "--json", "score"]);
    json("alloc_list", &["alloc", "list", "--json"]);
    json("report", &["report", "--json", "-o", "report.html"]);
}

#[test]
fn check_json_lists_every_problem_with_the_same_exit_code() {
    let t = Test::new().workflow(
        "[[tasks]]\nname = \"a\"\ncommand = \"true\"\nafter = [\"nope\"]\n\n\
         [[tasks]]\nname = \"a\"\ncommand = \"true\"\ncpus = -1\n",
    );
    let out = t.run_with(&["check", "--json"]);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    snapshot("check_invalid", &t, &out);
}
