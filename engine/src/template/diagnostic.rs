//! [`template_diagnostic`]: a minijinja error as a [`Diagnostic`] that
//! points at the offending text, and [`undefined_name`]: which name an
//! error is about. An undefined name is blamed on itself, with its span,
//! whatever used it (a filter, arithmetic, a comparison).

use std::ops::Range;

use minijinja::ErrorKind;

use super::render::SCOPE_KEYS;
use crate::diag::{Code, Diagnostic, closest};

/// The expression in minijinja's "`vars.n` is undefined" detail, which
/// stands alone or ends a longer detail in parentheses.
fn undefined_in(detail: &str) -> Option<&str> {
    let end = detail.find("` is undefined")?;
    let start = detail[..end].rfind('`')? + 1;
    Some(&detail[start..end]).filter(|name| !name.is_empty() && !name.contains("(...)"))
}

/// Where `name` is written in `template` as a whole expression (not part
/// of `vars.name2` or `x.name`).
fn occurrences<'a>(template: &'a str, name: &'a str) -> impl Iterator<Item = Range<usize>> + 'a {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    template.match_indices(name).map(|(at, _)| at..at + name.len()).filter(move |r| {
        let before = template[..r.start].chars().next_back();
        let after = template[r.end..].chars().next();
        !before.is_some_and(|c| word(c) || c == '.') && !after.is_some_and(word)
    })
}

/// Where the undefined name a template error is about is written in
/// `template`: the last place before the error (a filter, an operator)
/// that names it.
fn undefined_range(err: &minijinja::Error, template: &str) -> Option<Range<usize>> {
    let Some(name) = err.detail().and_then(undefined_in) else {
        return if err.kind() == ErrorKind::UndefinedError {
            err.range().filter(|r| template.get(r.clone()).is_some())
        } else {
            None
        };
    };
    let end = err.range().map_or(template.len(), |r| r.end);
    occurrences(template, name)
        .take_while(|r| r.start < end)
        .last()
        .or_else(|| occurrences(template, name).next())
        .or_else(|| err.range().filter(|r| template.get(r.clone()) == Some(name)))
}

/// The undefined name a template error is about, if it is one: `vars.thread`.
pub fn undefined_name<'t>(err: &minijinja::Error, template: &'t str) -> Option<&'t str> {
    undefined_range(err, template).and_then(|r| template.get(r))
}

/// Turns a template error in `template` (written at `span` of `file_text`)
/// into a diagnostic for the key `key`.
pub fn template_diagnostic(
    err: &minijinja::Error,
    file_text: &str,
    span: &Range<usize>,
    template: &str,
    key: &str,
) -> Diagnostic {
    let what = match err.kind() {
        ErrorKind::SyntaxError => "syntax error",
        ErrorKind::UndefinedError => "undefined value",
        ErrorKind::UnknownFilter => "unknown filter",
        ErrorKind::UnknownFunction => "unknown function",
        ErrorKind::UnknownTest => "unknown test",
        ErrorKind::UnknownMethod => "unknown method",
        _ => "error",
    };
    let undefined = undefined_range(err, template);
    let offending = undefined.clone().or_else(|| err.range()).and_then(|r| template.get(r.clone()).map(|t| (r, t)));
    let message = match (&undefined, &offending, err.detail()) {
        (Some(_), Some((_, name)), _) if err.kind() == ErrorKind::UndefinedError => {
            format!("template error in `{key}`: `{name}` is undefined")
        }
        // An undefined name inside arithmetic or a comparison: say which.
        (Some(_), Some((_, name)), _) => {
            format!("template error in `{key}`: `{name}` is undefined (used in `{}`)", template.trim())
        }
        (_, _, Some(detail)) => format!("{what} in template `{key}`: {detail}"),
        _ => format!("{what} in template `{key}`"),
    };
    let span = match &offending {
        Some((range, _)) => offending_span(file_text, span, template, range),
        None => span.clone(),
    };
    let root = offending.filter(|_| undefined.is_some()).map(|(_, name)| name.split(['.', '[']).next().unwrap_or(name));
    let help = match (root, err.kind()) {
        (Some("attempt"), _) => {
            "`attempt` is known only when an instance starts: `command`, `argv`, `cwd`, `env`, `stdin`, `stdout` and `stderr` see it; files, `after` and resources are worked out before".to_owned()
        }
        (Some(root), _) => match closest(root, SCOPE_KEYS.iter().copied()).filter(|_| !SCOPE_KEYS.contains(&root)) {
            Some(close) => format!("did you mean `{close}`?"),
            None => "templates see `vars`, `index`, `item`, `item_json`, `chunk`, `attempt`, `task`, `resources` and `env`; check the spelling, or add the variable to [vars]".to_owned(),
        },
        (None, ErrorKind::SyntaxError) => "template syntax is Jinja: `{{ expression }}`, `{% if ... %}...{% endif %}`".to_owned(),
        (None, ErrorKind::UnknownFilter) => {
            "available filters are shell_quote and Jinja's built-ins (lower, upper, replace, default, join, ...)".to_owned()
        }
        _ => "see the templates reference for the context and filters".to_owned(),
    };
    let label = if undefined.is_some() { "undefined value" } else { what };
    Diagnostic::new(Code::CompileTemplate, message).at(span, label).help(help)
}

/// Where in the file the template's `range` lies, given the value's `span`:
/// found through the whole template when the file holds it as written, else
/// (a YAML block folded or escaped) through the `{{ … }}` around `range`,
/// or its text, when the value holds it once; else the whole value.
fn offending_span(file_text: &str, span: &Range<usize>, template: &str, range: &Range<usize>) -> Range<usize> {
    let Some(value) = file_text.get(span.clone()) else { return span.clone() };
    if let Some(pos) = value.find(template) {
        return span.start + pos + range.start..span.start + pos + range.end;
    }
    let open = template[..range.start].rfind("{{").unwrap_or(range.start);
    let close = template[range.end..].find("}}").map_or(range.end, |at| range.end + at + 2);
    for (around, offset) in [(&template[open..close], range.start - open), (&template[range.clone()], 0)] {
        let mut found = value.match_indices(around);
        if let (Some((pos, _)), None) = (found.next(), found.next()) {
            let start = span.start + pos + offset;
            return start..start + range.len();
        }
    }
    span.clone()
}

/// Whether `root` is a name of the template context (`item`, `vars`, ...).
pub fn is_context_name(root: &str) -> bool {
    SCOPE_KEYS.contains(&root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_name_in_a_detail() {
        assert_eq!(undefined_in("`itme` is undefined"), Some("itme"));
        assert_eq!(undefined_in("`vars.x` is undefined (from line 2)"), Some("vars.x"));
        assert_eq!(
            undefined_in("tried to use + operator on unsupported types (`index2` is undefined)"),
            Some("index2")
        );
        assert_eq!(undefined_in("`(...).x` is undefined"), None);
        assert_eq!(undefined_in("value is not a string"), None);
    }

    #[test]
    fn finds_whole_names_only() {
        let t = "{{ vars.xy }} {{ vars.x | upper }} {{ x }}";
        let found: Vec<(usize, usize)> = occurrences(t, "vars.x").map(|r| (r.start, r.end)).collect();
        assert_eq!(found, [(17, 23)]);
        let found: Vec<(usize, usize)> = occurrences(t, "x").map(|r| (r.start, r.end)).collect();
        assert_eq!(found, [(38, 39)]);
    }
}
