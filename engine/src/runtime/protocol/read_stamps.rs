//! [`ReadStamps`]: the ids of the files a job reads, taken before it
//! starts and compared when it ends. A file that changed in between makes
//! the result untrusted: it may have been made from contents the
//! fingerprint never saw.

use std::path::{Path, PathBuf};

use super::fingerprint::read_files;
use super::job::{Job, relative};
use crate::file_id::FileId;

/// Each file a job reads ([`read_files`]), with its id when it was taken.
#[derive(Debug, Default)]
pub struct ReadStamps {
    files: Vec<(PathBuf, Option<FileId>)>,
}

impl ReadStamps {
    /// The ids of the files `job` reads, now.
    pub fn take(job: &Job) -> Self {
        Self { files: read_files(job).into_iter().map(|f| (f.clone(), FileId::of(&f))).collect() }
    }

    /// The first file whose id changed since [`Self::take`], shown from
    /// `base` (the workflow directory) when inside it.
    pub fn changed(&self, base: &Path) -> Option<String> {
        let (file, _) = self.files.iter().find(|(file, id)| FileId::of(file) != *id)?;
        Some(relative(file, base).display().to_string())
    }
}
