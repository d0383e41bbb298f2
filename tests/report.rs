//! Issue 11: `flow report` and `flow run --report` write one self-contained
//! HTML page about a run: after a failure, after `kill -9`, and as a real
//! browser renders it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::run::run_ids;
use crate::support::Test;
use crate::support::process::{entries, lines, read, signal, spawn_flow, wait_child, wait_for};

/// Three tasks: an array that succeeds, one that fails with a message on
/// stderr, and one cancelled by that failure.
const FAILING: &str = r#"name = "docking"

[[tasks]]
name = "prep"
range = "1-3"
command = "echo prepared {{ index }}"

[[tasks]]
name = "score"
after = ["prep"]
command = "echo scoring; echo 'Traceback (most recent call last):' >&2; echo 'ValueError: bad pose' >&2; exit 3"

[[tasks]]
name = "collect"
after = ["score"]
command = "echo done"
"#;

/// Asserts the page loads nothing from elsewhere: no script, style sheet,
/// image or font from a URL.
fn assert_self_contained(html: &str) {
    for needle in ["http://", "https://", "<script src", "<link", "@import", "url(http", "src=\"//"] {
        assert!(!html.contains(needle), "the report refers to something outside it: `{needle}`");
    }
}

/// Asserts every section of the report is there.
fn assert_sections(html: &str) {
    for id in ["summary", "tasks", "failures", "timeline", "graph"] {
        assert!(html.contains(&format!(r#"<section id="{id}">"#)), "no section `{id}`");
    }
    for figure in [r#"<svg class="gantt""#, r#"<svg class="cpu""#, r#"<svg class="graph""#] {
        assert!(html.contains(figure), "no figure `{figure}`");
    }
}

/// Asserts the failure of `score` is listed with its location and stderr tail.
fn assert_failure_listed(html: &str) {
    let failure = html.split(r#"<div class="failure">"#).nth(1).expect("a failure is listed");
    assert!(failure.contains("<b>score</b>: exit code 3"), "{failure}");
    assert!(failure.contains(r#"<code class="location">workflow.toml:9:8</code>"#), "{failure}");
    assert!(
        failure.contains("<pre class=\"stderr\">Traceback (most recent call last):\nValueError: bad pose</pre>"),
        "{failure}"
    );
}

#[test]
fn a_failed_runs_report_lists_the_failure_with_its_location_and_stderr() {
    let t = Test::new().workflow(FAILING).args(["run"]);
    t.status(1);
    t.success_with(&["report", "-o", "report.html"]);
    let html = read(&t, "report.html");
    assert_sections(&html);
    assert_failure_listed(&html);
    assert_self_contained(&html);
    assert!(html.contains(r#"<span class="status failed">failed</span>"#));
    assert!(html.contains("<tr><th>Exit status</th><td>1 (failed)</td></tr>"));
    assert!(html.contains(" run</code></td></tr>"), "no command line");
}

#[test]
fn run_report_writes_the_page_when_a_task_fails() {
    let t = Test::new().workflow(FAILING).args(["run", "--report=out.html"]);
    let out = t.status(1);
    assert!(out.stderr.contains(": out.html ("), "{}", out.stderr);
    let html = read(&t, "out.html");
    assert_sections(&html);
    assert_failure_listed(&html);
    assert_self_contained(&html);
}

/// One task that succeeds.
const ONE_TASK: &str = "[[tasks]]\nname = \"a\"\ncommand = \"true\"\n";

/// The report files flow left in the test directory, beside the workflow:
/// none, since issue 27.
fn stray_reports(t: &Test) -> Vec<String> {
    entries(t.path()).into_iter().filter(|name| name.ends_with(".html")).collect()
}

/// Issue 18: `--report` never takes the workflow file as its value. Each
/// form the docs show runs workflow.toml and writes the default report; the
/// workflow file is left as it was (it used to be overwritten). Issue 27:
/// the default report is `report.html` in the run's directory, not a file
/// beside the workflow.
#[test]
fn report_without_a_value_never_takes_the_workflow_file() {
    for args in [&["run", "--report", "workflow.toml"][..], &["run", "workflow.toml", "--report"], &["run", "--report"]]
    {
        let t = Test::new().workflow(ONE_TASK).args(args).expect_file("workflow.toml", ONE_TASK);
        let out = t.status(0);
        let id = run_ids(t.path()).pop().unwrap();
        let page = format!(".flow/runs/{id}/report.html");
        assert_eq!(out.stdout, "", "flow {args:?}");
        let said = out.stderr.lines().last().and_then(|line| line.split_once(" (")).map(|(said, _)| said);
        assert_eq!(said, Some(format!("report of run {id}: {page}").as_str()), "{}", out.stderr);
        assert_eq!(stray_reports(&t), Vec::<String>::new(), "flow {args:?}");
        assert!(flow_engine::report::is_report(&t.path().join(&page)).unwrap(), "flow {args:?}");
    }
}

/// Issue 27: `flow report` writes into the run's directory, names the run
/// with `--run` as every command does, and still takes it positionally.
#[test]
fn flow_report_writes_into_the_runs_directory() {
    let t = Test::new().workflow(ONE_TASK).args(["run"]);
    t.success();
    t.success();
    let ids = run_ids(t.path());
    for args in [&["report"][..], &["report", "--run", &ids[0]], &["report", &ids[0][..]]] {
        let out = t.run_with(args);
        let id = if args.len() == 1 { &ids[1] } else { &ids[0] };
        let expected = format!("report of run {id}: .flow/runs/{id}/report.html");
        let said = out.stderr.split_once(" (").map(|(said, _)| said);
        assert_eq!((out.code, said), (0, Some(expected.as_str())), "flow {args:?}: {}", out.stderr);
    }
    assert_eq!(stray_reports(&t), Vec::<String>::new());
    let both = t.run_with(&["report", "--run", &ids[0], &ids[1]]);
    assert_eq!(both.code, 2, "{}", both.stderr);
}

/// Issue 18: `--report=FILE` and `flow report -o FILE` refuse to write over
/// a file flow did not write, before anything runs, with exit code 2.
#[test]
fn a_report_never_replaces_a_file_flow_did_not_write() {
    let refused = |file: &str| {
        format!(
            "error: `{file}` exists and is not a report flow wrote: not writing the report over it \
             (remove it or name another file)\n"
        )
    };
    let t = Test::new()
        .workflow(ONE_TASK)
        .file("notes.txt", "mine\n")
        .args(["run", "--report=notes.txt"])
        .stdout("")
        .stderr(&refused("notes.txt"))
        .expect_file("notes.txt", "mine\n");
    t.invalid();
    assert!(!t.path().join(".flow").exists(), "the run started");

    let t = Test::new().workflow(ONE_TASK).args(["run"]);
    t.success();
    let out = t.run_with(&["report", "-o", "workflow.toml"]);
    assert_eq!((out.code, out.stderr.as_str()), (2, refused("workflow.toml").as_str()));
    assert_eq!(read(&t, "workflow.toml"), ONE_TASK);
}

/// Issue 18: a report flow wrote may be replaced, by a run or by `flow report`.
#[test]
fn an_earlier_report_is_replaced() {
    let t = Test::new().workflow(ONE_TASK).args(["run", "--report=r.html"]);
    t.success();
    let first = read(&t, "r.html");
    t.success();
    t.success_with(&["report", "-o", "r.html"]);
    let last = read(&t, "r.html");
    assert_ne!(first, last, "the second run's report replaced the first");
    assert!(flow_engine::report::is_report(&t.path().join("r.html")).unwrap());
}

#[test]
fn a_run_killed_with_kill_9_has_a_report() {
    let t = Test::new().workflow(
        r#"
[[tasks]]
name = "step"
range = "1-20"
command = "sleep 0.2; echo {{ index }} >> done.txt"
"#,
    );
    let mut flow = spawn_flow(t.path(), &["run", "--cpus", "2"], "flow.stderr");
    let some_done = wait_for(Duration::from_secs(10), || lines(&t, "done.txt").len() >= 3);
    signal(flow.id(), "-KILL");
    wait_child(&mut flow, Duration::from_secs(5)).expect("flow exits after kill -9");
    assert!(some_done, "no task finished before the kill");
    assert!(lines(&t, "done.txt").len() < 20, "the run finished before it was killed");

    t.success_with(&["report", "-o", "killed.html"]);
    let html = read(&t, "killed.html");
    assert_sections(&html);
    assert_self_contained(&html);
    assert!(html.contains(r#"<span class="status unfinished">unfinished</span>"#));
    assert!(html.contains("none: the run did not end (killed, or still running)"));
    assert!(html.contains("<p>No task failed.</p>"));
}

/// Chromium's name on PATH, if it is installed.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Runs headless chromium on `page` with `args`; returns stdout and stderr.
fn headless(chromium: &Path, page: &Path, args: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().expect("profile dir");
    let out = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(page)
        .output()
        .expect("start chromium");
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The report as a browser shows it: the DOM chromium builds holds every
/// section and figure, the console has no error, and a screenshot is kept
/// under `target/report-screenshots/`. Then the report of a run of a million
/// instances stays under 10 MB.
///
/// Ignored, with the reason, unless `--include-ignored` is passed; then,
/// without chromium, it is skipped with a message, and fails under
/// `CI=true` (see [`crate::support::needs`]).
#[test]
#[ignore = "needs chromium (apt-get install chromium): pass --include-ignored"]
fn the_report_renders_in_chromium() {
    let found = chromium();
    if !crate::support::needs::met(found.is_some(), "needs chromium, which is not installed (apt-get install chromium)")
    {
        return;
    }
    let chromium = found.expect("chromium");
    let t = Test::new().workflow(FAILING).args(["run", "--report=report.html"]);
    t.status(1);
    let page = t.path().join("report.html");

    let (dom, _) = headless(&chromium, &page, &["--dump-dom"]);
    assert_sections(&dom);
    assert_failure_listed(&dom);
    for node in ["prep", "score", "collect"] {
        assert!(dom.contains(&format!(">{node}</text>")), "no node `{node}`");
    }
    assert!(dom.contains(r#"<rect class="attempt failed""#), "no bar of the failed attempt");
    // Every attempt reports its peak memory: the memory chart is there; no
    // task had a GPU: the GPU chart is not.
    assert!(dom.contains(r#"<svg class="memory""#) && dom.contains("<h3>Memory use</h3>"), "no memory chart");
    assert!(!dom.contains(r#"<svg class="gpu""#), "a GPU chart for a run without GPUs");

    let (_, log) = headless(&chromium, &page, &["--enable-logging=stderr", "--v=0", "--dump-dom"]);
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("Uncaught") || l.contains("ERROR:CONSOLE")).collect();
    assert!(errors.is_empty(), "console errors: {errors:#?}");

    let shots = crate::support::root().join("target/report-screenshots");
    fs_err::create_dir_all(&shots).expect("screenshot directory");
    let shot = shots.join("failed-run.png");
    let _ = fs_err::remove_file(&shot);
    headless(&chromium, &page, &[&format!("--screenshot={}", shot.display()), "--window-size=1280,2000"]);
    assert!(shot.is_file(), "no screenshot at {}", shot.display());

    // Past 2,000 attempts the lanes are binned: failures and retries are
    // still marked, a legend says what the shades mean, counts have commas.
    let many = Test::new()
        .workflow(
            "name = \"many\"\n[[tasks]]\nname = \"many\"\nrange = \"1-2100\"\nretries = 1\n\
             command = \"if [ {{ index }} = 7 ]; then exit 2; fi; \
             if [ $(({{ index }} % 500)) = 0 ] && [ ! -e f{{ index }} ]; then touch f{{ index }}; exit 1; fi\"\n",
        )
        .args(["run", "--cpus", "2", "--report=many.html"]);
    many.status(1);
    let (dom, _) = headless(&chromium, &many.path().join("many.html"), &["--dump-dom"]);
    assert_sections(&dom);
    assert!(dom.contains(r#"<rect class="bin""#), "the attempts are not binned");
    assert!(dom.contains(r#"<rect class="mark failed""#), "no mark where attempts failed");
    assert!(dom.contains(r#"<rect class="mark retried""#), "no mark where retries started");
    assert!(dom.contains("red under a bin: an attempt failed there"), "no legend");
    assert!(dom.contains("<td>2,100</td>"), "the instance count has no thousands separator");
    let shot = shots.join("binned-run.png");
    let _ = fs_err::remove_file(&shot);
    headless(
        &chromium,
        &many.path().join("many.html"),
        &[&format!("--screenshot={}", shot.display()), "--window-size=1280,2000"],
    );
    assert!(shot.is_file(), "no screenshot at {}", shot.display());

    let big = Test::new()
        .workflow("name = \"big\"\n[[tasks]]\nname = \"many\"\nrange = \"1-1000000\"\ncommand = \"true\"\n")
        .args(["run", "--dry-exec", "--report=big.html"]);
    big.success();
    let size = fs_err::metadata(big.path().join("big.html")).expect("big report").len();
    assert!(size < 10 << 20, "the report of a million instances is {size} bytes");
    let (dom, _) = headless(&chromium, &big.path().join("big.html"), &["--dump-dom"]);
    assert_sections(&dom);
    assert!(dom.contains(r#"<rect class="bin""#), "the attempts are not binned");
    assert!(dom.contains("<th>Dry run</th>"), "the dry run is not marked");
    assert!(dom.contains("<td>1,000,000</td>"), "the instance count has no thousands separators");
    assert!(!dom.contains("Longest attempts"), "a dry run shows wall times");
}

/// Issue 27: a task from an included file is located in that file, on the
/// page as in `flow run`'s lines — not past the end of the workflow file
/// (the page escapes `/` as `&#x2f;`).
#[test]
fn an_included_tasks_location_is_in_its_own_file() {
    let t = Test::new()
        .workflow("include = [\"lib/qc.toml\"]\n\n[[tasks]]\nname = \"top\"\ncommand = \"true\"\n")
        .file("lib/qc.toml", "[[tasks]]\nname = \"best\"\n\ncommand = \"echo no >&2; exit 2\"\n")
        .args(["run"]);
    let out = t.status(1);
    assert!(out.stderr.contains("✗ qc.best failed: exit code 2 (lib/qc.toml:2:8)"), "{}", out.stderr);
    t.success_with(&["report", "-o", "report.html"]);
    let html = read(&t, "report.html");
    assert!(
        html.contains(r#"<b>qc.best</b>: exit code 2 <code class="location">lib&#x2f;qc.toml:2:8</code>"#),
        "{html}"
    );
    assert!(html.contains(r#"<b>qc.best</b><br><code class="muted">lib&#x2f;qc.toml:2:8</code>"#), "{html}");
    assert!(html.contains(r#"<b>top</b><br><code class="muted">workflow.toml:4:8</code>"#), "{html}");
}
