//! Fingerprints: a blake3 hash of what a job runs and the contents of the
//! files it reads. Two attempts with the same fingerprint do the same work,
//! so a resumed run skips an instance whose fingerprint matches the last
//! successful one and whose outputs still exist.

use std::collections::HashSet;
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::job::{Job, relative};
use crate::log::{FileHashes, OutputStamp};
use crate::paths::{glob_matcher, glob_walk, is_glob};
use crate::rundir::STATE_DIR;

/// A 32-byte blake3 digest.
pub type Fingerprint = [u8; 32];

/// The job's fingerprint: its definition and the digest of the files it
/// reads ([`input_digest`]).
pub fn fingerprint(job: &Job) -> Fingerprint {
    with_inputs(&job.definition, &input_digest(job, &HashSet::new()))
}

/// The job's fingerprint, and what each file it reads holds, from one
/// reading of them: what a worker records of a job it runs.
pub fn fingerprint_and_reads(job: &Job) -> (Fingerprint, FileHashes) {
    let mut reads = Reads::default();
    let digest = digest(job, &HashSet::new(), Some(&mut reads));
    (with_inputs(&job.definition, &digest), reads.hashes())
}

/// What each file `job` reads holds now, as if the files in `hidden`
/// (absolute) were gone: each file of [`input_digest`] once, by its path
/// relative to the workflow directory, a directory as its entries. A
/// missing or unreadable file is left out.
pub fn read_hashes(job: &Job, hidden: &HashSet<PathBuf>) -> FileHashes {
    let mut reads = Reads::default();
    digest(job, hidden, Some(&mut reads));
    reads.hashes()
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
    digest(job, hidden, None)
}

/// [`input_digest`], noting in `reads`, when given, each file's own hash.
fn digest(job: &Job, hidden: &HashSet<PathBuf>, mut reads: Option<&mut Reads>) -> Fingerprint {
    let mut hasher = blake3::Hasher::new();
    let implicit = job.implicit.iter().map(|p| (false, vec![p.clone()]));
    let inputs = job.inputs.iter().map(|input| (is_glob(&input.to_string_lossy()), expand(input)));
    for (globbed, files) in inputs.chain(implicit) {
        // A glob does not match a hidden file; a file named outright is missing.
        for file in files.into_iter().filter(|f| !(globbed && hidden.contains(f))) {
            hash_file(&mut hasher, &file, job, hidden, reads.as_deref_mut());
        }
    }
    if let Some(stdin) = read_stdin(job) {
        // Marked, so that the same file as an input and as stdin differ.
        hasher.update(b"\0stdin");
        hash_file(&mut hasher, stdin, job, hidden, reads);
    }
    *hasher.finalize().as_bytes()
}

/// The hash of each file a digest read, each file once, in the order read.
#[derive(Default)]
struct Reads {
    seen: HashSet<PathBuf>,
    files: Vec<(String, [u8; 32])>,
    /// What the files are read through, one for them all.
    buffer: Vec<u8>,
}

impl Reads {
    /// Notes that `file` (of `job`) holds what hashes to `hash`.
    fn add(&mut self, file: &Path, job: &Job, hash: [u8; 32]) {
        if self.seen.insert(file.to_path_buf()) {
            self.files.push((relative(file, &job.base_dir).to_string_lossy().into_owned(), hash));
        }
    }

    fn hashes(&self) -> FileHashes {
        FileHashes::new(self.files.iter().map(|(path, hash)| (path.as_str(), *hash)))
    }
}

/// Adds `file`'s path (relative to the workflow directory) and contents
/// to `hasher`; a directory's tree, or that it is missing or unreadable.
/// With `reads`, notes the file's own hash there too.
fn hash_file(
    hasher: &mut blake3::Hasher,
    file: &Path,
    job: &Job,
    hidden: &HashSet<PathBuf>,
    mut reads: Option<&mut Reads>,
) {
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
            let read = match reads.as_deref_mut() {
                None => hasher.update_reader(f).map(|_| None),
                Some(reads) => hash_both(hasher, f, &mut reads.buffer).map(Some),
            };
            match (read, reads) {
                (Ok(Some(own)), Some(reads)) => reads.add(file, job, own),
                (Ok(_), _) => {}
                (Err(_), reads) if file.is_dir() => {
                    hasher.update(b"\0tree");
                    hash_tree(hasher, file, job, hidden, reads);
                }
                (Err(_), _) => {
                    hasher.update(b"\0unreadable");
                }
            }
        }
        Err(_) => {
            hasher.update(b"\0missing");
        }
    }
}

