//! The symbolic instance: a task's templates rendered with `index`, `item`
//! and `chunk` standing for any value, so file names are known as patterns
//! before any instance exists. It tells which expansion files a task of the
//! run writes (`Writers`), and stands for every instance of a group whose
//! instances are known only at run time ([`crate::ir::Domain::Deferred`]).

use std::fmt;
use std::sync::Arc;

use minijinja::Value;
use minijinja::value::{Object, ObjectRepr};

use super::ctx::Ctx;
use crate::paths::normalize;
use crate::template::{GroupScope, Scope};

/// What stands for an unknown part of a rendered file name.
pub const ANY: char = '\u{1}';

/// A value that renders as [`ANY`] and whose every attribute is one too
/// (`item.smiles`, `chunk.path`).
#[derive(Debug)]
struct Any;

impl Object for Any {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, _key: &Value) -> Option<Value> {
        Some(Value::from_object(Any))
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{ANY}")
    }
}

/// The scope of the symbolic instance of a task named `name`; `nested`
/// tasks also have a `subindex`.
pub fn scope(ctx: &Ctx, name: &str, nested: bool) -> Value {
    let any = Value::from_object(Any);
    let task = crate::template::json_value(&serde_json::json!({ "name": name }));
    let group =
        Arc::new(GroupScope { vars: crate::template::namespace_vars(ctx.vars(), name), task, resources: any.clone() });
    let subindex = if nested { any.clone() } else { Value::UNDEFINED };
    Scope {
        group,
        index: any.clone(),
        item: any.clone(),
        item_json: any.clone(),
        chunk: any.clone(),
        subindex,
        attempt: any,
    }
    .into_value()
}

/// `text` rendered for the symbolic instance of task `name`: with unknown
/// parts where it names `index`, `item` or `chunk` (see [`fallback`]).
pub fn render(ctx: &mut Ctx, name: &str, text: &str) -> String {
    let scope = scope(ctx, name, false);
    ctx.render_str(text, &scope).unwrap_or_else(|_| fallback(text))
}

/// Whether a rendered string holds an unknown part.
pub fn is_symbolic(text: &str) -> bool {
    text.contains(ANY)
}

/// A rendered file name with unknown parts as a glob: the known parts
/// escaped, each unknown part a `*`.
pub fn to_glob(text: &str) -> String {
    let mut out = String::new();
    for (k, part) in normalize(text).split(ANY).enumerate() {
        if k > 0 && !out.ends_with('*') {
            out.push('*');
        }
        out.push_str(&globset::escape(part));
    }
    out
}

/// Whether `glob` may match a file named by `pattern`, a name with unknown
/// parts: the glob's fixed text before its first wildcard agrees with the
/// pattern's known text before its first unknown part, and likewise at the
/// ends. `out/*.txt` may match `out/` + anything (an output
/// `out/{{ item }}`), not `logs/` + anything. It errs towards a match: a
/// needless edge only orders two tasks, a missing one reads a file early.
pub fn may_match(glob: &str, pattern: &str) -> bool {
    let head = |s: &str, at: Option<usize>| s[..at.unwrap_or(s.len())].to_owned();
    let glob_head = head(glob, glob.find(['*', '?', '[', '{']));
    let glob_tail = &glob[glob.rfind(['*', '?', ']', '}']).map_or(glob.len(), |i| i + 1)..];
    let pattern_head = head(pattern, pattern.find(ANY));
    let pattern_tail = &pattern[pattern.rfind(ANY).map_or(pattern.len(), |i| i + ANY.len_utf8())..];
    (glob_head.starts_with(&pattern_head) || pattern_head.starts_with(&glob_head))
        && (glob_tail.ends_with(pattern_tail) || pattern_tail.ends_with(glob_tail))
}

/// What a template that cannot be rendered symbolically (arithmetic on
/// `index`, a filter on `item`) may still produce: its text before the
/// first tag and after the last, anything in between.
pub fn fallback(source: &str) -> String {
    if !source.contains("{{") && !source.contains("{%") {
        return source.to_owned();
    }
    let start = source.find("{{").or_else(|| source.find("{%")).unwrap_or(source.len());
    let end = source.rfind("}}").or_else(|| source.rfind("%}")).map_or(start, |e| e + 2).max(start);
    format!("{}{ANY}{}", &source[..start], &source[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_parts_become_stars() {
        assert_eq!(to_glob("hits/\u{1}.txt"), "hits/*.txt");
        assert_eq!(to_glob("a[\u{1}\u{1}]"), "a[[]*[]]");
        assert_eq!(fallback("out/{{ index + 1 }}-{{ item }}.csv"), "out/\u{1}.csv");
        assert_eq!(fallback("plain.txt"), "plain.txt");
    }

    /// Issue 18: a glob input matches the outputs of tasks whose instances
    /// are known only at run time by their patterns.
    #[test]
    fn globs_may_match_patterns() {
        for (glob, pattern, matches) in [
            ("out/*.txt", "out/\u{1}", true),
            ("out/*.txt", "out/\u{1}.txt", true),
            ("out/*.txt", "out/a/\u{1}.txt", true),
            ("**/*.txt", "deep/\u{1}/x.txt", true),
            ("out/[ab].txt", "out/\u{1}", true),
            ("out/*.txt", "logs/\u{1}", false),
            ("out/*.txt", "out/\u{1}.csv", false),
            ("o*", "x\u{1}y", false),
            ("scores/*.csv", "scores/\u{1}-\u{1}.csv", true),
        ] {
            assert_eq!(may_match(glob, pattern), matches, "{glob} ~ {pattern:?}");
        }
    }
}
