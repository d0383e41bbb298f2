//! [`Diagnostic`]: a problem in the user's input, with where, what and how to fix it.
//!
//! Parsing and compiling collect every problem they find as a [`Diagnostic`]
//! and return them together; [`Report`] pairs one with its [`Source`] so
//! miette can draw the snippet.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use miette::{LabeledSpan, SourceCode};

/// A named input text (the workflow file, a vars file, a JSON items file).
#[derive(Debug, Clone)]
pub struct Source {
    /// The name shown in diagnostics, usually the path as given.
    pub name: String,
    /// The whole text.
    pub text: Arc<str>,
}

impl Source {
    /// A source named `name` holding `text`.
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Arc<Self> {
        Arc::new(Self { name: name.into(), text: text.into() })
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
    pub code: &'static str,
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
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), span: None, label: None, help: None, source: None }
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
        let source = self.source.as_deref().unwrap_or(workflow);
        match &self.span {
            Some(span) => {
                let (line, col) = source.line_col(span.start);
                format!("{}:{line}:{col}", source.name)
            }
            None => source.name.clone(),
        }
    }

    /// Pairs the diagnostic with the workflow file for rendering.
    pub fn report(&self, workflow: &Arc<Source>) -> Report {
        let source = self.source.clone().unwrap_or_else(|| workflow.clone());
        Report { diagnostic: self.clone(), source }
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
        let len = self.source.text.len();
        let start = span.start.min(len);
        let end = span.end.clamp(start, len);
        let label = LabeledSpan::new_primary_with_span(self.diagnostic.label.clone(), start..end);
        Some(Box::new(std::iter::once(label)))
    }
}

impl SourceCode for Report {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let contents = self.source.text.as_ref().read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.source.name.clone(),
            contents.data(),
            *contents.span(),
            contents.line(),
            contents.column(),
            contents.line_count(),
        )))
    }
}

/// The candidate closest to `name`, if it is close enough to be a likely typo.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
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
    fn closest_finds_typos_only() {
        assert_eq!(closest("comand", ["command", "cwd", "cpus"]), Some("command"));
        assert_eq!(closest("zzz", ["command", "cwd"]), None);
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
