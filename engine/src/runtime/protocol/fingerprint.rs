//! Fingerprints: a blake3 hash of what a job runs and the contents of the
//! files it reads. Two attempts with the same fingerprint do the same work,
//! so a resumed run skips an instance whose fingerprint matches the last
//! successful one and whose outputs still exist.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::job::{Job, relative};
use crate::log::OutputStamp;
use crate::paths::{glob_matcher, glob_walk, is_glob};
use crate::rundir::STATE_DIR;

/// A 32-byte blake3 digest.
pub type Fingerprint = [u8; 32];

/// The job's fingerprint: its definition and the digest of the files it
/// reads ([`input_digest`]).
pub fn fingerprint(job: &Job) -> Fingerprint {
    with_inputs(&job.definition, &input_digest(job, &HashSet::new()))
}

/// The fingerprint of a job with `definition` whose files hash to `inputs`.
pub fn with_inputs(definition: &str, inputs: &Fingerprint) -> Fingerprint {
    let mut hasher = blake3::Hasher::new();
    hasher.update(definition.as_bytes());
    hasher.update(b"\0inputs\0");
    hasher.update(inputs);
    *hasher.finalize().as_bytes()
}

/// The digest of the files a job reads: each input's path and contents
/// (glob inputs expanded, in sorted order; a directory as its tree,
/// [`hash_tree`]), then those of the scripts its command and setup lines
/// name, then its `stdin` file's ([`read_stdin`]) when it has one. A
/// missing input hashes as missing rather than failing: the task itself
/// will report it. Paths inside the workflow directory are hashed relative
/// to it. Files in `hidden` (absolute) count as gone: `flow plan --why`
/// hides the outputs a run would move aside.
pub fn input_digest(job: &Job, hidden: &HashSet<PathBuf>) -> Fingerprint {
    let mut hasher = blake3::Hasher::new();
    let implicit = job.implicit.iter().map(|p| (false, vec![p.clone()]));
    let inputs = job.inputs.iter().map(|input| (is_glob(&input.to_string_lossy()), expand(input)));
    for (globbed, files) in inputs.chain(implicit) {
        // A glob does not match a hidden file; a file named outright is missing.
        for file in files.into_iter().filter(|f| !(globbed && hidden.contains(f))) {
            hash_file(&mut hasher, &file, job, hidden);
        }
    }
    if let Some(stdin) = read_stdin(job) {
        // Marked, so that the same file as an input and as stdin differ.
        hasher.update(b"\0stdin");
        hash_file(&mut hasher, stdin, job, hidden);
    }
    *hasher.finalize().as_bytes()
}

/// Adds `file`'s path (relative to the workflow directory) and contents
/// to `hasher`; a directory's tree, or that it is missing or unreadable.
fn hash_file(hasher: &mut blake3::Hasher, file: &Path, job: &Job, hidden: &HashSet<PathBuf>) {
    hasher.update(b"\0file\0");
    hasher.update(relative(file, &job.base_dir).as_os_str().as_encoded_bytes());
    hasher.update(b"\0");
    if hidden.contains(file) {
        hasher.update(b"\0missing");
        return;
    }
    match fs_err::File::open(file) {
        // A directory opens, and fails at the first read: no bytes were hashed.
        Ok(f) => {
            if hasher.update_reader(f).is_err() {
                if file.is_dir() {
                    hasher.update(b"\0tree");
                    hash_tree(hasher, file, job, hidden);
                } else {
                    hasher.update(b"\0unreadable");
                }
            }
        }
        Err(_) => {
            hasher.update(b"\0missing");
        }
    }
}

/// Adds the tree under directory `dir` to `hasher`, in sorted order: each
/// entry's path from `dir`, then for a file its size and the blake3 hash
/// of its contents, for a symbolic link its target (links are not
/// followed), for a directory its own tree. What [`tree`] leaves out is
/// left out.
fn hash_tree(hasher: &mut blake3::Hasher, dir: &Path, job: &Job, hidden: &HashSet<PathBuf>) {
    for (path, meta) in tree(dir, job, hidden) {
        hasher.update(b"\0entry\0");
        hasher.update(relative(&path, dir).as_os_str().as_encoded_bytes());
        if meta.file_type().is_symlink() {
            hasher.update(b"\0link\0");
            let target = std::fs::read_link(&path).unwrap_or_default();
            hasher.update(target.as_os_str().as_encoded_bytes());
        } else if meta.is_file() {
            hasher.update(b"\0size\0");
            hasher.update(&meta.len().to_le_bytes());
            let mut contents = blake3::Hasher::new();
            let read = fs_err::File::open(&path).map(|f| contents.update_reader(f).map(|_| ()));
            match read {
                Ok(Ok(())) => hasher.update(contents.finalize().as_bytes()),
                _ => hasher.update(b"\0unreadable"),
            };
        } else if meta.is_dir() {
            hasher.update(b"\0dir");
        }
    }
}

/// Every entry under directory `dir`, an input of `job`, depth first in
/// sorted order, with its own metadata (links not followed); left out are
/// the workflow's state directory (`.flow`), `job`'s own outputs (a task
/// may write into the directory it reads) and the files in `hidden`.
fn tree(dir: &Path, job: &Job, hidden: &HashSet<PathBuf>) -> Vec<(PathBuf, std::fs::Metadata)> {
    let mut found = Vec::new();
    let Ok(entries) = fs_err::read_dir(dir) else { return found };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    let state = job.base_dir.join(STATE_DIR);
    let kept = |p: &PathBuf| *p != state && !job.outputs.contains(p) && !hidden.contains(p);
    for path in entries.into_iter().filter(kept) {
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        let is_dir = meta.is_dir();
        found.push((path.clone(), meta));
        if is_dir {
            found.extend(tree(&path, job, hidden));
        }
    }
    found
}

