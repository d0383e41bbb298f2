//! The markers that stand in for data read from a file when a command is
//! rendered for the taint check ([`super::taint`]): [`marker`] names the
//! data and says whether it went through `shell_quote` ([`QUOTED`]) and was
//! changed after that ([`CHANGED`]); [`markers`] reads them back.

use minijinja::Value;
use minijinja::value::ObjectRepr;

/// Opens the marker of data as read.
pub(super) const RAW: char = '\u{E000}';
/// Opens the marker of data that went through `shell_quote`.
const QUOTED: char = '\u{E001}';
/// Opens the marker of quoted data that a filter changed afterwards.
pub(super) const CHANGED: char = '\u{E002}';
/// Closes a marker.
const CLOSE: char = '\u{E003}';
/// The name in a marker is written shifted to this private-use plane, so
/// that string filters (`upper`, `replace`) leave it alone.
const NAME: u32 = 0xF_0000;

/// `name` in a marker opened by `open`.
pub(super) fn marker(open: char, name: &str) -> String {
    let shifted = name.chars().filter_map(|c| char::from_u32(NAME + c as u32));
    std::iter::once(open).chain(shifted).chain(std::iter::once(CLOSE)).collect()
}

/// Whether `c` belongs to a marker.
fn is_marker(c: char) -> bool {
    matches!(c, RAW | QUOTED | CHANGED | CLOSE) || (NAME..NAME + 0x80).contains(&(c as u32))
}

/// Whether `text` holds (part of) a marker.
pub(super) fn is_marked(text: &str) -> bool {
    text.chars().any(is_marker)
}

/// Whether `text` holds a quoted marker.
pub(super) fn has_quoted(text: &str) -> bool {
    text.contains(QUOTED)
}

/// The markers in `text`, in order: how each was opened, and its name.
/// A piece of a marker (from slicing) counts as raw `item`.
pub(super) fn markers(text: &str) -> Vec<(usize, char, String)> {
    let mut found = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if !is_marker(c) {
            continue;
        }
        let mut name = String::new();
        while let Some(&(_, n)) = chars.peek().filter(|(_, n)| (NAME..NAME + 0x80).contains(&(*n as u32))) {
            name.extend(char::from_u32(n as u32 - NAME));
            chars.next();
        }
        let closed = chars.next_if(|&(_, n)| n == CLOSE).is_some();
        match c {
            RAW | QUOTED | CHANGED if closed => found.push((at, c, name)),
            _ => found.push((at, RAW, "item".to_owned())),
        }
    }
    found
}

/// What `shell_quote` gives for `text` holding markers: one quoted marker
/// per marker, and nothing else (the real output is one word, whatever
/// else the text holds); `None` without markers.
pub(super) fn quoted(text: &str) -> Option<String> {
    let found = markers(text);
    (!found.is_empty()).then(|| found.iter().map(|(_, _, name)| marker(QUOTED, name)).collect())
}

/// `value` after a filter changed quoted data: quoted markers become changed ones.
pub(super) fn changed(value: &Value) -> Value {
    if let Some(text) = value.as_str() {
        return Value::from(text.replace(QUOTED, &CHANGED.to_string()));
    }
    match value.try_iter() {
        Ok(items) if value.as_object().is_some_and(|o| o.repr() == ObjectRepr::Seq) => {
            Value::from(items.map(|v| changed(&v)).collect::<Vec<_>>())
        }
        _ => value.clone(),
    }
}
