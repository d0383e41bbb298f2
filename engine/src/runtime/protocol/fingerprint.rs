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

/// The digest of the files a job reads: each input file's path and
/// contents (glob inputs expanded, in sorted order), then those of the
/// scripts its command names. A missing input hashes as missing rather than
/// failing: the task itself will report it. Paths inside the workflow
/// directory are hashed relative to it. Files in `hidden` (absolute) count
/// as gone: `flow plan --why` hides the outputs a run would move aside.
pub fn input_digest(job: &Job, hidden: &HashSet<PathBuf>) -> Fingerprint {
    let mut hasher = blake3::Hasher::new();
    let implicit = job.implicit.iter().map(|p| (false, vec![p.clone()]));
    let inputs = job.inputs.iter().map(|input| (is_glob(&input.to_string_lossy()), expand(input)));
    for (globbed, files) in inputs.chain(implicit) {
        // A glob does not match a hidden file; a file named outright is missing.
        for file in files.into_iter().filter(|f| !(globbed && hidden.contains(f))) {
            hasher.update(b"\0file\0");
            hasher.update(relative(&file, &job.base_dir).as_os_str().as_encoded_bytes());
            hasher.update(b"\0");
            let opened = if hidden.contains(&file) { Err(()) } else { fs_err::File::open(&file).map_err(|_| ()) };
            match opened {
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
