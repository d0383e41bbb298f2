//! [`Diagnostic`]: a problem in the user's input, with where, what and how to fix it.
//!
//! Parsing and compiling collect every problem they find as a [`Diagnostic`]
//! and return them together; [`Report`] pairs one with its [`Source`] so
//! miette can draw the snippet.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use miette::{LabeledSpan, MietteSpanContents, SourceCode};

mod code;

pub use code::Code;

/// How many diagnostics are shown of one failure; the rest are counted.
/// Broken input can give tens of thousands, which took seconds to draw
/// (issue 29), and the first ones say what is wrong.
pub const MAX_SHOWN: usize = 50;

/// A named input text (the workflow file, a vars file, a JSON items file).
///
/// A workflow file that includes others is one text too: the files it
/// includes follow its own text, each a [`Part`], so a span of any of them
/// is a byte range of the one text and [`Source::place`] finds its file.
#[derive(Debug, Clone)]
pub struct Source {
    /// The name shown in diagnostics, usually the path as given.
    pub name: String,
    /// The whole text.
    pub text: Arc<str>,
    /// The included files appended to the text, in order.
    pub parts: Vec<Part>,
}

/// An included file inside a [`Source`]'s text.
#[derive(Debug, Clone)]
pub struct Part {
    /// Where its text starts in the including source's text.
    pub start: usize,
    /// The file itself, its spans counted from its own start.
    pub source: Arc<Source>,
    /// The `include` entry that brought it in, in the including source's text.
    pub included_at: Range<usize>,
}

impl Source {
    /// A source named `name` holding `text`.
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Arc<Self> {
        Arc::new(Self { name: name.into(), text: text.into(), parts: Vec::new() })
    }

    /// A source named `name` whose `text` holds the included files `parts` after its own.
    pub fn with_parts(name: impl Into<String>, text: impl Into<Arc<str>>, parts: Vec<Part>) -> Arc<Self> {
        Arc::new(Self { name: name.into(), text: text.into(), parts })
    }

    /// The file a byte offset lies in and the offset within it.
    pub fn place(&self, offset: usize) -> (&Source, usize) {
        match self.part_at(offset) {
            Some(part) => (&part.source, offset - part.start),
            None => (self, offset),
        }
    }

    fn part_at(&self, offset: usize) -> Option<&Part> {
        self.parts.iter().rev().find(|p| p.start <= offset && offset <= p.start + p.source.text.len())
    }

    /// `file:line:column` of a byte offset, in the file it lies in.
    pub fn position(&self, offset: usize) -> String {
        let (source, at) = self.place(offset);
        let (line, col) = source.line_col(at);
        format!("{}:{line}:{col}", source.name)
    }

