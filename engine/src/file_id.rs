//! [`FileId`]: what a file's metadata says of its contents — size,
//! modification time, change time and inode. A command can set the
//! modification time back (`touch -r`), but not the change time, which the
//! kernel sets on every write, rename or `touch`; a file replaced by
//! another has another inode. Two equal ids are taken to be the same bytes;
//! unequal ones send the reader to the contents.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A file's size, times and inode, as [`std::fs::metadata`] gives them
/// (links followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the Unix epoch.
    pub mtime_ns: u64,
    /// Change time (of the inode), ns since the Unix epoch.
    pub ctime_ns: u64,
    /// Inode number.
    pub inode: u64,
}

impl FileId {
    /// The id of the file at `path`, if it can be read.
    pub fn of(path: &Path) -> Option<Self> {
        std::fs::metadata(path).ok().map(|meta| Self::from_metadata(&meta))
    }

    /// The id `meta` describes.
    pub fn from_metadata(meta: &std::fs::Metadata) -> Self {
        let ns = |secs: i64, nsecs: i64| {
            u64::try_from(secs).unwrap_or(0).saturating_mul(1_000_000_000).saturating_add(nsecs.unsigned_abs())
        };
        Self {
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 26: an edit of the same size with the modification time set
    /// back changes the id.
    #[test]
    fn a_restored_mtime_does_not_hide_an_edit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.txt");
        std::fs::write(&file, "aaa").unwrap();
        let before = FileId::of(&file).unwrap();
        assert_eq!(FileId::of(&file), Some(before));
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&file, "bbb").unwrap();
        let mtime = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(before.mtime_ns);
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(mtime).unwrap();
        let after = FileId::of(&file).unwrap();
        assert_eq!((after.size, after.mtime_ns, after.inode), (before.size, before.mtime_ns, before.inode));
        assert_ne!(after, before);
        assert_eq!(FileId::of(&dir.path().join("gone")), None);
    }
}
