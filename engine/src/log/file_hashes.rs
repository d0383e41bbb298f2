//! [`FileHashes`]: what each file a succeeded attempt read held, so that
//! `flow plan --why` can name the file whose contents changed since, not
//! one that was only touched.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::cursor::Cursor;

/// Each file an attempt read, by path (relative to the workflow directory
/// when inside it), with the blake3 hash of its contents. Kept as the
/// journal holds it, `path length: u16 | path | hash: [u8; 32]` per file,
/// and decoded only when asked: a rerun that finds nothing changed never
/// looks inside.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileHashes(Arc<[u8]>);

impl FileHashes {
    /// The hashes of `files`, in their order (a path longer than 65,535
    /// bytes is cut there).
    pub fn new<'a>(files: impl IntoIterator<Item = (&'a str, [u8; 32])>) -> Self {
        let mut bytes = Vec::new();
        for (path, hash) in files {
            let path = &path.as_bytes()[..path.len().min(usize::from(u16::MAX))];
            bytes.extend((path.len() as u16).to_le_bytes());
            bytes.extend(path);
            bytes.extend(hash);
        }
        Self(bytes.into())
    }

    /// Each file with its hash, in the order given to [`Self::new`]; a
    /// damaged end is left out.
    pub fn iter(&self) -> impl Iterator<Item = (Cow<'_, str>, [u8; 32])> + '_ {
        let mut c = Cursor(&self.0);
        std::iter::from_fn(move || {
            let length = usize::from(c.u16()?);
            let path = String::from_utf8_lossy(c.take(length)?);
            Some((path, c.array()?))
        })
    }

    /// The hash recorded for `path`.
    pub fn get(&self, path: &str) -> Option<[u8; 32]> {
        self.iter().find(|(p, _)| p == path).map(|(_, hash)| hash)
    }

    /// The bytes as the journal holds them.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// Hashes read back from the journal.
    pub(super) fn from_bytes(bytes: &[u8]) -> Self {
        Self(bytes.into())
    }
}

/// Sent from a worker as the bytes the journal holds.
impl Serialize for FileHashes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serde_bytes::Bytes::new(&self.0).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for FileHashes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self::from_bytes(&serde_bytes::ByteBuf::deserialize(deserializer)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_round_trip_and_a_damaged_end_is_left_out() {
        let hashes = FileHashes::new([("in/a.txt", [1; 32]), ("s.sh", [2; 32])]);
        let read: Vec<(String, [u8; 32])> = hashes.iter().map(|(p, h)| (p.into_owned(), h)).collect();
        assert_eq!(read, [("in/a.txt".to_owned(), [1; 32]), ("s.sh".to_owned(), [2; 32])]);
        assert_eq!(hashes.get("s.sh"), Some([2; 32]));
        assert_eq!(hashes.get("t.sh"), None);
        let cut = FileHashes::from_bytes(&hashes.bytes()[..hashes.bytes().len() - 1]);
        assert_eq!(cut.iter().count(), 1);
        assert_eq!(FileHashes::default().iter().count(), 0);
    }
}
