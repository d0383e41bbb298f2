//! Reading a file flow is told to read — a workflow file, an include, a
//! profiles file, `read()` in a `when` — the one way: only a regular file
//! (or a link to one), at most [`MAX_TEXT_FILE`] bytes. A FIFO would block
//! and a device such as `/dev/zero` never ends (issue 29).

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::units::{BytesStyle, bytes};

/// The largest file read as text: 16 MiB.
pub const MAX_TEXT_FILE: u64 = 16 << 20;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum TextFileError {
    /// Nothing at the path.
    #[error("no such file")]
    Missing,
    /// A FIFO, a device, a socket or a directory (what it is).
    #[error("{0}, not a regular file")]
    NotRegular(&'static str),
    /// Longer than the limit it was read with: its length (or as much as
    /// was read) and the limit.
    #[error("larger than {} (the most flow reads)", bytes(*.1, BytesStyle::Trimmed))]
    TooLarge(u64, u64),
    /// Not UTF-8 text.
    #[error("not UTF-8 text")]
    NotUtf8,
    /// Any other failure to open or read it.
    #[error("{0}")]
    Io(std::io::ErrorKind),
}

/// The bytes of the regular file at `path`, if it is at most `max` bytes
/// long. It is opened without blocking (a FIFO opens at once) and checked
/// once open, so nothing swapped in after a check is read.
pub fn read_bytes(path: &Path, max: u64) -> Result<Vec<u8>, TextFileError> {
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => TextFileError::Missing,
        kind => TextFileError::Io(kind),
    };
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if let Some(kind) = special_kind(&meta.file_type()) {
        return Err(TextFileError::NotRegular(kind));
    }
    if meta.len() > max {
        return Err(TextFileError::TooLarge(meta.len(), max));
    }
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes).map_err(io)?;
    match u64::try_from(bytes.len()) {
        Ok(len) if len <= max => Ok(bytes),
        _ => Err(TextFileError::TooLarge(bytes.len() as u64, max)),
    }
}

/// The text of the regular file at `path`, at most [`MAX_TEXT_FILE`] bytes.
pub fn read_text(path: &Path) -> Result<String, TextFileError> {
    String::from_utf8(read_bytes(path, MAX_TEXT_FILE)?).map_err(|_| TextFileError::NotUtf8)
}

/// What a file that is not a regular file is, for messages: "a FIFO".
pub fn special_kind(t: &std::fs::FileType) -> Option<&'static str> {
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else {
        Some("something else")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 29: a FIFO is refused without blocking, a device without
    /// reading it, and a file over the limit without reading it whole.
    #[test]
    fn only_regular_files_up_to_the_limit_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = |path: &Path, max| read_bytes(path, max).unwrap_err().to_string();
        assert_eq!(err(&fifo, MAX_TEXT_FILE), "a FIFO, not a regular file");
        assert_eq!(err(Path::new("/dev/zero"), MAX_TEXT_FILE), "a device, not a regular file");
        assert_eq!(err(dir.path(), MAX_TEXT_FILE), "a directory, not a regular file");
        assert_eq!(err(&dir.path().join("gone"), MAX_TEXT_FILE), "no such file");
        let file = dir.path().join("f");
        fs_err::write(&file, "12345").unwrap();
        assert_eq!(err(&file, 4), "larger than 4 B (the most flow reads)");
        assert_eq!(read_bytes(&file, 5).unwrap(), b"12345");
        fs_err::write(&file, [0xff]).unwrap();
        assert_eq!(read_text(&file).unwrap_err().to_string(), "not UTF-8 text");
    }
}
