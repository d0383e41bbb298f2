//! [`VERSION`] and the writers that put it first in every object flow prints.

use std::io::{self, Write};

use serde::Serialize;

/// The version of flow's JSON output, the `"version"` of every printed
/// object. It changes when a field is removed or changes meaning; new
/// fields may appear without a change.
pub const VERSION: u32 = 2;

/// `body` with `"version"` in front.
#[derive(Serialize)]
struct Versioned<'a, T: ?Sized> {
    version: u32,
    #[serde(flatten)]
    body: &'a T,
}

/// Writes `body` (an object) as one NDJSON line.
pub fn write_line<T: Serialize + ?Sized>(out: &mut impl Write, body: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &Versioned { version: VERSION, body }).map_err(io::Error::other)?;
    writeln!(out)
}

/// Writes `body` (an object) as one indented JSON document.
pub fn write_document<T: Serialize + ?Sized>(out: &mut impl Write, body: &T) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &Versioned { version: VERSION, body }).map_err(io::Error::other)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_comes_first() {
        let mut out = Vec::new();
        write_line(&mut out, &serde_json::json!({ "a": 1 })).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "{\"version\":2,\"a\":1}\n");
    }
}
