//! Reading a YAML document into a [`Node`] tree: YAML 1.2 core schema (so
//! JSON files read too), byte spans, and duplicate keys reported with both
//! places.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use saphyr::{AnnotatedMapping, LoadableYamlNode, MarkedYaml, Scalar, ScanError, YamlData};
use saphyr_parser::{Event, Parser};

use super::tree::{MAX_DEPTH, Node, NodeKind, too_deep};
use crate::diag::{Code, Diagnostic};

/// How many duplicate keys are worked around before giving up. Each one
/// reloads the document, and 2,000 took seconds (issue 29); more than are
/// shown ([`crate::diag::MAX_SHOWN`]) would tell the user nothing new.
const MAX_DUPLICATES: usize = crate::diag::MAX_SHOWN;

/// saphyr's loader stops at the first duplicate key; this is its message.
const SAPHYR_DUPLICATE: &str = "duplicated key in mapping";

/// saphyr's scanner stops at 255 levels of flow collections (`[[[…`) with this message.
const SAPHYR_TOO_DEEP: &str = "recursion limit exceeded";

/// Reads a single YAML document.
///
/// Plain scalars resolve to null, booleans, integers, floats or strings;
/// quoted and block scalars are strings; aliases are resolved to a copy of
/// their anchor. A file with no document, or whose document is null, is an
/// empty map. Returns `None` after pushing [`Code::SpecSyntax`] diagnostics when the
/// text is not valid YAML or holds several documents. Duplicate keys
/// ([`Code::SpecDuplicateKey`]) and non-scalar keys ([`Code::SpecType`]) are reported and their
/// entry dropped; other scalar keys become their text (`1: x` has key `"1"`).
/// An unquoted template (`cmd: {{ x }}`, which YAML reads as a table) is
/// reported ([`Code::SpecType`]) and kept as its text, so the rest is still checked.
pub(crate) fn from_yaml(text: &str, diags: &mut Vec<Diagnostic>) -> Option<Node> {
    let offsets = Offsets::new(text);
    if let Some(at) = nested_too_deeply(text) {
        let at = offsets.byte(at);
        diags.push(too_deep(at));
        return None;
    }
    let mut work = Cow::Borrowed(text);
    let mut renamed = Vec::new();
    let docs = loop {
        match MarkedYaml::load_from_str(&work) {
            Ok(docs) => break docs,
            Err(error) => {
                let marker = error.marker().index();
                let retry = error.info() == SAPHYR_DUPLICATE
                    && renamed.len() < MAX_DUPLICATES
                    && !renamed.iter().any(|r: &Renamed| r.at == marker);
                let original = retry.then(|| rename_key(work.to_mut(), marker, renamed.len())).flatten();
                match original {
                    Some(original) => renamed.push(Renamed { at: marker, original }),
                    None => {
                        diags.push(syntax_error(text, &offsets, &error));
                        return None;
                    }
                }
            }
        }
    };
    let mut docs = docs.iter();
    let Some(doc) = docs.next() else {
        return Some(Node::new(NodeKind::Map(Vec::new()), 0..0));
    };
    if let Some(second) = docs.next() {
        let at = offsets.byte(second.span.start.index());
        diags.push(
            Diagnostic::new(Code::SpecSyntax, "more than one YAML document")
                .at(at..at, "a second document starts here")
                .help("keep one document; each `---` line starts another"),
        );
        return None;
    }
    let mut reader = Reader { text, offsets, renamed, diags, broken: false };
    let root = reader.node(doc, 0);
    if reader.broken {
        return None;
    }
    Some(match root.kind {
        NodeKind::Null => Node::new(NodeKind::Map(Vec::new()), root.span),
        _ => root,
    })
}

/// The character index of the first node nested deeper than [`MAX_DEPTH`],
/// found from saphyr's events before its loader builds the tree: the
/// loader, and dropping the tree, recurse once per level, and thousands of
/// levels (by indentation, `- - - …`, `[[[…`, aliases of aliases) overflow
/// the stack. An alias counts as deep as a copy of its anchor. Syntax
/// errors are left to the loader, which reports them, except saphyr's own
/// depth limit, which its look-ahead can reach first.
fn nested_too_deeply(text: &str) -> Option<usize> {
    // Per open collection: its anchor (0 for none) and the height of its tallest item so far.
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut heights: HashMap<usize, usize> = HashMap::new();
    for event in Parser::new_from_str(text) {
        let (event, span) = match event {
            Ok(event) => event,
            Err(error) if error.info() == SAPHYR_TOO_DEEP => return Some(error.marker().index()),
            Err(_) => return None,
        };
        let (anchor, height) = match event {
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if open.len() > MAX_DEPTH {
                    return Some(span.start.index());
                }
                open.push((anchor, 0));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (anchor, tallest) = open.pop()?;
                (anchor, tallest + 1)
            }
            Event::Scalar(_, _, anchor, _) => (anchor, 0),
            Event::Alias(id) => (0, heights.get(&id).copied().unwrap_or(0)),
            _ => continue,
        };
        if open.len() + height > MAX_DEPTH {
            return Some(span.start.index());
        }
        if anchor != 0 {
            heights.insert(anchor, height);
        }
        if let Some((_, tallest)) = open.last_mut() {
            *tallest = (*tallest).max(height);
        }
    }
    None
}