/// Feeds what `reader` holds to `hasher` and to a hasher of its own, read
/// through `buffer`: the hash of the file alone.
fn hash_both(hasher: &mut blake3::Hasher, mut reader: impl Read, buffer: &mut Vec<u8>) -> io::Result<[u8; 32]> {
    let mut own = blake3::Hasher::new();
    buffer.resize(64 << 10, 0);
    loop {
        match reader.read(buffer) {
            Ok(0) => return Ok(*own.finalize().as_bytes()),
            Ok(n) => {
                hasher.update(&buffer[..n]);
                own.update(&buffer[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Adds the tree under directory `dir` to `hasher`, in sorted order: each
/// entry's path from `dir`, then for a file its size and the blake3 hash
/// of its contents, for a symbolic link its target (links are not
/// followed), for a directory its own tree. What [`tree`] leaves out is
/// left out.
fn hash_tree(
    hasher: &mut blake3::Hasher,
    dir: &Path,
    job: &Job,
    hidden: &HashSet<PathBuf>,
    mut reads: Option<&mut Reads>,
) {
    for (path, meta) in tree(dir, job, hidden) {
        hasher.update(b"\0entry\0");
        hasher.update(relative(&path, dir).as_os_str().as_encoded_bytes());
        // The entry's own hash: a link's target, a file's contents, that a directory is one.
        let own = if meta.file_type().is_symlink() {
            hasher.update(b"\0link\0");
            let target = std::fs::read_link(&path).unwrap_or_default();
            hasher.update(target.as_os_str().as_encoded_bytes());
            Some(blake3::hash(target.as_os_str().as_encoded_bytes()))
        } else if meta.is_file() {
            hasher.update(b"\0size\0");
            hasher.update(&meta.len().to_le_bytes());
            let mut contents = blake3::Hasher::new();
            let read = fs_err::File::open(&path).map(|f| contents.update_reader(f).map(|_| ()));
            match read {
                Ok(Ok(())) => {
                    let hash = contents.finalize();
                    hasher.update(hash.as_bytes());
                    Some(hash)
                }
                _ => {
                    hasher.update(b"\0unreadable");
                    None
                }
            }
        } else if meta.is_dir() {
            hasher.update(b"\0dir");
            Some(blake3::hash(b"\0dir"))
        } else {
            None
        };
        if let (Some(reads), Some(own)) = (reads.as_deref_mut(), own) {
            reads.add(&path, job, *own.as_bytes());
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
        let tree = Job::reading(base, &["data"], None, &["data/own.txt"]);
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
        let fed = Job::reading(base, &[], Some("in.txt"), &[]);
        let named = Job::reading(base, &["in.txt"], None, &[]);
        let before = input_digest(&fed, &HashSet::new());
        assert_ne!(before, input_digest(&named, &HashSet::new()));
        write("in.txt", "2");
        assert_ne!(input_digest(&fed, &HashSet::new()), before);
    }

    /// Issue 26: one reading of the files gives the fingerprint and each
    /// file's own hash; a directory's entries are hashed one by one, a
    /// missing file is left out, and a file read twice is named once.
    #[test]
    fn the_files_a_job_reads_are_hashed_one_by_one_with_its_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        fs_err::create_dir_all(base.join("data")).unwrap();
        fs_err::write(base.join("data/b.txt"), "b").unwrap();
        fs_err::write(base.join("x.txt"), "x").unwrap();
        let job = Job::reading(base, &["x.txt", "data", "gone.txt"], Some("x.txt"), &[]);
        let (fp, reads) = fingerprint_and_reads(&job);
        assert_eq!(fp, fingerprint(&job));
        let files: Vec<(String, [u8; 32])> = reads.iter().map(|(p, h)| (p.into_owned(), h)).collect();
        let hash = |text: &str| *blake3::hash(text.as_bytes()).as_bytes();
        assert_eq!(files, [("x.txt".to_owned(), hash("x")), ("data/b.txt".to_owned(), hash("b"))]);
        let hidden = HashSet::from([base.join("x.txt")]);
        let without: Vec<String> = read_hashes(&job, &hidden).iter().map(|(p, _)| p.into_owned()).collect();
        assert_eq!(without, ["data/b.txt"]);
    }
}
