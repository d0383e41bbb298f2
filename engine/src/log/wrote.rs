//! [`Wrote`]: what a success left behind — the variant it ran in and a
//! [`OutputStamp`] of each declared output — as the journal keeps it on the
//! record of the success, so a later run can tell an output changed on disk
//! from one the task wrote, and find the outputs of instances that no longer
//! exist.

use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

use super::cursor::Cursor;
use crate::file_id::FileId;

/// What a succeeded (or skipped) attempt left behind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wrote {
    /// The variant it ran in: its position in the task's `variants`.
    pub variant: u32,
    /// Each declared output as it was when the attempt ended; `None` in
    /// journals written before outputs were recorded.
    pub outputs: Option<Vec<OutputStamp>>,
}

/// One output file as a success left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputStamp {
    /// The path, relative to the workflow directory when inside it.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time, ns since the Unix epoch.
    pub mtime_ns: u64,
    /// The blake3 hash of its contents.
    pub hash: [u8; 32],
    /// Its change time, ns since the Unix epoch: no command can set it
    /// back, so an edit hidden by a restored `mtime_ns` still shows; 0
    /// when not known (journals written before it was kept).
    #[serde(default)]
    pub ctime_ns: u64,
    /// Its inode number (0 when not known).
    #[serde(default)]
    pub inode: u64,
}

/// How an output on disk compares with its stamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StampCheck {
    /// Same size, modification and change times and inode: taken to be
    /// the same bytes.
    Same,
    /// Touched, but the same bytes: the fresh stamp.
    Restamped(OutputStamp),
    /// Other bytes.
    Changed,
    /// Gone.
    Missing,
}

impl OutputStamp {
    /// Stamps the file at `file`, shown as `path`.
    pub fn take(file: &Path, path: String) -> io::Result<Self> {
        let meta = std::fs::metadata(file)?;
        if !meta.is_file() {
            return Err(io::Error::other(format!("`{}` is not a regular file", file.display())));
        }
        let mut hasher = blake3::Hasher::new();
        hasher.update_reader(std::fs::File::open(file)?)?;
        let id = FileId::from_metadata(&meta);
        let hash = *hasher.finalize().as_bytes();
        Ok(Self { path, size: id.size, mtime_ns: id.mtime_ns, hash, ctime_ns: id.ctime_ns, inode: id.inode })
    }

    /// Compares the file at `file` with this stamp: by size, times and
    /// inode first ([`FileId`]), by contents when those differ.
    pub fn check(&self, file: &Path) -> StampCheck {
        let Ok(meta) = std::fs::metadata(file) else { return StampCheck::Missing };
        if !meta.is_file() {
            return StampCheck::Missing;
        }
        if FileId::from_metadata(&meta) == self.id() {
            return StampCheck::Same;
        }
        if meta.len() != self.size {
            return StampCheck::Changed;
        }
        match OutputStamp::take(file, self.path.clone()) {
            Ok(fresh) if fresh.hash == self.hash => StampCheck::Restamped(fresh),
            Ok(_) => StampCheck::Changed,
            Err(_) => StampCheck::Missing,
        }
    }
}

impl OutputStamp {
    /// The file's id as stamped.
    fn id(&self) -> FileId {
        FileId { size: self.size, mtime_ns: self.mtime_ns, ctime_ns: self.ctime_ns, inode: self.inode }
    }
}

impl Wrote {
    /// Appends `variant: u32 | count: u32 | per output: path length: u16 |
    /// path | size: u64 | mtime_ns: u64 | hash: [u8; 32]`, then per output
    /// `ctime_ns: u64 | inode: u64`; nothing when no outputs are recorded,
    /// as in older journals.
    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        let Some(outputs) = &self.outputs else { return };
        out.extend(self.variant.to_le_bytes());
        out.extend((outputs.len() as u32).to_le_bytes());
        for stamp in outputs {
            let path = &stamp.path.as_bytes()[..stamp.path.len().min(usize::from(u16::MAX))];
            out.extend((path.len() as u16).to_le_bytes());
            out.extend(path);
            out.extend(stamp.size.to_le_bytes());
            out.extend(stamp.mtime_ns.to_le_bytes());
            out.extend(stamp.hash);
        }
        for stamp in outputs {
            out.extend(stamp.ctime_ns.to_le_bytes());
            out.extend(stamp.inode.to_le_bytes());
        }
    }

    /// Reads what [`Self::encode`] wrote; a record that ends before it (an
    /// older journal) reads as variant 0 with no outputs recorded, one that
    /// ends before the change times as outputs whose change time and inode
    /// are not known (compared by contents once).
    pub(super) fn decode(c: &mut Cursor<'_>) -> Option<Self> {
        if c.0.is_empty() {
            return Some(Self::default());
        }
        let variant = c.u32()?;
        let count = c.u32()? as usize;
        let mut outputs = Vec::with_capacity(count.min(1024));
        for _ in 0..count {
            let length = usize::from(c.u16()?);
            let path = String::from_utf8_lossy(c.take(length)?).into_owned();
            let (size, mtime_ns, hash) = (c.u64()?, c.u64()?, c.array()?);
            outputs.push(OutputStamp { path, size, mtime_ns, hash, ctime_ns: 0, inode: 0 });
        }
        if !c.0.is_empty() {
            for stamp in &mut outputs {
                (stamp.ctime_ns, stamp.inode) = (c.u64()?, c.u64()?);
            }
        }
        Some(Self { variant, outputs: Some(outputs) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_tells_a_touch_from_an_edit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hits.txt");
        std::fs::write(&file, "1\n2\n").unwrap();
        let stamp = OutputStamp::take(&file, "hits.txt".into()).unwrap();
        assert_eq!(stamp.check(&file), StampCheck::Same);
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(later).unwrap();
        assert!(matches!(stamp.check(&file), StampCheck::Restamped(_)));
        std::fs::write(&file, "9\n9\n").unwrap();
        assert_eq!(stamp.check(&file), StampCheck::Changed);
        // Issue 26: an edit of the same size with its time set back (`touch -r`).
        let stamp = OutputStamp::take(&file, "hits.txt".into()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&file, "8\n8\n").unwrap();
        let then = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(stamp.mtime_ns);
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(then).unwrap();
        assert_eq!(stamp.check(&file), StampCheck::Changed);
        std::fs::remove_file(&file).unwrap();
        assert_eq!(stamp.check(&file), StampCheck::Missing);
    }

    #[test]
    fn wrote_round_trips_and_reads_old_records() {
        let stamp = OutputStamp { path: "a/b.txt".into(), size: 3, mtime_ns: 7, hash: [9; 32], ctime_ns: 8, inode: 5 };
        let wrote = Wrote { variant: 2, outputs: Some(vec![stamp]) };
        let mut bytes = Vec::new();
        wrote.encode(&mut bytes);
        assert_eq!(Wrote::decode(&mut Cursor(&bytes)), Some(wrote.clone()));
        assert_eq!(Wrote::decode(&mut Cursor(&[])), Some(Wrote::default()));
        // Written before change times were kept: not known.
        let older = &bytes[..bytes.len() - 16];
        let mut unknown = wrote;
        unknown.outputs.as_mut().unwrap()[0].ctime_ns = 0;
        unknown.outputs.as_mut().unwrap()[0].inode = 0;
        assert_eq!(Wrote::decode(&mut Cursor(older)), Some(unknown));
    }
}
