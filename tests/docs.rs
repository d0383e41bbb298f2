//! The commands the docs show, run and compared with the output the docs
//! show. Each console block of the pages below (`$ command` lines, each
//! followed by what it prints, stdout and stderr together) runs with `sh`
//! in a scratch directory, with the `flow` under test first on `PATH`;
//! `sh` blocks run too, their output unchecked.
//!
//! An HTML comment before a block, invisible in the book, says where it
//! runs and what it needs; several may stand before one block:
//!
//! - `<!-- doc-test: examples/workflows/NAME -->`: the blocks from here on
//!   run in a new scratch copy of that example (at the same path under a
//!   scratch root, so `flow` finds no `.flow` of the repository);
//! - `<!-- doc-test: in DIR -->`: … in DIR, relative to the scratch root
//!   (`in .`: the root, as the repository's root);
//! - `<!-- doc-test: empty -->`: … in a new empty scratch directory;
//! - `<!-- doc-test: after PAGE until HEADING -->`: the next block runs
//!   where PAGE's blocks up to the line HEADING, run first (and checked),
//!   left off (a page goes on from the tutorial's workflow and runs); the
//!   blocks after it run where they did before;
//! - `<!-- doc-test: write FILE -->`: the next block is the contents of
//!   FILE in the current directory (a TOML block the page asks to write);
//! - `<!-- doc-test: status N -->`: the next block's last command exits
//!   with N (every other command must exit with 0); `status N M …`: its
//!   commands exit with N, M, … in turn;
//! - `<!-- doc-test: skip REASON -->`: the next block is not run, for the
//!   reason given (it needs a cluster, another machine, a terminal); its
//!   output still has the shape flow prints today (see
//!   [`skipped_blocks_show_what_flow_prints_today`]).
//!
//! A page's blocks before its first scratch directory run in an empty one.
//! `$ cd DIR` changes the directory for the page's next commands.
//! In the shown output, `[..]` stands for any text within a line and
//! `...` on a line of its own for any lines, as in trycmd. Run ids,
//! durations and sizes (`20261123-122534-966`, `0.1s`, `22.1 MiB`) are
//! masked on both sides, so a page can show real ones; so are the widths
//! of the gaps between table columns.
//!
//! Own harness rather than trycmd: a trycmd `.md` case runs in one fixture
//! directory per page and starts programs without a shell, while a page
//! here runs several examples, writes the files it shows and uses `sed`
//! and `cat`. The wildcards are trycmd's, so a block reads the same to both.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::copy::{copy_example, init_repository};
use crate::support::normalize::normalize;
use crate::support::root;

/// One test per page whose commands run: pages run side by side, and a
/// failure names its page.
macro_rules! pages {
    ($($name:ident: $page:literal,)*) => {
        /// The pages whose commands run.
        const PAGES: &[&str] = &[$($page),*];
        $(
            #[test]
            fn $name() {
                check_page($page);
            }
        )*
    };
}

pages! {
    readme: "README.md",
    tutorial: "docs/tutorial.md",
    guide_running: "docs/guide/running.md",
    guide_resume: "docs/guide/resume.md",
    guide_failures: "docs/guide/failures.md",
    guide_includes: "docs/guide/includes.md",
    guide_conditions: "docs/guide/conditions.md",
    guide_report: "docs/guide/report.md",
    guide_cluster: "docs/guide/cluster.md",
    guide_scale: "docs/guide/scale.md",
    guide_containers: "docs/guide/containers.md",
    guide_editor_setup: "docs/guide/editor-setup.md",
    reference_cli: "docs/reference/cli.md",
}

/// How long one command may take.
const TIMEOUT: Duration = Duration::from_secs(120);

/// What a directive comment says about the next block or the next blocks.
#[derive(Debug, Default)]
struct Directives {
    write: Option<String>,
    status: Vec<i32>,
    skip: Option<String>,
    /// Where another page left off, and its scratch directory.
    after: Option<(PathBuf, tempfile::TempDir)>,
}

/// A fenced block of a page.
#[derive(Debug)]
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    info: String,
    text: String,
}

/// One command of a console block and what the page says it prints.
#[derive(Debug, PartialEq)]
struct Step {
    command: String,
    expected: String,
    /// Lines of the block before its expected output.
    at: usize,
}

/// Runs the blocks of `page` and fails with every difference.
fn check_page(page: &str) {
    check_page_in(page, None);
}

/// Runs the blocks of `page`, those in an example in `clone` (a copy of
/// the repository) when given, and fails with every difference.
fn check_page_in(page: &str, clone: Option<&Path>) {
    let mut failures = Vec::new();
    let _ = run_page(page, None, clone, &mut failures);
    assert!(failures.is_empty(), "{} commands of {page} differ:\n\n{}", failures.len(), failures.join("\n\n"));
}

