//! Copies of the examples as a fresh clone has them: what git tracks, and
//! new files it does not ignore, never what a run left there (issue 27).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Copies the example at `from` into `to` as a fresh clone would have it:
/// the files git tracks there and the new ones its `.gitignore` files do
/// not ignore, so that runs of the example in place (as the tutorial
/// does) never leak into a test.
pub fn copy_example(from: &Path, to: &Path) {
    for file in example_files(from) {
        let target = to.join(&file);
        fs_err::create_dir_all(target.parent().expect("parent")).expect("create dirs");
        fs_err::copy(from.join(&file), &target).expect("copy file");
    }
}

/// The files of the example at `from` that a fresh clone has (and new
/// ones not ignored), relative to `from`, sorted.
pub fn example_files(from: &Path) -> Vec<PathBuf> {
    let out = Command::new("git")
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."])
        .current_dir(from)
        .output()
        .expect("the example tests need git (they copy the files git tracks)");
    assert!(out.status.success(), "git ls-files in {}: {}", from.display(), String::from_utf8_lossy(&out.stderr));
    let mut files: Vec<PathBuf> = String::from_utf8(out.stdout)
        .expect("utf-8 file names")
        .split('\0')
        .filter(|name| !name.is_empty() && from.join(name).is_file())
        .map(PathBuf::from)
        .collect();
    files.sort();
    files.dedup();
    files
}

/// Makes `dir` a git repository with every file in it added, as a clone
/// of the example would be, so that [`example_files`] works there.
pub fn init_repository(dir: &Path) {
    for args in [&["init", "-q"][..], &["add", "-A"]] {
        let out = Command::new("git").args(args).current_dir(dir).output().expect("git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
