//! What a test needs from the machine beyond Rust: Slurm, chromium, Podman,
//! root. Such tests are `#[ignore]`d with the reason; under
//! `--include-ignored` each asks here first. Without what it needs it is
//! skipped with a message on a developer's machine, so the README's test
//! command passes anywhere, and it fails under `CI=true`, where everything
//! is installed (issue 18: a skipped test used to pass as `ok` in CI;
//! issue 27: it used to fail on every machine without them).

/// Whether the test may go on: `true` when `found`; otherwise the test is
/// skipped with a message naming what it `needs` and how to get it, or,
/// under `CI=true`, fails with that message.
pub fn met(found: bool, needs: &str) -> bool {
    if !found {
        assert!(!in_ci(), "{needs}");
        eprintln!("skipped: {needs} (under CI=true this fails)");
    }
    found
}

/// Whether the tests run in CI (`CI=true`, as `.ci/run` and CI services set it).
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// A program on `PATH` runs with `args` and exits with 0.
pub fn runs(program: &str, args: &[&str]) -> bool {
    std::process::Command::new(program).args(args).output().is_ok_and(|o| o.status.success())
}
