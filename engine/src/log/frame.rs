//! [`FrameWriter`] and [`FrameReader`]: checksummed records in an append-only file.
//!
//! ```text
//! file  = magic (8 bytes, one per FileKind) frame*
//! frame = payload length: u32 LE | crc32 of payload: u32 LE | payload (1 byte to 1 GiB)
//! ```
//!
//! A crash can leave the last frame half-written, and a crashed filesystem can
//! leave zeros in its place. At a frame that is incomplete, empty or fails
//! its checksum the reader looks for the next intact frame after it: if
//! there is one, the bytes between are reported as [`Damage`] and reading
//! goes on (a flipped byte costs one record, not the rest of the file); if
//! there is none, they are a [`TornTail`] — what a crash leaves, not an error.
//! A reader can follow a file that is still being written: it stops at what
//! is complete, and the next read continues from there. This module knows
//! nothing of what the payloads mean.

use std::fmt;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use fs_err::os::unix::fs::OpenOptionsExt;

use super::LogError;

/// Largest payload; a longer length field is damage.
const MAX_PAYLOAD: u32 = 1 << 30;
/// The magic bytes at the start of a file.
const HEADER: u64 = 8;
/// Length and checksum in front of each payload.
const FRAME_HEADER: u64 = 8;
/// The writer's buffer; a larger write goes straight to the file.
const WRITE_BUFFER: usize = 256 * 1024;
/// The reader's buffer.
const READ_BUFFER: usize = 64 * 1024;

/// What a framed file holds: its magic bytes and a name for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileKind {
    /// The first 8 bytes of every such file.
    pub magic: [u8; 8],
    /// What to call it in messages.
    pub name: &'static str,
}

impl FileKind {
    /// `output.log`: the tasks' stdout, stderr and system messages.
    pub const OUTPUT: FileKind = FileKind { magic: *b"FLOWLOG1", name: "output log" };
    /// `journal`: task state changes.
    pub const JOURNAL: FileKind = FileKind { magic: *b"FLOWJNL1", name: "journal" };
}

/// Bytes at the end of a file that do not form a complete, intact record:
/// what a crash leaves behind. Readers ignore them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TornTail {
    /// Where the incomplete record starts.
    pub offset: u64,
    /// How many bytes from there to the end of the file.
    pub bytes: u64,
}

impl fmt::Display for TornTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes of an incomplete record at offset {}", self.bytes, self.offset)
    }
}

/// Bytes in the middle of a file that are not an intact record, skipped by
/// the reader: a damaged frame (a flipped byte, a damaged header), or a
/// record the reader above could not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Where the damaged bytes start.
    pub offset: u64,
    /// How many bytes were skipped.
    pub bytes: u64,
    /// What they were taken for.
    pub what: &'static str,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bytes {}..{} ({}) were skipped", self.offset, self.offset + self.bytes, self.what)
    }
}

/// Appends frames to a file through a buffer. Nothing reaches the file
/// before [`FrameWriter::flush`] or a full buffer.
#[derive(Debug)]
pub struct FrameWriter {
    out: BufWriter<fs_err::File>,
    /// Where the file ends once the buffer is written.
    end: u64,
    /// Disk space is allocated up to here (see [`FrameWriter::keep_reserve`]).
    reserved_to: u64,
}

impl FrameWriter {
    /// Opens `path` for appending, creating it with `kind`'s header if it is
    /// new. A torn tail left by a crash is cut off first, so new frames
    /// follow the last intact one; a file of another kind is an error.
    pub fn open(path: &Path, kind: FileKind) -> io::Result<Self> {
        // Created readable by its owner only; the caller may share it.
        let mut file = fs_err::OpenOptions::new().read(true).append(true).create(true).mode(0o600).open(path)?;
        let len = file.metadata()?.len();
        let mut valid = len;
        if len > 0 {
            let mut reader = FrameReader::open(path, kind)?;
            let mut payload = Vec::new();
            while reader.next_into(&mut payload)? {}
            valid = reader.torn_tail().map_or(len, |t| t.offset);
        }
        if valid < len {
            file.set_len(valid)?;
        }
        if valid == 0 {
            file.write_all(&kind.magic)?;
            valid = kind.magic.len() as u64;
        }
        Ok(Self { out: BufWriter::with_capacity(WRITE_BUFFER, file), end: valid, reserved_to: valid })
    }

