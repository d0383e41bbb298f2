//! [`Renderer`]: minijinja templates with strict undefined, and the
//! per-instance context [`Scope`] they are rendered with.

use std::borrow::Cow;
use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value};
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior};

use super::filters::Mode;

/// Compiles and renders the template strings of a workflow.
pub struct Renderer {
    env: Environment<'static>,
}

/// A compiled template.
#[derive(Debug, Clone)]
pub struct Tmpl(Kind);

#[derive(Debug, Clone)]
enum Kind {
    /// Text without template syntax, used as is.
    Literal(String),
    /// Text and `{{ a.b.c }}` substitutions only: evaluated directly, falling
    /// back to the registered template (by this name) for anything unusual.
    Simple(Vec<Part>, String),
    /// A template registered in the [`Renderer`] under this name (its source).
    Jinja(String),
}

#[derive(Debug, Clone)]
enum Part {
    Text(String),
    Path(Vec<String>),
}

impl Default for Renderer {
    fn default() -> Self {
        Self::with_filters(Mode::Run)
    }
}

impl Renderer {
    /// A renderer whose filters follow data for [`super::taint`].
    pub(super) fn tainting() -> Self {
        Self::with_filters(Mode::Taint)
    }

    fn with_filters(mode: Mode) -> Self {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        // Commands and paths are not HTML, whatever their file extension.
        env.set_auto_escape_callback(|_| AutoEscape::None);
        // Undefined names are reported by the expression they come from.
        env.set_debug(true);
        super::filters::register(&mut env, mode);
        Self { env }
    }

    /// A renderer for `when` whose `read` returns a file's text, from
    /// `base`, and records each path it reads in `reads`.
    pub fn reading(base: std::path::PathBuf, reads: super::read::Reads) -> Self {
        let mut r = Self::default();
        super::read::register_reading(&mut r.env, base, reads);
        r
    }

    /// A renderer for `when` whose `read` reads nothing: it records each
    /// path in `reads` and returns empty text.
    pub fn recording(reads: super::read::Reads) -> Self {
        let mut r = Self::default();
        super::read::register_recording(&mut r.env, reads);
        r
    }
}

impl Renderer {
    /// Compiles `source`, reusing an earlier compilation of the same text.
    pub fn compile(&mut self, source: &str) -> Result<Tmpl, minijinja::Error> {
        if !source.contains("{{") && !source.contains("{%") && !source.contains("{#") {
            return Ok(Tmpl(Kind::Literal(source.to_owned())));
        }
        if self.env.get_template(source).is_err() {
            check_length(source)?;
            check_depth(source)?;
            self.env.add_template_owned(source.to_owned(), source.to_owned())?;
        }
        Ok(Tmpl(match simple_parts(source) {
            Some(parts) => Kind::Simple(parts, source.to_owned()),
            None => Kind::Jinja(source.to_owned()),
        }))
    }

    /// Renders a compiled template with `scope`.
    pub fn render<'t>(&self, tmpl: &'t Tmpl, scope: &Value) -> Result<Cow<'t, str>, minijinja::Error> {
        let name = match &tmpl.0 {
            Kind::Literal(text) => return Ok(Cow::Borrowed(text)),
            Kind::Simple(parts, name) => match render_simple(parts, scope) {
                Some(out) => return Ok(Cow::Owned(out)),
                None => name,
            },
            Kind::Jinja(name) => name,
        };
        self.env.get_template(name)?.render(scope).map(Cow::Owned)
    }

    /// Compiles and renders `source` once.
    pub fn render_str(&mut self, source: &str, scope: &Value) -> Result<String, minijinja::Error> {
        let tmpl = self.compile(source)?;
        self.render(&tmpl, scope).map(Cow::into_owned)
    }
}

/// The longest template, in bytes. minijinja counts lines and columns in
/// 16 bits, and a longer template overflowed them (a panic in a debug
/// build, wrong places in a release build). Text without `{{`, `{%` or
/// `{#` is no template and may be longer.
const MAX_TEMPLATE_LEN: usize = u16::MAX as usize;

/// Refuses a template longer than [`MAX_TEMPLATE_LEN`].
fn check_length(source: &str) -> Result<(), minijinja::Error> {
    if source.len() <= MAX_TEMPLATE_LEN {
        return Ok(());
    }
    let why = format!("a template of {} bytes; at most {MAX_TEMPLATE_LEN} are allowed", source.len());
    Err(minijinja::Error::new(ErrorKind::SyntaxError, why))
}

/// Operators one expression may chain (`a.b.c`, `f(g(x))`, `x | f | g`):
/// minijinja builds and walks them recursively, and 100,000 of them
/// overflow the stack.
const MAX_DEPTH: usize = 500;