/// The regular files and links under directory `dir`, an input of `job`,
/// sorted: what [`hash_tree`] reads of them.
pub fn tree_files(dir: &Path, job: &Job) -> Vec<PathBuf> {
    let entries = tree(dir, job, &HashSet::new()).into_iter();
    entries.filter(|(_, meta)| !meta.is_dir()).map(|(path, _)| path).collect()
}

/// The file a job's `stdin` names, which is part of its key; not the
/// chunk file flow writes and feeds it (the chunk is in its definition).
pub fn read_stdin(job: &Job) -> Option<&Path> {
    let stdin = job.stdin.as_deref()?;
    let chunk = job.chunk.as_ref().map(|(file, _)| file.as_path());
    (chunk != Some(stdin)).then_some(stdin)
}

/// Whether a job's key holds any file (so hashing it may take a while).
pub fn reads_files(job: &Job) -> bool {
    !job.inputs.is_empty() || !job.implicit.is_empty() || read_stdin(job).is_some()
}

/// Every file a job reads that its key holds: its inputs (globs expanded,
/// a directory as the files and links of its tree), the scripts it names
/// and its `stdin` file, each once.
pub fn read_files(job: &Job) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    let named = job.inputs.iter().flat_map(|i| expand(i)).chain(job.implicit.iter().cloned());
    let files = named
        .chain(read_stdin(job).map(Path::to_path_buf))
        .flat_map(|file| if file.is_dir() { tree_files(&file, job) } else { vec![file] });
    files.filter(|file| seen.insert(file.clone())).collect()
}

/// The files an input names: itself, or every match of a glob, sorted.
fn expand(input: &Path) -> Vec<PathBuf> {
    let text = input.to_string_lossy();
    if !is_glob(&text) {
        return vec![input.to_path_buf()];
    }
    let Ok(matcher) = glob_matcher(&text) else { return Vec::new() };
    let mut files = Vec::new();
    let _ = glob_walk(Path::new("/"), &text, &matcher, &mut |p| {
        if p.is_file() {
            files.push(p.to_path_buf());
        }
        ControlFlow::Continue(())
    });
    files.sort();
    files
}

/// A stamp of each declared output, or the first one that is not a
/// readable regular file.
pub fn stamp_outputs(job: &Job) -> Result<Vec<OutputStamp>, &Path> {
    job.outputs
        .iter()
        .map(|file| {
            let shown = relative(file, &job.base_dir).to_string_lossy().into_owned();
            OutputStamp::take(file, shown).map_err(|_| file.as_path())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{GroupId, TaskId};
    use crate::runtime::protocol::job::{JobCommand, Sink};

    fn job(base: &Path, inputs: &[&str], stdin: Option<&str>, outputs: &[&str]) -> Job {
        Job {
            task: TaskId::new(GroupId(0), 0),
            attempt: 0,
            label: "a".into(),
            command: JobCommand::Shell("true".into()),
            cwd: base.to_path_buf(),
            env: Vec::new(),
            flow: None,
            stdin: stdin.map(|s| base.join(s)),
            stdout: Sink::Log,
            stderr: Sink::Log,
            chunk: None,
            inputs: inputs.iter().map(|i| base.join(i)).collect(),
            implicit: Vec::new(),
            base_dir: base.to_path_buf(),
            outputs: outputs.iter().map(|o| base.join(o)).collect(),
            timeout: None,
            cpus: Vec::new(),
            gpus: Vec::new(),
            setup: None,
            container: None,
            definition: String::new(),
        }
    }

    /// Issue 26: a directory input is its tree — a nested file's contents,
    /// an entry added, a link's target — less the instance's own outputs;
    /// a `stdin` file is hashed as such.
    #[test]
    fn a_directory_input_hashes_its_tree_and_stdin_its_contents() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        let write = |path: &str, text: &str| {
            let file = base.join(path);
            fs_err::create_dir_all(file.parent().unwrap()).unwrap();
            fs_err::write(file, text).unwrap();
        };
        write("data/sub/b.txt", "b");
        let tree = job(base, &["data"], None, &["data/own.txt"]);
        let digest = || input_digest(&tree, &HashSet::new());
        let first = digest();
        write("data/own.txt", "written by the task itself");
        assert_eq!(digest(), first);
        write("data/sub/b.txt", "B");
        let edited = digest();
        assert_ne!(edited, first);
        std::os::unix::fs::symlink("sub/b.txt", base.join("data/link")).unwrap();
        let linked = digest();
        assert_ne!(linked, edited);
        fs_err::remove_file(base.join("data/link")).unwrap();
        std::os::unix::fs::symlink("elsewhere", base.join("data/link")).unwrap();
        assert_ne!(digest(), linked);
        let files: Vec<String> = read_files(&tree).iter().map(|f| relative(f, base).display().to_string()).collect();
        assert_eq!(files, ["data/link", "data/sub/b.txt"]);

        write("in.txt", "1");
        let fed = job(base, &[], Some("in.txt"), &[]);
        let named = job(base, &["in.txt"], None, &[]);
        let before = input_digest(&fed, &HashSet::new());
        assert_ne!(before, input_digest(&named, &HashSet::new()));
        write("in.txt", "2");
        assert_ne!(input_digest(&fed, &HashSet::new()), before);
    }
}
