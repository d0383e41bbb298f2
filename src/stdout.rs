//! Writing a command's output to stdout, and its messages to stderr.

use std::io::{self, BufWriter, StdoutLock, Write};

use crate::failure::Failure;

/// Runs `write` on a buffered, locked stdout and flushes it; a reader that
/// closed the pipe early (`| head`) is not an error; another failure to
/// write is an I/O failure.
pub fn to_stdout(write: impl FnOnce(&mut BufWriter<StdoutLock<'static>>) -> io::Result<()>) -> Result<(), Failure> {
    written(write).map_err(|e| Failure::Io(e.to_string()))
}

/// Prints `text` on stdout, as [`to_stdout`] writes; a failure says it was
/// the writing (a full disk).
pub fn print(text: impl std::fmt::Display) -> Result<(), Failure> {
    written(|out| write!(out, "{text}")).map_err(|e| Failure::Io(format!("cannot write the output: {e}")))
}

fn written(write: impl FnOnce(&mut BufWriter<StdoutLock<'static>>) -> io::Result<()>) -> io::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        result => result,
    }
}

/// `eprintln!` for messages: a reader that closed stderr early
/// (`2>&1 | head -1`) loses the rest of the message, and the command keeps
/// its exit status instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use say;