/// Refuses an expression that chains more than [`MAX_DEPTH`] operators.
fn check_depth(source: &str) -> Result<(), minijinja::Error> {
    let mut rest = source;
    // Whether a `}}` (a `%}`) may still follow: once a search for one has
    // failed, later ones would search a part of the same text in vain, and
    // 200,000 `{` took quadratic time (issue 29).
    let (mut exprs, mut stmts) = (true, true);
    while let Some(open) = rest.find(['{']) {
        let tag = &rest[open..];
        let close = match tag.get(..2) {
            Some("{{") if exprs => tag.find("}}").or_else(|| {
                exprs = false;
                None
            }),
            Some("{%") if stmts => tag.find("%}").or_else(|| {
                stmts = false;
                None
            }),
            _ => None,
        };
        let Some(close) = close else {
            rest = &rest[open + 1..];
            continue;
        };
        let chained = tag[..close].bytes().filter(|b| b".[(|".contains(b)).count();
        if chained > MAX_DEPTH {
            let why = format!(
                "an expression chains {chained} operators (`.`, `[`, `(`, `|`); at most {MAX_DEPTH} are allowed"
            );
            return Err(minijinja::Error::new(ErrorKind::SyntaxError, why));
        }
        rest = &tag[close..];
    }
    Ok(())
}

/// Splits a template made only of text and `{{ name.attr }}` into parts.
fn simple_parts(source: &str) -> Option<Vec<Part>> {
    if source.contains("{%") || source.contains("{#") {
        return None;
    }
    let mut parts = Vec::new();
    let mut rest = source;
    while let Some(open) = rest.find("{{") {
        let close = rest[open..].find("}}")? + open;
        if open > 0 {
            parts.push(Part::Text(rest[..open].to_owned()));
        }
        let path: Vec<String> = rest[open + 2..close].trim().split('.').map(str::to_owned).collect();
        let ident = |s: &String| {
            s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if !path.iter().all(ident) {
            return None;
        }
        parts.push(Part::Path(path));
        rest = &rest[close + 2..];
    }
    if rest.contains("}}") {
        return None;
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest.to_owned()));
    }
    Some(parts)
}

/// Renders simple parts the way minijinja prints values (`Display`), or
/// `None` when a name is undefined so minijinja reports the error.
fn render_simple(parts: &[Part], scope: &Value) -> Option<String> {
    use std::fmt::Write;
    let mut out = String::new();
    for part in parts {
        match part {
            Part::Text(text) => out.push_str(text),
            Part::Path(path) => {
                let mut value = scope.clone();
                for name in path {
                    value = value.get_attr(name).ok().filter(|v| !v.is_undefined())?;
                }
                write!(out, "{value}").ok()?;
            }
        }
    }
    Some(out)
}

/// Converts JSON into a template value.
pub fn json_value<T: serde::Serialize>(value: &T) -> Value {
    Value::from(minijinja::value::Serde(value))
}

/// What every instance of a group shares in its template context.
#[derive(Debug)]
pub struct GroupScope {
    /// `vars`.
    pub vars: Value,
    /// `task`: name and instance count.
    pub task: Value,
    /// `resources` of the first variant.
    pub resources: Value,
}

/// The template context of one instance.
#[derive(Debug)]
pub struct Scope {
    /// Shared part.
    pub group: Arc<GroupScope>,
    /// `index` (undefined when only `vars` may be used).
    pub index: Value,
    /// `item` (undefined for plain tasks).
    pub item: Value,
    /// `item_json` (undefined unless the item is JSON).
    pub item_json: Value,
    /// `chunk` (undefined unless `each_chunk`).
    pub chunk: Value,
    /// `subindex`: the position in its part of an instance of a nested
    /// task (`refine[12.3]` has 3); undefined otherwise.
    pub subindex: Value,
    /// `attempt`: 0 for the first try (undefined in keys worked out before
    /// an instance starts).
    pub attempt: Value,
}

impl Scope {
    /// The scope as a minijinja value.
    pub fn into_value(self) -> Value {
        Value::from_object(self)
    }
}

/// The names of the template context.
pub(super) const SCOPE_KEYS: &[&str] =
    &["vars", "index", "subindex", "item", "item_json", "chunk", "attempt", "task", "resources", "env"];

impl Object for Scope {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let value = match key.as_str()? {
            "vars" => self.group.vars.clone(),
            "index" => self.index.clone(),
            "item" => self.item.clone(),
            "item_json" => self.item_json.clone(),
            "chunk" => self.chunk.clone(),
            "subindex" => self.subindex.clone(),
            "attempt" => self.attempt.clone(),
            "task" => self.group.task.clone(),
            "resources" => self.group.resources.clone(),
            "env" => Value::from_object(ProcessEnv),
            _ => return None,
        };
        (!value.is_undefined()).then_some(value)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(SCOPE_KEYS)
    }
}

/// `env`: flow's own environment, looked up on use.
#[derive(Debug)]
struct ProcessEnv;