/// Runs the blocks of `page` (up to the line `until`), adding each
/// difference to `failures`; returns the directory it ended in and its
/// last scratch directory, which holds it.
fn run_page(
    page: &str,
    until: Option<&str>,
    clone: Option<&Path>,
    failures: &mut Vec<String>,
) -> (PathBuf, tempfile::TempDir) {
    // `FLOW_DOCS=overwrite`: write what flow printed into the page instead
    // of failing (then read the diff: wildcards are lost where it differed).
    let overwrite = std::env::var_os("FLOW_DOCS").is_some_and(|v| v == "overwrite");
    let mut rewrites: Vec<(usize, usize, String)> = Vec::new();
    let text = fs_err::read_to_string(root().join(page)).expect("read page");
    let mut scratch = tempfile::tempdir().expect("scratch dir");
    let mut cwd = scratch.path().to_path_buf();
    let mut next = Directives::default();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim();
        if until == Some(trimmed) {
            break;
        }
        if let Some(directive) = trimmed.strip_prefix("<!-- doc-test:").and_then(|d| d.strip_suffix("-->")) {
            let directive = directive.trim();
            let (key, rest) = directive.split_once(' ').unwrap_or((directive, ""));
            match key {
                "empty" => {
                    scratch = tempfile::tempdir().expect("scratch dir");
                    cwd = scratch.path().to_path_buf();
                }
                _ if key.starts_with("examples/") => {
                    scratch = tempfile::tempdir().expect("scratch dir");
                    cwd = scratch.path().join(key);
                    match clone {
                        Some(clone) => cwd = clone.join(key),
                        None => copy_example(&root().join(key), &cwd),
                    }
                }
                "in" => cwd = clone.unwrap_or(scratch.path()).join(rest.trim()),
                "after" => {
                    let (other, until) = rest.split_once(" until ").expect("`after PAGE until HEADING`");
                    let (dir, there) = run_page(other.trim(), Some(until.trim()), clone, failures);
                    next.after = Some((dir, there));
                }
                "write" => next.write = Some(rest.trim().to_owned()),
                "status" => next.status = rest.split_whitespace().map(|n| n.parse().expect("`status N`")).collect(),
                "skip" if !rest.trim().is_empty() => next.skip = Some(rest.trim().to_owned()),
                _ => failures.push(format!("{page}:{}: unknown doc-test directive `{directive}`", n + 1)),
            }
            continue;
        }
        let Some(info) = trimmed.strip_prefix("```") else { continue };
        let indent = line.len() - line.trim_start().len();
        let mut block = Block { line: n + 1, info: info.trim().to_owned(), text: String::new() };
        for (_, line) in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            block.text.push_str(line.get(indent..).unwrap_or(line.trim_start()));
            block.text.push('\n');
        }
        let mut directives = std::mem::take(&mut next);
        let (_there, back) = match directives.after.take() {
            Some((dir, there)) => (Some(there), Some(std::mem::replace(&mut cwd, dir))),
            None => (None, None),
        };
        if directives.skip.is_some() {
            continue;
        }
        if let Some(file) = &directives.write {
            let path = cwd.join(file);
            fs_err::create_dir_all(path.parent().expect("parent")).expect("create dirs");
            fs_err::write(path, &block.text).expect("write file");
            continue;
        }
        let steps = match block.info.as_str() {
            "console" => console_steps(&block.text),
            "sh" | "bash" | "shell" => block
                .text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.trim().starts_with('#'))
                .map(|l| Step { command: l.to_owned(), expected: String::new(), at: 0 })
                .collect(),
            _ => continue,
        };
        let checked = block.info == "console";
        for (i, step) in steps.iter().enumerate() {
            let status = match directives.status.as_slice() {
                [last] if i + 1 == steps.len() => *last,
                codes if codes.len() == steps.len() => codes[i],
                _ => 0,
            };
            let (code, output) = match step.command.split('#').next().unwrap_or_default().trim().strip_prefix("cd ") {
                Some(dir) => {
                    cwd = cwd.join(dir.trim());
                    (Some(if cwd.is_dir() { 0 } else { 1 }), String::new())
                }
                None => run(&step.command, &cwd),
            };
            let mut wrong = Vec::new();
            if code != Some(status) {
                wrong.push(format!("exit status {code:?}, expected {status}"));
            }
            if checked && overwrite && !matches(&step.expected, &output) {
                let first = block.line + step.at;
                rewrites.push((first, first + step.expected.lines().count(), output.clone()));
            } else if checked && !matches(&step.expected, &output) {
                wrong.push(format!(
                    "output differs (- the page, + flow):\n{}",
                    similar::TextDiff::from_lines(&step.expected, &output).unified_diff()
                ));
            }
            if !wrong.is_empty() {
                failures.push(format!(
                    "{page}:{}: $ {}\n{}\n--- output:\n{output}",
                    block.line,
                    step.command,
                    wrong.join("\n")
                ));
            }
        }
        if let Some(back) = back {
            cwd = back;
        }
    }
    if !rewrites.is_empty() {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for (from, to, output) in rewrites.into_iter().rev() {
            lines.splice(from..to, output.lines().map(str::to_owned));
        }
        fs_err::write(root().join(page), lines.join("\n") + "\n").expect("rewrite page");
    }
    (cwd, scratch)
}