    /// The `include` entries that brought in the file `offset` lies in, the
    /// nearest first, each as `included from file:line:column`.
    pub fn include_chain(&self, offset: usize) -> Vec<String> {
        let mut chain = Vec::new();
        let mut at = offset;
        while let Some(part) = self.part_at(at) {
            at = part.included_at.start;
            chain.push(format!("included from {}", self.position(at)));
        }
        chain
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..floor_char_boundary(&self.text, offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// One problem found in the input.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// Stable machine-readable code, e.g. `flow::compile::cycle`.
    pub code: Code,
    /// What is wrong, as a lowercase sentence fragment.
    pub message: String,
    /// Where: a byte range in [`Diagnostic::source`], or the workflow file when that is `None`.
    pub span: Option<Range<usize>>,
    /// Short text drawn under the span.
    pub label: Option<String>,
    /// How to fix it.
    pub help: Option<String>,
    /// The file the span points into, when it is not the workflow file.
    pub source: Option<Arc<Source>>,
}

impl Diagnostic {
    /// A diagnostic with a code and a message and nothing else yet.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self { code, message: clip_text(message.into()), span: None, label: None, help: None, source: None }
    }

    /// Points the diagnostic at `span`, labelled `label`.
    #[must_use]
    pub fn at(mut self, span: Range<usize>, label: impl Into<String>) -> Self {
        self.span = Some(span);
        self.label = Some(label.into());
        self
    }

    /// Adds a line saying how to fix the problem.
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Says the span points into `source` rather than the workflow file.
    #[must_use]
    pub fn in_source(mut self, source: Arc<Source>) -> Self {
        self.source = Some(source);
        self
    }

    /// `file:line:column` of the diagnostic, given the workflow file.
    pub fn location(&self, workflow: &Source) -> String {
        let located = self.located(workflow);
        let source = located.source.as_deref().unwrap_or(workflow);
        match &located.span {
            Some(span) => {
                let (line, col) = source.line_col(span.start);
                format!("{}:{line}:{col}", source.name)
            }
            None => source.name.clone(),
        }
    }

    /// The diagnostic pointing into the file its span lies in: for a span
    /// in a file the workflow includes, that file, the span counted from
    /// its start, and the `include` entries that brought it in added to
    /// the help.
    pub fn located(&self, workflow: &Source) -> Diagnostic {
        let mut d = self.clone();
        let Some(span) = d.span.clone().filter(|_| d.source.is_none()) else { return d };
        let Some(part) = workflow.part_at(span.start) else { return d };
        d.span = Some(span.start - part.start..span.end.saturating_sub(part.start));
        d.source = Some(part.source.clone());
        let chain = workflow.include_chain(span.start).join("\n");
        d.help = Some(match d.help {
            Some(help) => format!("{help}\n{chain}"),
            None => chain,
        });
        d
    }

    /// Pairs the diagnostic with the workflow file for rendering.
    pub fn report(&self, workflow: &Arc<Source>) -> Report {
        let diagnostic = self.located(workflow);
        let source = diagnostic.source.clone().unwrap_or_else(|| workflow.clone());
        Report { diagnostic, source }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A [`Diagnostic`] with the text it points into, renderable by miette.
#[derive(Debug)]
pub struct Report {
    diagnostic: Diagnostic,
    source: Arc<Source>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diagnostic.message)
    }
}

impl std::error::Error for Report {}

impl miette::Diagnostic for Report {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.diagnostic.code))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.diagnostic.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.diagnostic.span.as_ref().map(|_| self as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = self.diagnostic.span.clone()?;
        let text = &*self.source.text;
        let start = floor_char_boundary(text, span.start.min(text.len()));
        let end = span.end.clamp(start, text.len());
        // On a long line the snippet is a window around the span's start;
        // the label must end inside it.
        let end = match long_line(text, start) {
            Some(line) => floor_char_boundary(text, end.min(line.end).min(start + CLIP_AFTER)),
            None => end,
        };
        let label = LabeledSpan::new_primary_with_span(self.diagnostic.label.clone(), start..end.max(start));
        Some(Box::new(std::iter::once(label)))
    }
}

/// Lines longer than this many bytes are shown clipped around the span: a
/// renderer given a whole 100 KB line is slow and, past column 65,535, panics.
const LONG_LINE: usize = 240;
/// Bytes of a long line shown before the span's start.
const CLIP_BEFORE: usize = 60;
/// Bytes of a long line shown from the span's start on.
const CLIP_AFTER: usize = 120;

/// The byte range of the line holding `offset`, when that line is long.
fn long_line(text: &str, offset: usize) -> Option<Range<usize>> {
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    (end - start > LONG_LINE).then_some(start..end)
}

/// A window of a long line: `offset` and what surrounds it, as miette contents.
fn clipped<'a>(source: &'a Source, offset: usize, line: Range<usize>, before: usize) -> MietteSpanContents<'a> {
    let text = &*source.text;
    let start = floor_char_boundary(text, offset.saturating_sub(before).max(line.start));
    let end = floor_char_boundary(text, (offset + CLIP_AFTER).min(line.end));
    let (line_no, col) = source.line_col(start);
    MietteSpanContents::new_named(
        source.name.clone(),
        &text.as_bytes()[start..end],
        (start, end - start).into(),
        line_no - 1,
        col - 1,
        1,
    )
}

impl SourceCode for Report {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let text = &*self.source.text;
        let offset = floor_char_boundary(text, span.offset().min(text.len()));
        if let Some(line) = long_line(text, offset) {
            // Asked for the span alone (the header's line:column), start at
            // the span; for the snippet, show some text before it too.
            let before = if context_lines_before == 0 && context_lines_after == 0 { 0 } else { CLIP_BEFORE };
            return Ok(Box::new(clipped(&self.source, offset, line, before)));
        }
        let contents = self.source.text.as_ref().read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.source.name.clone(),
            contents.data(),
            *contents.span(),
            contents.line(),
            contents.column(),
            contents.line_count(),
        )))
    }
}

/// A message quoting a huge value keeps its start and its end: 30,000
/// characters of a bad value help nobody and slow every terminal down.
fn clip_text(text: String) -> String {
    const KEEP_START: usize = 200;
    const KEEP_END: usize = 100;
    if text.len() <= KEEP_START + KEEP_END + 40 {
        return text;
    }
    let head = floor_char_boundary(&text, KEEP_START);
    let mut tail = text.len() - KEEP_END;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let skipped = text[head..tail].chars().count();
    format!("{} … ({skipped} characters) … {}", &text[..head], &text[tail..])
}

