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
    if file.is_dir() {
        hasher.update(b"\0tree");
        hash_tree(hasher, file, &job.base_dir);
        return;
    }
    match fs_err::File::open(file) {
        Ok(f) => {
            if hasher.update_reader(f).is_err() {
                hasher.update(b"\0unreadable");
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
/// followed), for a directory its own tree. The state directory of the
/// workflow in `base` is left out.
fn hash_tree(hasher: &mut blake3::Hasher, dir: &Path, base: &Path) {
    for (path, meta) in tree(dir, base) {
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

/// Every entry under directory `dir`, depth first in sorted order, with its
/// own metadata (links not followed); the workflow's state directory
/// (`base/.flow`) is left out.
fn tree(dir: &Path, base: &Path) -> Vec<(PathBuf, std::fs::Metadata)> {
    let mut found = Vec::new();
    let Ok(entries) = fs_err::read_dir(dir) else { return found };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    let state = base.join(STATE_DIR);
    for path in entries.into_iter().filter(|p| *p != state) {
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        let is_dir = meta.is_dir();
        found.push((path.clone(), meta));
        if is_dir {
            found.extend(tree(&path, base));
        }
    }
    found
}

/// The regular files and links under directory `dir`, sorted, less the
/// workflow's state directory (`base/.flow`): what [`hash_tree`] reads.
pub fn tree_files(dir: &Path, base: &Path) -> Vec<PathBuf> {
    tree(dir, base).into_iter().filter(|(_, meta)| !meta.is_dir()).map(|(path, _)| path).collect()
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
/// a directory with every entry of its tree), the scripts it names and its
/// `stdin` file, each once.
pub fn read_files(job: &Job) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    let named = job.inputs.iter().flat_map(|i| expand(i)).chain(job.implicit.iter().cloned());
    let files = named.chain(read_stdin(job).map(Path::to_path_buf)).flat_map(|file| {
        let entries = if file.is_dir() { tree(&file, &job.base_dir) } else { Vec::new() };
        std::iter::once(file).chain(entries.into_iter().map(|(path, _)| path))
    });
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