    /// Appends one frame whose payload is `parts` concatenated (1 byte to 1 GiB).
    pub fn append(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        let len = parts.iter().map(|p| p.len()).sum::<usize>();
        let len = u32::try_from(len).ok().filter(|l| (1..=MAX_PAYLOAD).contains(l)).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("a log record must hold 1 byte to 1 GiB, not {len}"))
        })?;
        let mut crc = crc32fast::Hasher::new();
        parts.iter().for_each(|p| crc.update(p));
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&crc.finalize().to_le_bytes())?;
        parts.iter().try_for_each(|p| self.out.write_all(p))?;
        self.end += 8 + u64::from(len);
        Ok(())
    }

    /// Keeps about `bytes` of disk space allocated past the end of the file
    /// (`fallocate` with `FALLOC_FL_KEEP_SIZE`), topping it up once half is
    /// used, so that the next appends succeed even after the disk fills up.
    /// An error means no more space could be set aside; what was still is.
    pub fn keep_reserve(&mut self, bytes: u64) -> io::Result<()> {
        use nix::fcntl::{FallocateFlags, fallocate};
        if self.reserved_to >= self.end + bytes / 2 {
            return Ok(());
        }
        let (offset, len) = (i64::try_from(self.end).unwrap_or(i64::MAX), i64::try_from(bytes).unwrap_or(i64::MAX));
        fallocate(self.out.get_ref().file(), FallocateFlags::FALLOC_FL_KEEP_SIZE, offset, len)?;
        self.reserved_to = self.end + bytes;
        Ok(())
    }

    /// Hands everything appended so far to the kernel (safe against the
    /// process being killed, not against a power cut).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// How reading one frame went.
enum Frame {
    /// A complete frame of this many bytes, header included.
    Complete(u64),
    /// The file ends exactly here.
    End,
    /// An incomplete or damaged frame starts here.
    Torn,
}

/// Reads frames in order, and can resume after the file grows.
#[derive(Debug)]
pub struct FrameReader {
    file: BufReader<fs_err::File>,
    kind: FileKind,
    /// End of the last complete frame (or of the header).
    offset: u64,
    /// Whether the magic bytes have been checked.
    header_read: bool,
    /// Whether the file position is at `offset`.
    at_offset: bool,
    torn: Option<TornTail>,
    /// Damaged stretches skipped so far.
    damage: Vec<Damage>,
    /// Where the frame last read starts.
    last: u64,
    /// Where the file position is after a complete frame read by
    /// [`FrameReader::read_at`], so that reading many in a row asks the
    /// system for the position once.
    after_read_at: Option<u64>,
}

impl FrameReader {
    /// Opens `path`, which should be a file of `kind` (checked on the first read).
    pub fn open(path: &Path, kind: FileKind) -> io::Result<Self> {
        let file = BufReader::with_capacity(READ_BUFFER, fs_err::File::open(path)?);
        Ok(Self {
            file,
            kind,
            offset: HEADER,
            header_read: false,
            at_offset: false,
            torn: None,
            damage: Vec::new(),
            last: HEADER,
            after_read_at: None,
        })
    }

    /// Reads the next complete frame's payload into `payload` and returns
    /// `true`, or returns `false` at the end of what is complete so far. Call
    /// it again later to continue after the file has grown.
    pub fn next_into(&mut self, payload: &mut Vec<u8>) -> io::Result<bool> {
        self.torn = None;
        self.after_read_at = None;
        if !self.header_read {
            self.file.rewind()?;
            if !self.read_header()? {
                return self.stop(0);
            }
        } else if !self.at_offset {
            self.file.seek(SeekFrom::Start(self.offset))?;
        }
        loop {
            // Until a read ends cleanly, the position is somewhere else.
            self.at_offset = false;
            match self.read_frame(payload)? {
                Frame::Complete(size) => {
                    self.last = self.offset;
                    self.offset += size;
                    self.at_offset = true;
                    return Ok(true);
                }
                Frame::End => {
                    self.at_offset = true;
                    return Ok(false);
                }
                Frame::Torn => match self.next_intact(self.offset + 1)? {
                    Some(next) => {
                        self.damage.push(Damage {
                            offset: self.offset,
                            bytes: next - self.offset,
                            what: "a damaged record",
                        });
                        self.offset = next;
                        self.file.seek(SeekFrom::Start(next))?;
                    }
                    None => return self.stop(self.offset),
                },
            }
        }
    }