/// The candidate closest to `name`, if it is close enough to be a likely
/// typo, or one that is `name` under a namespace (`qc.top` for `top`: a
/// task of an included file, named without its namespace).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    let namespaced = |c: &str| c.rsplit_once('.').is_some_and(|(_, last)| last == name);
    if let Some(&found) = candidates.iter().find(|c| namespaced(c)) {
        return Some(found);
    }
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|&(score, _)| score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_finds_a_name_under_its_namespace() {
        assert_eq!(closest("top", ["align", "qc.top", "qc.trim"]), Some("qc.top"));
        assert_eq!(closest("trim", ["qc.top"]), None);
    }

    #[test]
    fn closest_finds_typos_only() {
        assert_eq!(closest("comand", ["command", "cwd", "cpus"]), Some("command"));
        assert_eq!(closest("zzz", ["command", "cwd"]), None);
    }

    fn render(diagnostic: &Diagnostic, source: &Arc<Source>) -> String {
        let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor());
        let mut out = String::new();
        handler.render_report(&mut out, &diagnostic.report(source)).expect("renders");
        out
    }

    /// Issue 12: miette panicked on a column past 65,535.
    #[test]
    fn a_span_far_along_one_line_renders_clipped() {
        let text = format!("[{}x]", "1,".repeat(40_000));
        let source = Source::new("items.json", text.clone());
        let at = text.len() - 2;
        let d = Diagnostic::new(Code::SpecSyntax, "bad").at(at..at + 1, "here").in_source(source.clone());
        let out = render(&d, &source);
        assert!(out.contains("[items.json:1:80002]"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() < 250), "{out}");
        assert!(out.contains("1,1,x]"), "{out}");
    }

    #[test]
    fn a_huge_span_on_a_long_line_is_cut_to_the_window() {
        let text = format!("cpus = \"{}\"\n", "x".repeat(30_000));
        let source = Source::new("w.toml", text.clone());
        let d = Diagnostic::new(Code::SpecSyntax, "bad").at(7..text.len() - 1, "invalid value");
        let out = render(&d, &source);
        assert!(out.contains("[w.toml:1:8]"), "{out}");
        assert!(out.len() < 2_000, "{}", out.len());
    }

    #[test]
    fn long_messages_keep_their_ends() {
        let d = Diagnostic::new(Code::SpecSyntax, format!("`{}` is not a number", "x".repeat(30_000)));
        assert!(d.message.len() < 400);
        assert!(d.message.starts_with("`xxx"));
        assert!(d.message.ends_with("` is not a number"));
        assert!(d.message.contains("(29718 characters)"), "{}", d.message);
    }

    #[test]
    fn a_span_in_an_included_file_is_shown_there_with_its_chain() {
        let inner = Source::new("lib/b.toml", "x = 1\ny = 2\n");
        let outer = Source::new("lib/a.toml", "include = [\"b.toml\"]\n");
        let root_text = "include = [\"lib/a.toml\"]\n";
        let a_start = root_text.len() + 1;
        let b_start = a_start + outer.text.len() + 1;
        let text = format!("{root_text}\n{}\n{}", outer.text, inner.text);
        let parts = vec![
            Part { start: a_start, source: outer, included_at: 11..23 },
            Part { start: b_start, source: inner, included_at: a_start + 11..a_start + 19 },
        ];
        let root = Source::with_parts("workflow.toml", text, parts);
        assert_eq!(root.position(b_start + 6), "lib/b.toml:2:1");
        assert_eq!(root.position(3), "workflow.toml:1:4");
        let d = Diagnostic::new(Code::SpecSyntax, "bad").at(b_start + 6..b_start + 7, "here").help("fix it");
        let located = d.located(&root);
        assert_eq!(located.span, Some(6..7));
        assert_eq!(located.source.as_ref().map(|s| s.name.as_str()), Some("lib/b.toml"));
        assert_eq!(
            located.help.as_deref(),
            Some("fix it\nincluded from lib/a.toml:1:12\nincluded from workflow.toml:1:12")
        );
        let out = render(&d, &root);
        assert!(out.contains("[lib/b.toml:2:1]"), "{out}");
    }

    #[test]
    fn line_col_counts_from_one() {
        let src = Source::new("w.toml", "ab\ncdé\nx");
        assert_eq!(src.line_col(0), (1, 1));
        assert_eq!(src.line_col(3), (2, 1));
        assert_eq!(src.line_col(7), (2, 4));
        assert_eq!(src.line_col(8), (3, 1));
    }
}
