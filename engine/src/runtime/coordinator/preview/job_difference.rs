//! Why an instance's work differs from the work its last success did,
//! in words `flow plan --why` gives: what changed in its definition, or
//! which file it reads holds other bytes. A file only touched is never
//! named.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::why::Why;
use crate::log::FileHashes;
use crate::runtime::protocol::fingerprint::{read_hashes, read_stdin, tree_files};
use crate::runtime::protocol::job::{Job, relative};

/// Why `now` does other work than `before`, the job of the last success,
/// which ended at `ended_us` having read files that held `reads` (`None`:
/// no record says); the files in `hidden` count as gone.
pub(super) fn why_differs(
    before: &Job,
    now: &Job,
    reads: Option<&FileHashes>,
    ended_us: Option<u64>,
    hidden: &HashSet<PathBuf>,
) -> Why {
    match (difference(before, now), reads) {
        (Some(why), _) => why,
        (None, Some(reads)) => changed_contents(before, now, reads, hidden),
        (None, None) => modified_since(now, ended_us),
    }
}

/// What differs between the job an earlier run did and the job now, but
/// for the contents of the files it reads.
fn difference(before: &Job, now: &Job) -> Option<Why> {
    let parse = |d: &str| serde_json::from_str::<serde_json::Value>(d).unwrap_or_default();
    let (a, b) = (parse(&before.definition), parse(&now.definition));
    if a["item"] != b["item"] {
        return Some(Why::ItemChanged);
    }
    if a["command"] != b["command"] {
        return Some(Why::CommandChanged);
    }
    let keys = ["env", "cwd", "stdin", "stdout", "stderr", "outputs", "setup", "container"];
    let settings: Vec<&str> = keys
        .into_iter()
        .filter(|k| a[*k] != b[*k])
        .map(|k| match k {
            "stdout" => "stdout path",
            "stderr" => "stderr path",
            k => k,
        })
        .collect();
    (!settings.is_empty()).then(|| Why::SettingsChanged(settings.join(", ")))
}

/// The same job: the file whose contents differ from what it held when
/// the last success read it (`reads`), as if the files in `hidden` were
/// gone. A file only touched is not named. A file that came or went
/// through a glob names the glob; one that went from a directory input,
/// the directory.
fn changed_contents(before: &Job, now: &Job, reads: &FileHashes, hidden: &HashSet<PathBuf>) -> Why {
    let shown = |f: &Path| relative(f, &now.base_dir).display().to_string();
    let stdin = read_stdin(now).map(shown);
    let globs: Vec<(String, globset::GlobMatcher)> = (now.inputs.iter())
        .filter(|f| crate::paths::is_glob(&f.to_string_lossy()))
        .filter_map(|f| Some((shown(f), crate::paths::glob_matcher(&f.to_string_lossy()).ok()?)))
        .collect();
    let glob_of = |file: &str| globs.iter().find(|(_, m)| m.is_match(now.base_dir.join(file))).map(|(g, _)| g.clone());
    let named = |file: String| match glob_of(&file) {
        Some(glob) => Why::GlobChanged(glob),
        None if stdin.as_ref() == Some(&file) => Why::StdinChanged(file),
        None => Why::InputChanged(file),
    };
    let then: HashMap<String, [u8; 32]> = reads.iter().map(|(path, hash)| (path.into_owned(), hash)).collect();
    let current = read_hashes(now, hidden);
    // Stdin first, as before: then the files in the order they are read.
    let mut files: Vec<(String, [u8; 32])> = current.iter().map(|(path, hash)| (path.into_owned(), hash)).collect();
    files.sort_by_key(|(path, _)| stdin.as_ref() != Some(path));
    for (path, hash) in &files {
        match then.get(path) {
            Some(old) if old == hash => {}
            // Its bytes changed: named as itself, even when a glob matches it.
            Some(_) if stdin.as_ref() == Some(path) => return Why::StdinChanged(path.clone()),
            Some(_) => return Why::InputChanged(path.clone()),
            None => return named(path.clone()),
        }
    }
    let now_read: HashSet<&str> = files.iter().map(|(path, _)| path.as_str()).collect();
    if let Some(gone) = then.keys().filter(|p| !now_read.contains(p.as_str())).min() {
        // One that went from a directory input: the directory names it.
        let dir = now.inputs.iter().find(|d| now.base_dir.join(gone).starts_with(d) && d.is_dir());
        return dir.map_or_else(|| named(gone.clone()), |dir| Why::InputChanged(shown(dir)));
    }
    // Every file holds what it held: the inputs are listed otherwise.
    if before.inputs != now.inputs || before.implicit != now.implicit {
        return Why::SettingsChanged("inputs".to_owned());
    }
    Why::SomeInputChanged
}