/// The `$ ` commands of a console block, each with the lines up to the
/// next command. A command ending in `\` goes on on the next line.
fn console_steps(text: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut continued = false;
    for (n, line) in text.lines().enumerate() {
        if continued && let Some(step) = steps.last_mut() {
            step.command.push('\n');
            step.command.push_str(line);
            step.at = n + 1;
            continued = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            continued = command.ends_with('\\');
            steps.push(Step { command: command.to_owned(), expected: String::new(), at: n + 1 });
        } else if let Some(step) = steps.last_mut() {
            step.expected.push_str(line);
            step.expected.push('\n');
        }
    }
    steps
}

/// Runs `command` with `sh` in `dir`, stderr into stdout: its exit code
/// and output.
fn run(command: &str, dir: &Path) -> (Option<i32>, String) {
    let flow = PathBuf::from(env!("CARGO_BIN_EXE_flow"));
    let path = std::env::join_paths(
        std::iter::once(flow.parent().expect("bin dir").to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH");
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!("exec 2>&1\n{command}")).current_dir(dir).env("PATH", path).env("NO_COLOR", "1");
    for var in ["CLICOLOR_FORCE", "FLOW_SHARE_WITH_GROUP", "CUDA_VISIBLE_DEVICES"] {
        cmd.env_remove(var);
    }
    let out = assert_cmd::Command::from_std(cmd).timeout(TIMEOUT).output().expect("run sh");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether `actual` is what `expected` shows, with its wildcards, once
/// run ids and durations are masked on both sides.
fn matches(expected: &str, actual: &str) -> bool {
    let (expected, actual) = (normalize(expected), normalize(actual));
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = actual.lines().collect();
    lines_match(&expected, &actual)
}

fn lines_match(expected: &[&str], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((&"...", rest)) => (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..])),
        Some((first, rest)) => {
            actual.split_first().is_some_and(|(line, more)| line_matches(first, line) && lines_match(rest, more))
        }
    }
}

