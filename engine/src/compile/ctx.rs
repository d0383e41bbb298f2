//! [`Ctx`]: what every compiler pass shares — the workflow file, the
//! caller's options, the compiled templates, the variables and the
//! problems found so far. Passes take it with what else they need and
//! return what they produce; nothing else is kept here.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::Value;

use super::options::Options;
use super::value_error::ValueError;
use crate::diag::{Code, Diagnostic, Source};
use crate::ir::SourceRef;
use crate::spec::{Quantity, Sp};
use crate::template::{
    GroupScope, READ, Reads, Renderer, Scope, Tmpl, json_value, namespace_vars, template_diagnostic, undefined_name,
};

/// The context the compiler passes share.
pub struct Ctx<'a> {
    source: Arc<Source>,
    options: &'a Options,
    renderer: Renderer,
    /// Renders `when` to learn which files its `read` calls name.
    reading: Renderer,
    /// The paths `reading` recorded.
    reads: Reads,
    diagnostics: Vec<Diagnostic>,
    vars: Value,
    /// The variables of the task being compiled ([`Ctx::enter_task`]).
    task_vars: Value,
}

impl<'a> Ctx<'a> {
    /// A context for compiling `source` with the variables `vars`.
    pub fn new(source: &Arc<Source>, options: &'a Options, vars: &BTreeMap<String, serde_json::Value>) -> Self {
        let reads = Reads::default();
        Self {
            source: source.clone(),
            options,
            renderer: Renderer::default(),
            reading: Renderer::recording(reads.clone()),
            reads,
            diagnostics: Vec::new(),
            vars: json_value(vars),
            task_vars: json_value(vars),
        }
    }

    /// Says which task the keys rendered next belong to: a task of an
    /// included file sees that file's variables as `vars`.
    pub fn enter_task(&mut self, name: &str) {
        self.task_vars = namespace_vars(&self.vars, name);
    }

