//! A builder for CLI tests: a temporary directory with files, one `flow`
//! invocation, and assertions on its exit code and output — exact ones,
//! like just's `Test`, where the test states what it expects:
//!
//! ```ignore
//! Test::new()
//!     .workflow("[[tasks]]\nname = \"a\"\ncommand = \"true\"\n")
//!     .args(["check"])
//!     .stdout("ok: a (workflow.toml) — 1 task, 1 instance, 0 edges\n")
//!     .stderr("")
//!     .success();
//! ```
//!
//! Where the output holds what varies between runs (run ids, durations,
//! the temporary directory), `.stdout_normalized()`/`.stderr_normalized()`
//! compare after [`normalize`] on both sides: the expectation reads
//! `run [RUN]` and `[DIR]/out.txt`. `.stdout()`/`.stderr()` stay byte-exact.

pub mod copy;
pub mod needs;
pub mod normalize;
pub mod process;

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;

/// One `flow` invocation in a fresh temporary directory.
pub struct Test {
    dir: tempfile::TempDir,
    args: Vec<String>,
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
    timeout: Duration,
    expected_stdout: Option<Expected>,
    expected_stderr: Option<Expected>,
    expected_files: Vec<(String, String)>,
}

/// An expected stream, and whether it is compared [`normalize`]d.
struct Expected {
    text: String,
    normalized: bool,
}

/// What a finished invocation printed.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Test {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            timeout: Duration::from_secs(300),
            expected_stdout: None,
            expected_stderr: None,
            expected_files: Vec::new(),
        }
    }

    /// Writes `workflow.toml`.
    pub fn workflow(self, text: &str) -> Self {
        self.file("workflow.toml", text)
    }

    /// Writes a file (creating directories) relative to the test directory.
    pub fn file(self, path: &str, text: &str) -> Self {
        let full = self.dir.path().join(path);
        if let Some(parent) = full.parent() {
            fs_err::create_dir_all(parent).expect("create dirs");
        }
        fs_err::write(full, text).expect("write file");
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Runs in `dir` instead of the temporary directory.
    pub fn current_dir(mut self, dir: &Path) -> Self {
        self.cwd = Some(dir.to_path_buf());
        self
    }

    /// Sets an environment variable for `flow` (e.g. a fake `CUDA_VISIBLE_DEVICES`).
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Kills `flow` after `timeout` (the run then fails with code -1), so a
    /// hang is a failure rather than a stuck test suite.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The temporary directory (where `workflow.toml` is written).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn run(&self) -> Output {
        self.run_with(&self.args)
    }

    /// Runs with `args` instead of the builder's arguments.
    pub fn run_with<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Output {
        let out = Command::cargo_bin("flow")
            .expect("flow binary")
            .args(args)
            .current_dir(self.cwd.as_deref().unwrap_or(self.dir.path()))
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .timeout(self.timeout)
            .output()
            .expect("run flow");
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Expects exactly this on stdout from [`Test::success`], [`Test::invalid`] or [`Test::status`].
    pub fn stdout(mut self, expected: &str) -> Self {
        self.expected_stdout = Some(Expected { text: expected.to_owned(), normalized: false });
        self
    }

    /// Expects exactly this on stderr from [`Test::success`], [`Test::invalid`] or [`Test::status`].
    pub fn stderr(mut self, expected: &str) -> Self {
        self.expected_stderr = Some(Expected { text: expected.to_owned(), normalized: false });
        self
    }

    /// Like [`Test::stdout`], both sides [`Test::normalize`]d.
    pub fn stdout_normalized(mut self, expected: &str) -> Self {
        self.expected_stdout = Some(Expected { text: expected.to_owned(), normalized: true });
        self
    }

    /// Like [`Test::stderr`], both sides [`Test::normalize`]d.
    pub fn stderr_normalized(mut self, expected: &str) -> Self {
        self.expected_stderr = Some(Expected { text: expected.to_owned(), normalized: true });
        self
    }

    /// `text` with the test directory as `[DIR]` and run ids, durations and
    /// sizes masked (see [`normalize::normalize`]).
    pub fn normalize(&self, text: &str) -> String {
        normalize::normalize_in(text, self.path())
    }

    /// Expects the file at `path` (relative to the test directory) to hold
    /// exactly `expected` after the run.
    pub fn expect_file(mut self, path: &str, expected: &str) -> Self {
        self.expected_files.push((path.to_owned(), expected.to_owned()));
        self
    }

    /// Runs with the builder's arguments and asserts the exit code, then
    /// every expectation set with [`Test::stdout`], [`Test::stderr`] and
    /// [`Test::expect_file`], showing a diff for each that differs.
    pub fn status(&self, code: i32) -> Output {
        let out = self.run();
        let mut wrong = Vec::new();
        if out.code != code {
            wrong.push(format!("exit code: expected {code}, got {}", out.code));
        }
        let files = self.expected_files.iter().map(|(path, expected)| {
            let actual = fs_err::read_to_string(self.path().join(path)).unwrap_or_else(|e| format!("<{e}>"));
            (path.as_str(), Some((expected.clone(), actual)))
        });
        let stream = |expected: &Option<Expected>, actual: &str| {
            expected.as_ref().map(|e| match e.normalized {
                true => (self.normalize(&e.text), self.normalize(actual)),
                false => (e.text.clone(), actual.to_owned()),
            })
        };
        let streams = [
            ("stdout", stream(&self.expected_stdout, &out.stdout)),
            ("stderr", stream(&self.expected_stderr, &out.stderr)),
        ];
        for (what, compared) in streams.into_iter().chain(files) {
            if let Some((expected, actual)) = compared.filter(|(e, a)| e != a) {
                wrong.push(format!("{what} differs:\n{}", diff(&expected, &actual)));
            }
        }
        assert!(
            wrong.is_empty(),
            "flow {}\n{}\n--- stdout:\n{}\n--- stderr:\n{}",
            self.args.join(" "),
            wrong.join("\n"),
            out.stdout,
            out.stderr
        );
        out
    }

    /// Runs and asserts exit code 0 and the expectations; returns stdout.
    pub fn success(&self) -> String {
        self.status(0).stdout
    }

    /// Runs with `args` and asserts exit code 0; returns stdout.
    pub fn success_with(&self, args: &[&str]) -> String {
        let out = self.run_with(args);
        assert_eq!(out.code, 0, "expected success\nstdout:\n{}\nstderr:\n{}", out.stdout, out.stderr);
        out.stdout
    }

    /// Runs and asserts exit code 2 and the expectations; returns stderr.
    pub fn invalid(&self) -> String {
        self.status(2).stderr
    }
}

/// A unified line diff from `expected` to `actual`.
fn diff(expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual).unified_diff().header("expected", "actual").to_string()
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Writes an executable `name` into `dir/bin` and returns a `PATH` with it first.
pub fn program_on_path(dir: &Path, name: &str, script: &str) -> String {
    let bin = dir.join("bin");
    fs_err::create_dir_all(&bin).unwrap();
    let file = bin.join(name);
    fs_err::write(&file, script).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}