/// The same job, with no record of what its files held (a journal
/// written before it was kept): a file it reads modified since its last
/// success `ended_us`, or no more than is known.
fn modified_since(now: &Job, ended_us: Option<u64>) -> Why {
    let since = ended_us.map(|us| std::time::UNIX_EPOCH + std::time::Duration::from_micros(us));
    let newer = |f: &Path| {
        let modified = std::fs::metadata(f).and_then(|m| m.modified()).ok();
        matches!((modified, since), (Some(m), Some(s)) if m > s) || modified.is_none()
    };
    let shown = |f: &Path| relative(f, &now.base_dir).display().to_string();
    if let Some(stdin) = read_stdin(now).filter(|f| newer(f)) {
        return Why::StdinChanged(shown(stdin));
    }
    let files = now.inputs.iter().chain(&now.implicit);
    let changed = files.filter(|f| !crate::paths::is_glob(&f.to_string_lossy())).find_map(|f| {
        if f.is_dir() {
            // A file of its tree, or the directory itself: an entry came or went.
            tree_files(f, now).into_iter().chain([f.clone()]).find(|f| newer(f))
        } else {
            newer(f).then(|| f.clone())
        }
    });
    let glob = now.inputs.iter().find(|f| crate::paths::is_glob(&f.to_string_lossy()));
    match (changed, glob) {
        (Some(file), _) => Why::InputChanged(shown(&file)),
        (None, Some(glob)) => Why::GlobChanged(shown(glob)),
        (None, None) => Why::SomeInputChanged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::protocol::fingerprint::fingerprint_and_reads;

    /// Sets `file`'s modification time `seconds` after the epoch.
    fn set_back(file: &Path, seconds: u64) {
        let then = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
        fs_err::File::options().write(true).open(file).unwrap().set_modified(then).unwrap();
    }

    /// Issue 26: the file named is the one whose bytes changed, not one
    /// touched since or modified last; a stdin file is named as such; a
    /// file a glob matches that came or went names the glob.
    #[test]
    fn the_file_named_is_the_one_whose_contents_changed() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        let write = |path: &str, text: &str| fs_err::write(base.join(path), text).unwrap();
        fs_err::create_dir_all(base.join("in")).unwrap();
        for (path, text) in [("x.txt", "x"), ("y.txt", "y"), ("s.txt", "s"), ("in/1.txt", "1")] {
            write(path, text);
        }
        let job = Job::reading(base, &["x.txt", "y.txt", "in/*.txt"], Some("s.txt"), &[]);
        let (_, reads) = fingerprint_and_reads(&job);
        let why = || why_differs(&job, &job, Some(&reads), None, &HashSet::new());
        assert_eq!(why(), Why::SomeInputChanged);

        set_back(&base.join("x.txt"), 4_000_000_000);
        write("y.txt", "Y");
        set_back(&base.join("y.txt"), 1);
        assert_eq!(why(), Why::InputChanged("y.txt".into()));
        write("y.txt", "y");

        write("s.txt", "S");
        set_back(&base.join("s.txt"), 1);
        assert_eq!(why(), Why::StdinChanged("s.txt".into()));
        write("s.txt", "s");

        write("in/2.txt", "2");
        assert_eq!(why(), Why::GlobChanged("in/*.txt".into()));
        fs_err::remove_file(base.join("in/2.txt")).unwrap();
        fs_err::remove_file(base.join("in/1.txt")).unwrap();
        assert_eq!(why(), Why::GlobChanged("in/*.txt".into()));
        write("in/1.txt", "one");
        assert_eq!(why(), Why::InputChanged("in/1.txt".into()));
        write("in/1.txt", "1");

        // A file a run would move aside counts as gone.
        let hidden = HashSet::from([base.join("x.txt")]);
        assert_eq!(why_differs(&job, &job, Some(&reads), None, &hidden), Why::InputChanged("x.txt".into()));
        // The same files, listed otherwise.
        let reordered = Job::reading(base, &["y.txt", "x.txt", "in/*.txt"], Some("s.txt"), &[]);
        assert_eq!(
            why_differs(&job, &reordered, Some(&reads), None, &HashSet::new()),
            Why::SettingsChanged("inputs".into())
        );
    }

    /// A journal that kept no hashes: the file modified since the last
    /// success is named, or no more than is known; a changed definition
    /// is named before any file.
    #[test]
    fn without_hashes_the_file_modified_since_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        fs_err::write(base.join("x.txt"), "x").unwrap();
        set_back(&base.join("x.txt"), 1);
        let job = Job::reading(base, &["x.txt"], None, &[]);
        let ended = Some(2_000_000);
        assert_eq!(why_differs(&job, &job, None, ended, &HashSet::new()), Why::SomeInputChanged);
        set_back(&base.join("x.txt"), 3);
        assert_eq!(why_differs(&job, &job, None, ended, &HashSet::new()), Why::InputChanged("x.txt".into()));
        let mut other = job.clone();
        other.definition = r#"{"command":"false","env":[["A","1"]]}"#.into();
        let mut before = job.clone();
        before.definition = r#"{"command":"false","env":[]}"#.into();
        assert_eq!(why_differs(&before, &other, None, ended, &HashSet::new()), Why::SettingsChanged("env".into()));
        before.definition = r#"{"command":"true","env":[]}"#.into();
        assert_eq!(why_differs(&before, &other, None, ended, &HashSet::new()), Why::CommandChanged);
    }
}