    /// Where the frame last read starts.
    pub fn last_start(&self) -> u64 {
        self.last
    }

    /// The damaged stretches skipped so far, oldest first.
    pub fn damage(&self) -> &[Damage] {
        &self.damage
    }

    /// Notes that the frame just read could not be decoded by the reader
    /// above (written by a newer flow, say): it is skipped as damage.
    pub fn undecodable(&mut self, what: &'static str) {
        self.damage.push(Damage { offset: self.last, bytes: self.offset - self.last, what });
    }

    /// The offset of the first intact frame at or after `from`, if any. A
    /// stretch that only reaches the end of the file is a torn tail, not damage.
    fn next_intact(&mut self, from: u64) -> io::Result<Option<u64>> {
        let end = self.file.get_ref().metadata()?.len();
        let mut payload = Vec::new();
        let mut window = vec![0; READ_BUFFER];
        let mut start = from;
        while start + FRAME_HEADER < end {
            self.file.seek(SeekFrom::Start(start))?;
            let got = read_full(&mut self.file, &mut window)?;
            // Candidate headers within this window; the last 7 bytes start the next one.
            let last = got.saturating_sub(FRAME_HEADER as usize - 1);
            for i in 0..last {
                let len = u32::from_le_bytes([window[i], window[i + 1], window[i + 2], window[i + 3]]);
                let at = start + i as u64;
                if len == 0 || len > MAX_PAYLOAD || at + FRAME_HEADER + u64::from(len) > end {
                    continue;
                }
                self.file.seek(SeekFrom::Start(at))?;
                if matches!(self.read_frame(&mut payload)?, Frame::Complete(_)) {
                    return Ok(Some(at));
                }
            }
            if got < window.len() {
                break;
            }
            start += last as u64;
        }
        Ok(None)
    }

    /// Reads the frame that starts at `offset` (an earlier [`FrameReader::offset`]);
    /// `false` if it is not complete. Sequential reading continues where it was.
    pub fn read_at(&mut self, offset: u64, payload: &mut Vec<u8>) -> io::Result<bool> {
        let here = match self.after_read_at.take() {
            Some(here) => here,
            None => self.file.stream_position()?,
        };
        self.file.seek_relative(offset as i64 - here as i64)?;
        self.at_offset = false;
        let Frame::Complete(size) = self.read_frame(payload)? else { return Ok(false) };
        self.after_read_at = Some(offset + size);
        Ok(true)
    }