    /// Records a problem.
    pub fn report(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// Whether any problem was recorded.
    pub fn has_errors(&self) -> bool {
        !self.diagnostics.is_empty()
    }

    /// The diagnostics in file order.
    pub fn finish(mut self) -> Vec<Diagnostic> {
        self.diagnostics.sort_by_key(|d| (d.source.is_some(), d.span.as_ref().map(|s| s.start)));
        self.diagnostics
    }

    /// The workflow file.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The included file `offset` lies in and its line there; `None` for an
    /// offset in the workflow file itself.
    pub fn included_from(&self, offset: usize) -> Option<SourceRef> {
        let (file, at) = self.source.place(offset);
        (!std::ptr::eq(file, &*self.source)).then(|| SourceRef { file: file.name.clone(), line: file.line_col(at).0 })
    }

    /// The caller's options.
    pub fn options(&self) -> &Options {
        self.options
    }

    /// `vars` as a template value.
    pub fn vars(&self) -> &Value {
        &self.vars
    }

    /// Compiles a template (each distinct text once).
    pub fn template(&mut self, text: &str) -> Result<Tmpl, minijinja::Error> {
        self.renderer.compile(text)
    }

    /// Renders a compiled template in `scope`.
    pub fn render<'t>(&self, tmpl: &'t Tmpl, scope: &Value) -> Result<Cow<'t, str>, minijinja::Error> {
        self.renderer.render(tmpl, scope)
    }

    /// Compiles and renders `text` in `scope`.
    pub fn render_str(&mut self, text: &str, scope: &Value) -> Result<String, minijinja::Error> {
        self.renderer.render_str(text, scope)
    }

    /// The files `text` (a `when`) reads with `read`, rendered in `scope`,
    /// and the error rendering it gave, if any. Nothing is read: before the
    /// run a file a task writes is not final.
    pub fn reads(&mut self, text: &str, scope: &Value) -> (Vec<String>, Option<minijinja::Error>) {
        self.reads.take();
        let err = self.reading.render_str(text, scope).err();
        (self.reads.take(), err)
    }

    /// A scope where only `vars` and `env` are defined, and `attempt` when given.
    fn vars_scope(&self, attempt: Option<u32>) -> Value {
        let group =
            Arc::new(GroupScope { vars: self.task_vars.clone(), task: Value::UNDEFINED, resources: Value::UNDEFINED });
        Scope {
            group,
            index: Value::UNDEFINED,
            item: Value::UNDEFINED,
            item_json: Value::UNDEFINED,
            chunk: Value::UNDEFINED,
            subindex: Value::UNDEFINED,
            attempt: attempt.map_or(Value::UNDEFINED, Value::from),
        }
        .into_value()
    }

    /// Renders the value of `key`, worked out once for the task, with `vars`
    /// only; reports errors against `key`.
    pub fn render_vars(&mut self, text: &Sp<String>, key: &str) -> Option<String> {
        self.render_before_run(text, key, None)
    }

    /// Whether `text` (a `when`) cannot be decided with `vars` and `env`
    /// because it names an instance's `item`, `index` or `subindex`: it is
    /// then decided per instance, when the run starts it.
    pub fn names_instance(&mut self, text: &Sp<String>) -> bool {
        let scope = self.vars_scope(None);
        let Err(e) = self.renderer.render_str(&text.value, &scope) else { return false };
        let name = undefined_name(&e, &text.value).unwrap_or_default();
        matches!(name.split(['.', '[']).next(), Some("item" | "index" | "subindex"))
    }

    /// Renders the value of `key` with `vars` and, for a resource key
    /// rendered per attempt, `attempt`; reports errors against `key`.
    fn render_before_run(&mut self, text: &Sp<String>, key: &str, attempt: Option<u32>) -> Option<String> {
        let scope = self.vars_scope(attempt);
        match self.renderer.render_str(&text.value, &scope) {
            Ok(s) => Some(s),
            Err(e) => {
                let mut d = self.template_error(&e, text, key);
                let name = undefined_name(&e, &text.value).unwrap_or_default();
                let root = name.split(['.', '[']).next().unwrap_or_default();
                let seen =
                    name.starts_with("vars.") || name.starts_with("env.") || attempt.is_some() && root == "attempt";
                if !seen && !root.is_empty() && key == "when" {
                    // A `when` may name what instances have; anything else is a slip.
                    let close = crate::diag::closest(root, ["item", "index", "subindex"]);
                    let guess = close.map(|c| format!("did you mean `{c}`? ")).unwrap_or_default();
                    d.help = Some(format!(
                        "{guess}a `when` sees `vars`, `env` and, decided per instance, `item`, `index` and \
                         `subindex`; not `{root}`"
                    ));
                } else if !seen && !root.is_empty() {
                    // Not a typo: this key is read before there are instances.
                    let sees = if attempt.is_some() { "`vars`, `env` and `attempt`" } else { "`vars` and `env`" };
                    d.help = Some(format!(
                        "`{key}` is worked out once for the task, before its instances exist, so it sees only \
                         {sees}, not `{root}`; use a variable (`{{{{ vars.NAME }}}}`)"
                    ));
                }
                self.report(d);
                None
            }
        }
    }

    /// A diagnostic for a template error in `text` (the value of `key`); an
    /// undefined `vars.NAME` gets the closest variable as a suggestion.
    pub fn template_error(&self, err: &minijinja::Error, text: &Sp<String>, key: &str) -> Diagnostic {
        let mut d = template_diagnostic(err, &self.source.text, &text.span, &text.value, key);
        if let Some(name) = undefined_name(err, &text.value).and_then(|n| n.strip_prefix("vars."))
            && let Some(vars) = self.task_vars.as_object()
        {
            let known: Vec<String> = vars.try_iter().into_iter().flatten().map(|k| k.to_string()).collect();
            let first = name.split(['.', '[']).next().unwrap_or(name);
            if let Some(close) = crate::diag::closest(first, known.iter().map(String::as_str)) {
                d.help = Some(format!("did you mean `vars.{close}`?"));
            }
        }
        if err.kind() == minijinja::ErrorKind::UnknownFunction
            && err.to_string().contains(&format!("{READ} is unknown"))
        {
            d.help = Some(format!(
                "`{READ}` is only for `when`, which waits for the task writing the file; to use a file's content \
                 in `{key}`, read it in the command (`$(cat FILE)`) and list it in `inputs`"
            ));
        }
        d
    }

    /// A numeric key: a number, or a string rendered with `vars` (and
    /// `attempt`, for a resource key rendered per attempt) then parsed by `parse`.
    pub fn quantity<T>(
        &mut self,
        q: &Sp<Quantity>,
        key: &str,
        attempt: Option<u32>,
        from_number: impl FnOnce(f64) -> Result<T, ValueError>,
        parse: impl FnOnce(&str) -> Result<T, ValueError>,
        help: &str,
    ) -> Option<T> {
        let result = match &q.value {
            Quantity::Number(n) => from_number(*n),
            Quantity::Text(t) => {
                let text = self.render_before_run(&Sp::new(t.clone(), q.span.clone()), key, attempt)?;
                parse(&text)
            }
        };
        match result {
            Ok(v) => Some(v),
            Err(msg) => {
                self.report(
                    Diagnostic::new(Code::CompileBadValue, format!("bad `{key}`: {msg}"))
                        .at(q.span.clone(), "invalid value")
                        .help(help.to_owned()),
                );
                None
            }
        }
    }

    /// A non-negative whole number key (`nodes`, `retries`, ...).
    pub fn count(&mut self, q: &Sp<Quantity>, key: &str, min: u64) -> Option<u64> {
        let check = move |n: f64| {
            if n.fract() == 0.0 && n > u32::MAX as f64 {
                Err(ValueError::TooLarge { max: u32::MAX.into() })
            } else if n.fract() != 0.0 || n < min as f64 {
                Err(ValueError::BelowMin { n, min })
            } else {
                Ok(n as u64)
            }
        };
        let help = format!("`{key}` takes a whole number of at least {min}");
        self.quantity(
            q,
            key,
            None,
            check,
            |s| s.trim().parse::<f64>().map_err(|_| ValueError::NotNumber(s.to_owned())).and_then(check),
            &help,
        )
    }
}