fn syntax_error(text: &str, offsets: &Offsets, error: &ScanError) -> Diagnostic {
    let start = offsets.byte(error.marker().index());
    let end = start + text[start..].chars().next().map_or(0, char::len_utf8);
    let message = match error.info() {
        SAPHYR_DUPLICATE => "duplicate key",
        info => info,
    };
    Diagnostic::new(Code::SpecSyntax, message).at(start..end, "invalid YAML").help(
        "check indentation, quotes and brackets here and on the lines above: YAML reports where it got confused, which can be after the mistake",
    )
}

/// A duplicate key that was renamed so saphyr would load the document.
struct Renamed {
    /// Character index where the key starts.
    at: usize,
    /// The key's first character, replaced by a private-use character.
    original: char,
}

/// Makes the key starting at character `at` unique without moving any
/// character: its first character becomes the private-use character number
/// `n`. Returns the replaced character, or `None` for keys it cannot rename
/// (aliases, empty or complex keys).
fn rename_key(text: &mut String, at: usize, n: usize) -> Option<char> {
    let start = text.char_indices().nth(at)?.0;
    let mut byte = skip_properties(text.as_bytes(), start, text.len());
    if matches!(text.as_bytes().get(byte), Some(b'"' | b'\'')) {
        byte += 1;
    }
    let original = text[byte..].chars().next()?;
    if original.is_whitespace() || "\"'*:?[]{},#&!|>".contains(original) {
        return None;
    }
    let marker = char::from_u32(0xF_0000 + u32::try_from(n).ok()?)?;
    text.replace_range(byte..byte + original.len_utf8(), marker.encode_utf8(&mut [0; 4]));
    Some(original)
}

/// The offset after any `&anchor` and `!tag` properties starting at `at`.
fn skip_properties(bytes: &[u8], mut at: usize, end: usize) -> usize {
    while at < end && matches!(bytes[at], b'&' | b'!') {
        while at < end && !bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        while at < end && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
    }
    at
}

/// Converts saphyr's character indices to byte offsets.
struct Offsets {
    len: usize,
    /// Byte offset of each character, or `None` when the text is ASCII.
    table: Option<Vec<usize>>,
}

impl Offsets {
    fn new(text: &str) -> Self {
        let table = (!text.is_ascii()).then(|| text.char_indices().map(|(at, _)| at).collect());
        Self { len: text.len(), table }
    }

    fn byte(&self, char_index: usize) -> usize {
        match &self.table {
            None => char_index.min(self.len),
            Some(table) => table.get(char_index).copied().unwrap_or(self.len),
        }
    }
}

/// Turns saphyr's nodes into [`Node`]s, fixing up their spans.
struct Reader<'t, 'd> {
    text: &'t str,
    offsets: Offsets,
    renamed: Vec<Renamed>,
    diags: &'d mut Vec<Diagnostic>,
    /// Set when a problem makes the tree unusable (too deep, bad tag).
    broken: bool,
}

impl Reader<'_, '_> {
    fn node(&mut self, node: &MarkedYaml<'_>, depth: usize) -> Node {
        let start = self.offsets.byte(node.span.start.index());
        let end = self.offsets.byte(node.span.end.index()).max(start);
        if depth > MAX_DEPTH {
            if !self.broken {
                self.broken = true;
                self.diags.push(too_deep(start));
            }
            return Node::new(NodeKind::Null, start..end);
        }
        let scalar = match &node.data {
            YamlData::Value(scalar) => Some(scalar.clone()),
            YamlData::Representation(text, style, tag) => {
                Scalar::parse_from_cow_and_metadata(text.clone(), *style, tag.as_ref())
            }
            YamlData::Sequence(items) => {
                let items: Vec<Node> = items.iter().map(|item| self.node(item, depth + 1)).collect();
                let last = items.last().map(|item| item.span.end);
                return Node::new(NodeKind::Seq(items), self.collection_span(start, end, last));
            }
            YamlData::Mapping(_) if self.text[start..].starts_with("{{") => {
                let span = start..self.collection_span(start, end, None).end;
                let template = &self.text[span.clone()];
                self.diags.push(
                    Diagnostic::new(Code::SpecType, "unquoted template")
                        .at(span.clone(), "YAML reads this as a table, not a string")
                        .help(format!("quote values that start with `{{{{`: '{template}'")),
                );
                return Node::new(NodeKind::Str(template.to_owned()), span);
            }
            YamlData::Mapping(entries) => {
                let entries = self.entries(entries, depth);
                let last = entries.last().map(|(_, value)| value.span.end);
                return Node::new(NodeKind::Map(entries), self.collection_span(start, end, last));
            }
            YamlData::Tagged(_, inner) => return self.node(inner, depth + 1),
            YamlData::Alias(_) | YamlData::BadValue => None,
        };
        match scalar {
            Some(scalar) => Node::new(scalar_kind(scalar), self.scalar_span(start, end)),
            None => {
                self.fail(start..end, "the value does not match its tag");
                Node::new(NodeKind::Null, start..end)
            }
        }
    }