    /// Where the next frame starts: the end of the header and the complete frames read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        self.file.get_ref().path()
    }

    /// The incomplete record the last read stopped at, if it stopped at one.
    pub fn torn_tail(&self) -> Option<TornTail> {
        self.torn
    }

    /// Checks the magic bytes; `false` if the header is not all there yet.
    fn read_header(&mut self) -> io::Result<bool> {
        let mut magic = [0; HEADER as usize];
        let got = read_full(&mut self.file, &mut magic)?;
        if magic[..got] != self.kind.magic[..got] {
            // A damaged header in front of intact frames of this kind is
            // damage; anything else is some other file.
            let mut payload = Vec::new();
            let intact_after = got == magic.len()
                && magic.iter().zip(self.kind.magic).filter(|(a, b)| *a != b).count() <= 2
                && matches!(self.read_frame(&mut payload)?, Frame::Complete(_));
            if !intact_after {
                let path = self.file.get_ref().path().to_path_buf();
                return Err(LogError::WrongKind { path, kind: self.kind.name }.into());
            }
            self.damage.push(Damage { offset: 0, bytes: HEADER, what: "a damaged file header" });
            self.file.seek(SeekFrom::Start(HEADER))?;
        }
        self.header_read = got == magic.len();
        Ok(self.header_read)
    }

    fn read_frame(&mut self, payload: &mut Vec<u8>) -> io::Result<Frame> {
        let mut header = [0; FRAME_HEADER as usize];
        match read_full(&mut self.file, &mut header)? {
            0 => return Ok(Frame::End),
            8 => {}
            _ => return Ok(Frame::Torn),
        }
        let [l0, l1, l2, l3, c0, c1, c2, c3] = header;
        let (len, crc) = (u32::from_le_bytes([l0, l1, l2, l3]), u32::from_le_bytes([c0, c1, c2, c3]));
        if len == 0 || len > MAX_PAYLOAD {
            return Ok(Frame::Torn);
        }
        payload.clear();
        // A damaged length may claim a gigabyte: let the buffer grow with what is really there.
        payload.reserve((len as usize).min(1 << 20));
        let got = (&mut self.file).take(u64::from(len)).read_to_end(payload)?;
        if got < len as usize || crc32fast::hash(payload) != crc {
            return Ok(Frame::Torn);
        }
        Ok(Frame::Complete(FRAME_HEADER + u64::from(len)))
    }

    /// Stops at an incomplete frame or header at `offset`: remember it, and reread it next time.
    fn stop(&mut self, offset: u64) -> io::Result<bool> {
        let end = self.file.get_ref().metadata()?.len();
        self.torn = Some(TornTail { offset, bytes: end.saturating_sub(offset) }).filter(|t| t.bytes > 0);
        Ok(false)
    }
}

