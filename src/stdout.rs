//! Writing a command's output to stdout.

use std::io::{self, BufWriter, StdoutLock, Write};

use crate::failure::Failure;

/// Runs `write` on a buffered, locked stdout and flushes it; a reader that
/// closed the pipe early (`| head`) is not an error; another failure to
/// write is an I/O failure.
pub fn to_stdout(write: impl FnOnce(&mut BufWriter<StdoutLock<'static>>) -> io::Result<()>) -> Result<(), Failure> {
    let mut out = BufWriter::new(io::stdout().lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Failure::Io(e.to_string())),
        _ => Ok(()),
    }
}
