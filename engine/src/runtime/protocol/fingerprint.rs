//! Fingerprints: a blake3 hash of what a job runs and the contents of the
//! files it reads. Two attempts with the same fingerprint do the same work,
//! so a resumed run skips an instance whose fingerprint matches the last
//! successful one and whose outputs still exist.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::job::{Job, relative};
use crate::paths::{glob_matcher, glob_walk, is_glob};

/// A 32-byte blake3 digest.
pub type Fingerprint = [u8; 32];

/// The job's fingerprint: its definition, then each input file's path and
/// contents (glob inputs expanded, in sorted order), then those of the
/// scripts its command names. A missing input hashes as missing rather than
/// failing: the task itself will report it. Paths inside the workflow
/// directory are hashed relative to it.
pub fn fingerprint(job: &Job) -> Fingerprint {
    let mut hasher = blake3::Hasher::new();
    hasher.update(job.definition.as_bytes());
    let implicit = job.implicit.iter().map(|p| vec![p.clone()]);
    for files in job.inputs.iter().map(|input| expand(input)).chain(implicit) {
        for file in files {
            hasher.update(b"\0file\0");
            hasher.update(relative(&file, &job.base_dir).as_os_str().as_encoded_bytes());
            hasher.update(b"\0");
            match fs_err::File::open(&file) {
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
    }
    *hasher.finalize().as_bytes()
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

/// The first declared output that does not exist.
pub fn missing_output(job: &Job) -> Option<&Path> {
    job.outputs.iter().map(PathBuf::as_path).find(|p| !p.exists())
}