/// Reads until `buf` is full or the file ends; returns how much was read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn write(path: &Path, payloads: &[Vec<u8>]) {
        let mut w = FrameWriter::open(path, FileKind::JOURNAL).unwrap();
        for p in payloads {
            w.append(&[p]).unwrap();
        }
        w.flush().unwrap();
    }

    fn read(path: &Path) -> (Vec<Vec<u8>>, Option<TornTail>) {
        let mut r = FrameReader::open(path, FileKind::JOURNAL).unwrap();
        let (mut out, mut buf) = (Vec::new(), Vec::new());
        while r.next_into(&mut buf).unwrap() {
            out.push(buf.clone());
        }
        (out, r.torn_tail())
    }

    fn payloads() -> Vec<Vec<u8>> {
        vec![b"one".to_vec(), vec![7; 1000], b"three".to_vec()]
    }

    #[test]
    fn round_trips_and_appends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        write(&path, &payloads()[..2]);
        write(&path, &payloads()[2..]);
        assert_eq!(read(&path), (payloads(), None));
        assert_eq!(fs_err::read(&path).unwrap().len(), 8 + 3 * 8 + 3 + 1000 + 5);
    }

    #[test]
    fn torn_tail_is_reported_then_cut_by_the_next_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        write(&path, &payloads());
        let len = fs_err::metadata(&path).unwrap().len();
        fs_err::OpenOptions::new().write(true).open(&path).unwrap().set_len(len - 2).unwrap();
        let (records, torn) = read(&path);
        assert_eq!(records, payloads()[..2]);
        assert_eq!(torn, Some(TornTail { offset: len - 13, bytes: 11 }));
        assert_eq!(torn.unwrap().to_string(), format!("11 bytes of an incomplete record at offset {}", len - 13));
        write(&path, &[b"four".to_vec()]);
        let (records, torn) = read(&path);
        assert_eq!((records.len(), &records[2][..], torn), (3, &b"four"[..], None));
    }

    #[test]
    fn zeros_after_a_crash_are_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        write(&path, &payloads());
        let mut bytes = fs_err::read(&path).unwrap();
        bytes.extend([0; 64]);
        fs_err::write(&path, &bytes).unwrap();
        let (records, torn) = read(&path);
        assert_eq!(records, payloads());
        assert_eq!(torn.map(|t| t.bytes), Some(64));
    }

    #[test]
    fn wrong_kind_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        write(&path, &payloads());
        let mut r = FrameReader::open(&path, FileKind::OUTPUT).unwrap();
        let err = r.next_into(&mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(err.to_string(), format!("`{}` is not a flow output log file", path.display()));
        assert!(FrameWriter::open(&path, FileKind::OUTPUT).is_err());
    }

    #[test]
    fn empty_payloads_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = FrameWriter::open(&dir.path().join("j"), FileKind::JOURNAL).unwrap();
        assert_eq!(w.append(&[]).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn follows_a_growing_file_and_reads_at_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        assert_eq!(FrameReader::open(&path, FileKind::JOURNAL).unwrap_err().kind(), io::ErrorKind::NotFound);
        let mut w = FrameWriter::open(&path, FileKind::JOURNAL).unwrap();
        w.flush().unwrap();
        let r = &mut FrameReader::open(&path, FileKind::JOURNAL).unwrap();
        let mut buf = Vec::new();
        assert!(!r.next_into(&mut buf).unwrap());
        w.append(&[b"ab", b"c"]).unwrap();
        w.flush().unwrap();
        let first = r.offset();
        assert!(r.next_into(&mut buf).unwrap());
        assert_eq!(buf, b"abc");
        assert!(!r.next_into(&mut buf).unwrap());
        // Half a frame is not read yet, and not a torn tail for good.
        let mut file = fs_err::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&5u32.to_le_bytes()).unwrap();
        assert!(!r.next_into(&mut buf).unwrap());
        assert_eq!(r.torn_tail().map(|t| t.bytes), Some(4));
        file.write_all(&crc32fast::hash(b"hello").to_le_bytes()).unwrap();
        file.write_all(b"hello").unwrap();
        assert!(r.read_at(first, &mut buf).unwrap());
        assert_eq!(buf, b"abc");
        assert!(r.next_into(&mut buf).unwrap());
        assert_eq!((&buf[..], r.torn_tail()), (&b"hello"[..], None));
    }

    fn valid_file() -> impl Strategy<Value = (Vec<Vec<u8>>, Vec<u8>)> {
        prop::collection::vec(prop::collection::vec(any::<u8>(), 1..40), 0..12).prop_map(|payloads| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("j");
            write(&path, &payloads);
            let bytes = fs_err::read(&path).unwrap();
            (payloads, bytes)
        })
    }

    /// The records stored whole in the first `len` bytes.
    fn complete_within(payloads: &[Vec<u8>], len: usize) -> usize {
        let mut end = 8;
        payloads
            .iter()
            .take_while(|p| {
                end += 8 + p.len();
                end <= len
            })
            .count()
    }

    proptest! {
        #[test]
        fn any_truncation_yields_a_prefix((payloads, bytes) in valid_file(), cut in any::<prop::sample::Index>()) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("j");
            let len = cut.index(bytes.len() + 1);
            fs_err::write(&path, &bytes[..len]).unwrap();
            let (records, torn) = read(&path);
            let whole = complete_within(&payloads, len);
            prop_assert_eq!(&records[..], &payloads[..whole]);
            let boundary = 8 + records.iter().map(|r| 8 + r.len()).sum::<usize>();
            prop_assert_eq!(torn.is_some(), len > 0 && len != boundary);
        }

        /// Issue 12: a flipped byte used to drop every record after it.
        #[test]
        fn a_flipped_byte_costs_only_the_damaged_record(
            (payloads, bytes) in valid_file().prop_filter("has records", |(p, _)| !p.is_empty()),
            at in any::<prop::sample::Index>(),
            bit in 0..8u8,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("j");
            let at = 8 + at.index(bytes.len() - 8);
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << bit;
            fs_err::write(&path, &damaged).unwrap();
            let mut r = FrameReader::open(&path, FileKind::JOURNAL).unwrap();
            let (mut records, mut buf) = (Vec::new(), Vec::new());
            while r.next_into(&mut buf).unwrap() {
                records.push(buf.clone());
            }
            // The damaged record is the first one that ends after `at`.
            let hit = complete_within(&payloads, at);
            let mut expected = payloads.clone();
            expected.remove(hit);
            prop_assert_eq!(&records, &expected);
            if hit + 1 == payloads.len() {
                prop_assert!(r.torn_tail().is_some() && r.damage().is_empty());
            } else {
                prop_assert!(r.torn_tail().is_none());
                prop_assert_eq!(r.damage().len(), 1);
            }
        }
    }
}
