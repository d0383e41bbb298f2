//! [`data_leaks`]: where data read from a file (`item`, `item_json`) lands
//! in a shell command without `shell_quote`.
//!
//! The command is rendered once, with stand-ins: `item` is a marker naming
//! it (`item.smiles` names itself), which survives `{% set %}`, loops,
//! concatenation and string filters the way the data would. `shell_quote`
//! turns markers into quoted ones, and any filter after it (bar `default`)
//! into changed ones, since it may undo the quoting. Numbers carry no shell
//! syntax: `length`, `int` and arithmetic leave no marker. The output is then
//! read as `sh` reads quotes: an unquoted marker anywhere, a changed one, or a
//! quoted one inside `"…"` or `'…'` (where `shell_quote`'s quotes are literal) is a
//! leak. A command that cannot be rendered with stand-ins is not judged.

use std::fmt;
use std::sync::Arc;

use minijinja::Value;
use minijinja::value::{Enumerator, Object, ObjectRepr};

use super::marker::{CHANGED, RAW, marker, markers};
use super::{GroupScope, Renderer, Scope, json_value};

/// How data reaches the shell unsafely.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeakKind {
    /// Without `shell_quote`.
    Unquoted,
    /// Through `shell_quote`, then a filter that may undo the quoting.
    Changed,
    /// Through `shell_quote`, but inside quotes, where its own quotes are
    /// taken literally.
    InQuotes,
}

/// One way a value read from a file reaches the shell unsafely.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Leak {
    /// The expression it comes from: `item`, `item.smiles`, `item_json`.
    pub name: String,
    /// How.
    pub kind: LeakKind,
}

/// The ways the data of a task's instances reaches the shell through
/// `command` unsafely; `json` when items come from `from_json`.
pub fn data_leaks(command: &str, group: &Arc<GroupScope>, json: bool) -> Vec<Leak> {
    let (item, item_json) = if json {
        (Value::from_object(Data("item".to_owned())), Value::from(marker(RAW, "item_json")))
    } else {
        (Value::from(marker(RAW, "item")), Value::UNDEFINED)
    };
    let chunk = json_value(&serde_json::json!({ "path": ".flow/chunks/task/0", "lines": 1, "first": 1 }));
    let scope = Scope {
        group: group.clone(),
        index: Value::from(0),
        item,
        item_json,
        chunk,
        subindex: Value::from(0),
        attempt: Value::from(0),
    }
    .into_value();
    let Ok(out) = Renderer::tainting().render_str(command, &scope) else { return Vec::new() };
    let mut leaks = scan(&out);
    leaks.sort();
    leaks.dedup();
    leaks
}

/// Reads `out` as `sh` reads quotes and reports every marker that lands unsafely.
fn scan(out: &str) -> Vec<Leak> {
    let found = markers(out);
    let mut leaks = Vec::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut next = found.iter().peekable();
    for (at, c) in out.char_indices() {
        while let Some((_, open, name)) = next.next_if(|(m, _, _)| *m == at) {
            let kind = match *open {
                RAW => Some(LeakKind::Unquoted),
                CHANGED => Some(LeakKind::Changed),
                _ if double || single => Some(LeakKind::InQuotes),
                _ => None,
            };
            leaks.extend(kind.map(|kind| Leak { name: name.clone(), kind }));
        }
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            _ => {}
        }
    }
    leaks
}

/// A value read from a JSON file: renders as its marker, and every part
/// of it (`item.smiles`, `item[0]`) is one too.
#[derive(Debug)]
struct Data(String);

impl Object for Data {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let name = match key.as_str() {
            Some(attr) => format!("{}.{attr}", self.0),
            None => format!("{}[{key}]", self.0),
        };
        Some(Value::from_object(Data(name)))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(1)
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&marker(RAW, &self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Resources;
    use crate::template::group_scope;

    fn leaks(command: &str, json: bool) -> Vec<(String, LeakKind)> {
        let vars = json_value(&serde_json::json!({ "flag": "-v" }));
        let group = group_scope(&vars, "t", 3, None, &Resources::default());
        data_leaks(command, &group, json).into_iter().map(|l| (l.name, l.kind)).collect()
    }

    /// Issue 18: the quoting note follows the data, not the text of the template.
    #[test]
    fn finds_where_data_lands_unquoted() {
        use LeakKind::*;
        let item = |kind| vec![("item".to_owned(), kind)];
        for (command, json, expected) in [
            ("run {{ item }}", false, item(Unquoted)),
            ("run {{ item | shell_quote }} {{ vars.flag }} > out/{{ index }}", false, vec![]),
            ("run {{ item | length }} {{ index }} {{ index * 2 + 1 }} {{ item | int + 1 }}", false, vec![]),
            ("{% set x = item %}run {{ x }}", false, item(Unquoted)),
            ("{% for c in [item] %}run {{ c }}{% endfor %}", false, item(Unquoted)),
            ("run {{ item | shell_quote | replace('a', 'b') }}", false, item(Changed)),
            ("run {{ item | upper | shell_quote }}", false, vec![]),
            ("run {{ item | shell_quote | default('x') }}", false, vec![]),
            ("run \"{{ item | shell_quote }}\"", false, item(InQuotes)),
            ("run '{{ item }}'", false, item(Unquoted)),
            ("run {{ item[1:] }}", false, item(Unquoted)),
            ("{% set q = item | shell_quote %}run {{ q }} {{ q ~ '.txt' }}", false, vec![]),
            ("run {{ item.smiles }} {{ item.n | shell_quote }}", true, vec![("item.smiles".to_owned(), Unquoted)]),
            ("run {{ item_json }}", true, vec![("item_json".to_owned(), Unquoted)]),
            ("{% for f in item.files %}run {{ f }}{% endfor %}", true, vec![("item.files[0]".to_owned(), Unquoted)]),
            ("run {{ chunk.path }} {{ chunk.lines }}", false, vec![]),
        ] {
            assert_eq!(leaks(command, json), expected, "{command}");
        }
    }
}