impl Object for ProcessEnv {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        std::env::var(key.as_str()?).ok().map(Value::from)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::NonEnumerable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::template_diagnostic;

    fn scope() -> Value {
        let vars = json_value(&serde_json::json!({ "chunk": 10, "name": "x" }));
        let group = Arc::new(GroupScope {
            vars,
            task: json_value(&serde_json::json!({ "name": "t", "count": 3 })),
            resources: json_value(&serde_json::json!({ "cpus": 2 })),
        });
        Scope {
            group,
            index: Value::from(7),
            item: Value::from("line"),
            item_json: Value::UNDEFINED,
            chunk: Value::UNDEFINED,
            subindex: Value::UNDEFINED,
            attempt: Value::from(1),
        }
        .into_value()
    }

    #[test]
    fn shell_quote_makes_one_word() {
        let mut r = Renderer::default();
        let render = |r: &mut Renderer, item: &str| {
            r.render_str("echo {{ item | shell_quote }}", &minijinja::context! { item => item }).unwrap()
        };
        assert_eq!(render(&mut r, "CCO"), "echo CCO");
        assert_eq!(render(&mut r, "$(touch x)"), "echo '$(touch x)'");
        assert_eq!(render(&mut r, "it's"), "echo 'it'\\''s'");
        assert_eq!(render(&mut r, ""), "echo ''");
        let hostile = "a'b $(x) `y` \"z\" \\n";
        let command =
            r.render_str("printf %s {{ item | shell_quote }}", &minijinja::context! { item => hostile }).unwrap();
        let out = std::process::Command::new("sh").args(["-c", &command]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), hostile);
    }

    /// Found by the fuzz test: a chain of 100,000 attributes overflowed the stack.
    #[test]
    fn deep_expressions_are_refused() {
        let mut r = Renderer::default();
        let deep = format!("{{{{ vars{} }}}}", ".r".repeat(30_000));
        let err = r.compile(&deep).unwrap_err();
        assert!(err.to_string().contains("chains 30000 operators"), "{err}");
        assert!(r.compile(&format!("{{{{ vars{} }}}}", ".r".repeat(100))).is_ok());
    }

    /// Issue 29: a template over 65,535 bytes overflowed minijinja's column
    /// count; text that is no template may be longer.
    #[test]
    fn long_templates_are_refused() {
        let mut r = Renderer::default();
        let err = r.compile(&format!("{{{{ x }}}}{}", "a".repeat(70_000))).unwrap_err();
        assert!(err.to_string().contains("a template of 70007 bytes; at most 65535 are allowed"), "{err}");
        assert!(r.compile(&"a".repeat(70_000)).is_ok());
    }

    #[test]
    fn renders_context() {
        let mut r = Renderer::default();
        let out =
            r.render_str("{{ task.name }}-{{ index }}-{{ item }}-{{ vars.chunk }}-{{ resources.cpus }}", &scope());
        assert_eq!(out.unwrap(), "t-7-line-10-2");
        assert_eq!(r.render_str("plain", &scope()).unwrap(), "plain");
    }

    #[test]
    fn strict_undefined_is_an_error_with_a_span() {
        let mut r = Renderer::default();
        let tmpl = "out/{{ vars.chunks }}.txt";
        let err = r.render_str(tmpl, &scope()).unwrap_err();
        let file = format!("outputs = [\"{tmpl}\"]");
        let d = template_diagnostic(&err, &file, &(11..11 + tmpl.len() + 2), tmpl, "outputs");
        assert!(d.message.contains("vars.chunks"), "{}", d.message);
        assert_eq!(&file[d.span.clone().unwrap()], "vars.chunks");
        assert!(r.render_str("{{ item_json }}", &scope()).is_err());
        assert!(r.render_str("{{ nope }}", &scope()).is_err());
    }

    #[test]
    fn simple_path_matches_minijinja() {
        let mut r = Renderer::default();
        let env = Renderer::default();
        for source in [
            "out/{{ index }}.txt",
            "{{item}}-{{ vars.chunk }}{{ vars.name }}",
            "{{ task.name }}/{{ resources.cpus }}.html",
            "a & {{ item }} <b>",
            "{{ vars }}",
        ] {
            let tmpl = r.compile(source).unwrap();
            assert!(matches!(tmpl.0, Kind::Simple(..)), "{source}");
            let fast = r.render(&tmpl, &scope()).unwrap().into_owned();
            let full = env.env.render_str(source, scope()).unwrap();
            assert_eq!(fast, full, "{source}");
        }
        assert!(matches!(r.compile("{{ index + 1 }}").unwrap().0, Kind::Jinja(_)));
        let missing = r.compile("{{ vars.missing }}").unwrap();
        assert!(r.render(&missing, &scope()).is_err());
    }

    #[test]
    fn syntax_errors_are_reported() {
        let mut r = Renderer::default();
        assert!(r.compile("{{ index ").is_err());
    }
}