    fn entries(&mut self, entries: &AnnotatedMapping<'_, MarkedYaml<'_>>, depth: usize) -> Vec<(Node, Node)> {
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut out = Vec::with_capacity(entries.len());
        for (key_yaml, value) in entries {
            let key = self.node(key_yaml, depth + 1);
            let name = match key.kind {
                NodeKind::Str(s) => s,
                NodeKind::Bool(b) => b.to_string(),
                NodeKind::Int(i) => i.to_string(),
                NodeKind::Float(x) => x.to_string(),
                NodeKind::Null => "null".to_owned(),
                NodeKind::Seq(_) | NodeKind::Map(_) => {
                    self.diags.push(
                        Diagnostic::new(Code::SpecType, "keys must be strings")
                            .at(key.span, "a collection used as a key")
                            .help("write a plain name before the `:`"),
                    );
                    continue;
                }
            };
            let at = key_yaml.span.start.index();
            if let Some(renamed) = self.renamed.iter().find(|r| r.at == at) {
                let name = restore(&name, renamed.original);
                self.duplicate(&name, key.span, seen.get(&name).copied());
                continue;
            }
            seen.insert(name.clone(), key.span.start);
            let value = self.node(value, depth + 1);
            out.push((Node::new(NodeKind::Str(name), key.span), value));
        }
        out
    }

    fn duplicate(&mut self, name: &str, span: Range<usize>, first: Option<usize>) {
        let help = match first {
            Some(first) => {
                let line = self.text[..first].matches('\n').count() + 1;
                format!("`{name}` is already set on line {line}; keep one of them")
            }
            None => format!("`{name}` is already set above; keep one of them"),
        };
        self.diags.push(
            Diagnostic::new(Code::SpecDuplicateKey, format!("duplicate key `{name}`"))
                .at(span, "duplicate key")
                .help(help),
        );
    }

    fn fail(&mut self, span: Range<usize>, message: &str) {
        self.broken = true;
        self.diags.push(Diagnostic::new(Code::SpecSyntax, message).at(span, "here"));
    }

    /// saphyr's scalar spans start at the node's properties (`&anchor`,
    /// `!tag`) and, for quoted scalars, run on to the next token; this narrows
    /// them to the value as written.
    fn scalar_span(&self, start: usize, end: usize) -> Range<usize> {
        let bytes = self.text.as_bytes();
        let at = skip_properties(bytes, start, end);
        let close = match bytes.get(at) {
            Some(b'"') => closing_quote(bytes, at, b'"', b'\\'),
            Some(b'\'') => closing_quote(bytes, at, b'\'', b'\''),
            _ => None,
        };
        match close {
            Some(close) if close < end => at..close + 1,
            _ => at..at + self.text[at..end.max(at)].trim_end().len(),
        }
    }

    /// Flow collections end at their closing bracket (saphyr stops just
    /// before it); block collections end with their last element (saphyr runs
    /// on over trailing blank lines and comments). An alias keeps its own
    /// span, away from the anchored elements.
    fn collection_span(&self, start: usize, end: usize, last: Option<usize>) -> Range<usize> {
        let bytes = self.text.as_bytes();
        let closes = matches!((bytes.get(start), bytes.get(end)), (Some(b'['), Some(b']')) | (Some(b'{'), Some(b'}')));
        match last {
            _ if closes => start..end + 1,
            Some(last) if (start..=end).contains(&last) => start..last,
            _ => start..start + self.text[start..end].trim_end().len(),
        }
    }
}

/// The key as written, given its renamed form and its replaced first character.
fn restore(renamed: &str, original: char) -> String {
    let mut chars = renamed.chars();
    match chars.next() {
        Some(first) if u32::from(first) >= 0xF_0000 => format!("{original}{}", chars.as_str()),
        _ => renamed.to_owned(),
    }
}

/// The byte offset of the quote closing the string opened at `open`. In
/// double quotes a backslash escapes the next character; in single quotes a
/// doubled quote stands for one.
fn closing_quote(bytes: &[u8], open: usize, quote: u8, escape: u8) -> Option<usize> {
    let mut at = open + 1;
    while at < bytes.len() {
        if escape == quote && bytes[at] == quote && bytes.get(at + 1) == Some(&quote) {
            at += 2;
        } else if bytes[at] == quote {
            return Some(at);
        } else if bytes[at] == escape {
            at += 2;
        } else {
            at += 1;
        }
    }
    None
}

fn scalar_kind(scalar: Scalar<'_>) -> NodeKind {
    match scalar {
        Scalar::Null => NodeKind::Null,
        Scalar::Boolean(b) => NodeKind::Bool(b),
        Scalar::Integer(i) => NodeKind::Int(i),
        Scalar::FloatingPoint(x) => NodeKind::Float(x.0),
        Scalar::String(s) => NodeKind::Str(s.into_owned()),
    }
}