/// One line, `[..]` matching any text.
fn line_matches(expected: &str, actual: &str) -> bool {
    let mut parts = expected.split("[..]");
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = actual.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The tutorial's steps, in order, in a clone of the repository, and then
/// the example test there: the runs the tutorial makes inside an example
/// never reach the example test (issue 27: they used to make it fail,
/// `cached 10, succeeded 4`).
#[test]
fn the_example_test_passes_after_the_tutorial() {
    let clone = tempfile::tempdir().expect("clone dir");
    let examples = clone.path().join("examples");
    copy_example(&root().join("examples"), &examples);
    init_repository(clone.path());
    check_page_in("docs/tutorial.md", Some(clone.path()));
    let left = examples.join("workflows/hit-refinement/.flow");
    assert!(left.is_dir(), "the tutorial runs inside the example: {} is missing", left.display());
    crate::run::run_every_example(&examples.join("workflows"));
}

/// A line's shape: what varies masked, numbers as `#`, gaps of any width as
/// one space, and singular and plural alike.
fn shape(line: &str) -> String {
    let mut masked = String::new();
    for c in normalize(line).chars() {
        match c.is_ascii_digit() {
            true if masked.ends_with('#') => {}
            true => masked.push('#'),
            false => masked.push(c),
        }
    }
    let words: Vec<&str> = masked.split_whitespace().collect();
    words.join(" ").replace("instances", "instance").replace("tasks", "task")
}

/// Which line of a command's output shows its shape, for the commands whose
/// output skipped blocks show most: (the command, the line, how many of
/// its comma-separated parts are compared).
const SHAPES: &[(&str, usize, usize)] = &[("run", 0, 1), ("runs", 0, 1), ("status", 1, 2), ("log list", 0, 1)];

/// The shape of `line` as [`SHAPES`] compares it.
fn shape_parts(line: &str, parts: usize) -> String {
    shape(line).split(',').take(parts).collect::<Vec<_>>().join(",")
}

/// The `flow` subcommand of `command` among [`SHAPES`], when its output is
/// shown in full (not filtered, not in another format).
fn shaped(command: &str) -> Option<(&'static str, usize, usize)> {
    let rest = command.split_whitespace().skip_while(|w| w.contains('=')).collect::<Vec<_>>().join(" ");
    let rest = rest.split('#').next()?.trim().strip_prefix("flow ")?;
    if rest.contains('|') || rest.contains("--format") || rest.contains("--columns") || rest.contains("--json") {
        return None;
    }
    SHAPES.iter().rev().find(|(verb, ..)| rest == *verb || rest.starts_with(&format!("{verb} "))).copied()
}

/// Console blocks marked `skip` show the output of flow as it is today:
/// the first line of `flow run`, the header of `flow runs` and `flow log
/// list` and the counts of `flow status` have the shape they have when run
/// (issue 27: skipped blocks kept `10 tasks` and old columns).
#[test]
fn skipped_blocks_show_what_flow_prints_today() {
    let example = tempfile::tempdir().expect("scratch dir");
    copy_example(&root().join("examples/workflows/hello"), example.path());
    let real = |command: &str, line: usize| {
        let (code, output) = run(&format!("flow {command} 2>&1"), example.path());
        assert_eq!(code, Some(0), "flow {command}: {output}");
        output.lines().nth(line).unwrap_or_default().to_owned()
    };
    let today: Vec<(&str, usize, usize, String)> =
        SHAPES.iter().map(|&(verb, line, parts)| (verb, line, parts, real(verb, line))).collect();
    let mut stale = Vec::new();
    for page in PAGES {
        let text = fs_err::read_to_string(root().join(page)).expect("read page");
        let mut lines = text.lines().enumerate();
        while let Some((n, line)) = lines.next() {
            if !line.trim().starts_with("<!-- doc-test: skip") {
                continue;
            }
            let Some((_, fence)) = lines.next().filter(|(_, l)| l.trim() == "```console") else { continue };
            let indent = fence.len() - fence.trim_start().len();
            let block: String = lines
                .by_ref()
                .map(|(_, l)| l)
                .take_while(|l| l.trim() != "```")
                .map(|l| format!("{}\n", l.get(indent..).unwrap_or(l.trim_start())))
                .collect();
            for step in console_steps(&block) {
                let Some((verb, line, parts)) = shaped(&step.command) else { continue };
                let Some(shown) = step.expected.lines().nth(line).filter(|l| !l.starts_with("error:")) else {
                    continue;
                };
                let (.., now) = today.iter().find(|(v, ..)| *v == verb).expect("a shape");
                if shape_parts(shown, parts) != shape_parts(now, parts) {
                    stale.push(format!("{page}:{}: $ {}\n  shows: {shown}\n  today: {now}", n + 2, step.command));
                }
            }
        }
    }
    assert!(stale.is_empty(), "skipped blocks that no longer show what flow prints:\n{}", stale.join("\n"));
}

#[test]
fn shapes_mask_numbers_widths_and_plurals() {
    assert_eq!(
        shape("run 20261123-122534-966: 1 instance of 1 task"),
        shape("run 20261129-050033-981: 10 instances of 4 tasks")
    );
    assert_ne!(shape("run 20261123-122534-966: 10 tasks"), shape("run 20261129-050033-981: 10 instances of 4 tasks"));
    assert_ne!(
        shape("TASK  STATE  EXIT  DURATION  STDOUT  STDERR"),
        shape("TASK STATE EXIT DURATION CPU RSS STDOUT STDERR")
    );
    assert_eq!(shaped("CUDA_VISIBLE_DEVICES=0,1 flow run --cpus 4     # four"), Some(("run", 0, 1)));
    assert_eq!(shaped("flow runs"), Some(("runs", 0, 1)));
    assert_eq!(shaped("flow log list --columns task"), None);
    assert_eq!(shaped("flow log list 'dock[1]'"), Some(("log list", 0, 1)));
}

#[test]
fn wildcards_match_as_in_trycmd() {
    assert!(matches("run 1 [..] in 0.1s\n", "run 1 of 3 tasks in 2.5s\n"));
    assert!(matches("a\n...\nz\n", "a\nb\nc\nz\n"));
    assert!(matches("a\n...\nz\n", "a\nz\n"));
    assert!(!matches("a\nz\n", "a\nb\nz\n"));
    assert!(matches("[..]/x.csv\n", "/tmp/abc/x.csv\n"));
    assert!(!matches("[..]/x.csv\n", "/tmp/abc/x.csvz\n"));
    assert!(matches("run 20261123-122534-966: 3 tasks\n", "run 20270101-000000-001: 3 tasks\n"));
}

#[test]
fn console_blocks_split_into_commands_and_output() {
    let steps = console_steps("$ flow run \\\n  --cpus 1\nrun x\n$ cat a\nb\n");
    assert_eq!(
        steps,
        [
            Step { command: "flow run \\\n  --cpus 1".into(), expected: "run x\n".into(), at: 2 },
            Step { command: "cat a".into(), expected: "b\n".into(), at: 4 },
        ]
    );
}
