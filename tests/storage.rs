//! Run files that cannot be written: a full disk stops the run with exit
//! code 74, and nothing recorded as done has lost its output (issue 12).
//!
//! These tests mount a small tmpfs, which needs root: they are ignored,
//! with the reason, unless `--include-ignored` is passed; then, where
//! mounting fails, they are skipped with a message, and fail under
//! `CI=true` (see [`crate::support::needs`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run::{assert_code, run_ids, statuses};
use crate::support::Test;

/// A tmpfs mounted on a fresh directory, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// Mounts a tmpfs of `size` (e.g. "1m"); `None` (the test is skipped)
    /// where that is not allowed.
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().expect("temp dir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .is_ok_and(|out| out.status.success());
        let needs = "needs root: cannot mount a small tmpfs (run the tests as root)";
        crate::support::needs::met(mounted, needs).then_some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Makes the disk larger (as an operator freeing space would).
    fn grow(&self, size: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(self.path())
            .status()
            .expect("remount");
        assert!(status.success());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}

fn workflow_in(disk: &SmallDisk, text: &str) -> (Test, PathBuf) {
    let dir = disk.path().join("w");
    fs_err::create_dir(&dir).unwrap();
    fs_err::write(dir.join("workflow.toml"), text).unwrap();
    (Test::new().current_dir(&dir), dir)
}

/// 3,000 instances each print 1 KiB into a 1 MiB disk: the log fills up,
/// then the journal. The run stops with 74; every instance its journal
/// records as succeeded has its whole output in the log, and the next run
/// (with space again) runs exactly the others.
#[test]
#[ignore = "needs root to mount a small tmpfs: run as root and pass --include-ignored"]
fn a_full_disk_stops_the_run_and_loses_no_recorded_output() {
    let Some(disk) = SmallDisk::mount("1m") else { return };
    let (t, dir) = workflow_in(
        &disk,
        "[[tasks]]\nname = \"say\"\nrange = \"0-2999\"\n\
         command = \"printf %01024d {{ index }}\"\n",
    );
    let out = t.run_with(&["run", "--cpus", "2"]);
    assert_code(&out, 74);
    assert!(out.stderr.contains("No space left on device"), "{}", out.stderr);
    assert!(out.stderr.contains("the run stopped"), "{}", out.stderr);

    disk.grow("200m");
    let first = run_ids(&dir).pop().expect("the first run");
    let recorded = statuses(&t, Some(&first));
    let succeeded: Vec<&String> = recorded.iter().filter(|(_, s)| *s == "succeeded").map(|(l, _)| l).collect();
    assert!(!succeeded.is_empty() && succeeded.len() < 3000, "{} succeeded", succeeded.len());
    // Issue 18: the summary counts what the journal holds, not more.
    assert_eq!(crate::run::last_summary(&dir)["succeeded"], serde_json::json!(succeeded.len()));
    let told = format!(": {} succeeded", succeeded.len());
    assert!(out.stderr.contains(&told), "{told} in {}", out.stderr);
    for label in &succeeded {
        let index: usize = label.trim_start_matches("say[").trim_end_matches(']').parse().unwrap();
        let cat = t.success_with(&["log", "--run", &first, "cat", label.as_str()]);
        assert_eq!(cat, format!("{index:01024}"), "{label}: recorded as succeeded, its output must be whole");
    }

    let out = t.run_with(&["run", "--cpus", "2"]);
    assert_code(&out, 0);
    let again = statuses(&t, None);
    let ran = again.values().filter(|s| *s == "succeeded").count();
    assert_eq!(ran + succeeded.len(), 3000, "exactly the unrecorded instances ran again");
}

/// Instances with no output on a 256 KiB disk: the journal fills it. The
/// run stops at once with 74 instead of running everything unrecorded (on
/// a full disk 3,000 instances used to run with 1,002 recorded).
#[test]
#[ignore = "needs root to mount a small tmpfs: run as root and pass --include-ignored"]
fn a_journal_that_cannot_be_written_stops_the_run() {
    let Some(disk) = SmallDisk::mount("256k") else { return };
    let outside = tempfile::tempdir().unwrap();
    let ran = outside.path().join("ran.txt");
    let (t, dir) = workflow_in(
        &disk,
        &format!(
            "[[tasks]]\nname = \"quiet\"\nrange = \"1-8000\"\ncommand = \"echo {{{{ index }}}} >> {}\"\n",
            ran.display()
        ),
    );
    let out = t.run_with(&["run", "--cpus", "2"]);
    assert_code(&out, 74);
    assert!(out.stderr.contains("the journal could not be written; the run stopped"), "{}", out.stderr);
    assert!(out.stderr.contains("cannot write the journal"), "{}", out.stderr);
    let ran_first = fs_err::read_to_string(&ran).unwrap().lines().count();
    assert!(ran_first < 8000, "the run went on after the journal failed: {ran_first} ran");

    // Issue 18: the run ended in order, with 74: it is `failed: storage`,
    // not `crashed`, even though the disk is still full.
    let first = run_ids(&dir).pop().expect("the first run");
    assert_ended_on_storage(&t, &first);

    disk.grow("200m");
    let recorded = statuses(&t, Some(&first)).values().filter(|s| *s == "succeeded").count();
    // Issue 18: the summary counts what the journal holds, not more.
    assert_eq!(crate::run::last_summary(&dir)["succeeded"], serde_json::json!(recorded));
    assert!(out.stderr.contains(&format!(": {recorded} succeeded")), "{}", out.stderr);
    let unrecorded = ran_first - recorded;
    assert!(unrecorded <= 64, "{unrecorded} instances ran without a record");

    let out = t.run_with(&["run", "--cpus", "2"]);
    assert_code(&out, 0);
    let ran_total = fs_err::read_to_string(&ran).unwrap().lines().count();
    assert_eq!(ran_total, 8000 + unrecorded, "only the unrecorded instances ran twice");
}

/// Asserts `flow status` and `flow runs` show run `id` as ended with exit
/// code 74, and `flow status` says why.
fn assert_ended_on_storage(t: &Test, id: &str) {
    let status = t.success_with(&["status", id]);
    let lines: Vec<&str> = status.lines().collect();
    assert_eq!(lines[0], format!("run {id}: failed: storage"), "{status}");
    assert!(lines.iter().any(|l| l.starts_with("  cannot write the journal: ")), "{status}");
    let json: serde_json::Value = serde_json::from_str(&t.success_with(&["status", id, "--json"])).unwrap();
    assert_eq!((&json["state"], &json["exit_code"]), (&serde_json::json!("failed"), &serde_json::json!(74)));
    let runs = t.success_with(&["runs"]);
    let row = runs.lines().find(|l| l.starts_with(id)).expect("the run is listed");
    assert_eq!(row.split("  ").filter(|c| !c.is_empty()).nth(1), Some("failed: storage"), "{runs}");
}
