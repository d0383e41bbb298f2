//! [`compile`]: the driver that turns a [`Workflow`] into a [`Graph`], and
//! [`Compiler`], the state its passes share.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use minijinja::Value;

use super::{deps, expand, group, merge, order, symbolic};
use crate::diag::{Code, Diagnostic, Source};
use crate::ir::Graph;
use crate::resources::Capacity;
use crate::spec::{Quantity, Sp, Workflow};
use crate::template::{GroupScope, Renderer, Scope, json_value, template_diagnostic, undefined_name};

/// The default for [`Options::max_instances`]: 100 million instances of one task.
pub const MAX_INSTANCES: u64 = 100_000_000;

/// What the compiler needs besides the workflow file.
#[derive(Debug, Clone)]
pub struct Options {
    /// Directory relative paths are resolved against (the workflow file's directory).
    pub base_dir: PathBuf,
    /// Variable overrides, applied in order after the file's `[vars]`.
    pub vars: Vec<(String, serde_json::Value)>,
    /// The largest worker the workflow will run on, when known: a task none
    /// of whose variants fits it is an error.
    pub worker: Option<Capacity>,
    /// The most instances one task may have ([`MAX_INSTANCES`] by default).
    pub max_instances: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self { base_dir: PathBuf::new(), vars: Vec::new(), worker: None, max_instances: MAX_INSTANCES }
    }
}

/// Compiles `workflow` (parsed from `source`) into a validated graph, or
/// returns every problem found.
pub fn compile(workflow: &Workflow, source: &Arc<Source>, options: &Options) -> Result<Graph, Vec<Diagnostic>> {
    let mut vars: BTreeMap<String, serde_json::Value> =
        workflow.vars.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect();
    vars.extend(options.vars.iter().cloned());
    let mut c = Compiler {
        source: source.clone(),
        options,
        renderer: Renderer::default(),
        diags: Vec::new(),
        vars_value: json_value(&vars),
        writers: symbolic::Writers::default(),
        attempt: None,
    };

    if workflow.tasks.is_empty() {
        // An empty file is a mistake (the wrong file, an unsaved editor), not a
        // workflow that succeeds at doing nothing.
        let end = source.text.trim_end().len();
        c.diags.push(
            Diagnostic::new(Code::CompileNoTasks, "the workflow has no tasks")
                .at(end..end, "tasks go here")
                .help("add a task: `[[tasks]]` with `name = \"hello\"` and `command = \"echo hello\"` (YAML: `tasks:` with `- name: hello`)"),
        );
        return Err(c.diags);
    }
    let resolved = merge::resolve(workflow, source, &mut c.diags);
    let names: Vec<&str> = resolved.iter().map(|r| r.name.as_str()).collect();
    c.writers = symbolic::Writers::new(&mut c, &resolved);
    let mut drafts: Vec<Option<group::Draft>> =
        resolved.iter().enumerate().map(|(g, r)| group::build(&mut c, r, g)).collect();
    expand::resolve_for_each(&mut c, &resolved, &mut drafts);
    // Inputs a failed task would have produced must not be reported missing.
    let complete = drafts.iter().all(Option::is_some) && resolved.len() == workflow.tasks.len();
    let edges = deps::infer(&mut c, &resolved, &names, &drafts, complete);

    let groups = drafts.into_iter().map(|d| d.map(|d| d.group)).collect::<Option<Vec<_>>>();
    let Some(groups) = groups else { return Err(c.finish()) };
    let name = workflow.name.as_ref().map_or_else(|| "workflow".to_owned(), |n| n.value.clone());
    match order::sort(&mut c, groups, edges) {
        Some((groups, edges)) if c.diags.is_empty() => Ok(Graph { name, vars, groups, edges }),
        _ => Err(c.finish()),
    }
}

/// State shared by the compiler passes.
pub struct Compiler<'a> {
    /// The workflow file.
    pub source: Arc<Source>,
    /// The caller's options.
    pub options: &'a Options,
    /// Compiled templates.
    pub renderer: Renderer,
    /// Every problem found so far.
    pub diags: Vec<Diagnostic>,
    /// `vars` as a template value.
    pub vars_value: Value,
    /// The files each task may write, for telling which expansions wait for the run.
    pub writers: symbolic::Writers,
    /// The `attempt` resource keys are rendered for; `None` elsewhere.
    pub attempt: Option<u32>,
}

impl Compiler<'_> {
    /// Records a problem.
    pub fn error(&mut self, diagnostic: Diagnostic) {
        self.diags.push(diagnostic);
    }

    /// The diagnostics in file order.
    fn finish(mut self) -> Vec<Diagnostic> {
        self.diags.sort_by_key(|d| (d.source.is_some(), d.span.as_ref().map(|s| s.start)));
        self.diags
    }

    /// A context where only `vars` and `env` are defined (for expansion files and numbers).
    pub fn vars_scope(&self) -> Value {
        let group =
            Arc::new(GroupScope { vars: self.vars_value.clone(), task: Value::UNDEFINED, resources: Value::UNDEFINED });
        Scope {
            group,
            index: Value::UNDEFINED,
            item: Value::UNDEFINED,
            item_json: Value::UNDEFINED,
            chunk: Value::UNDEFINED,
            subindex: Value::UNDEFINED,
            attempt: self.attempt.map_or(Value::UNDEFINED, Value::from),
        }
        .into_value()
    }

    /// Renders a string value with `vars` only, reporting errors against `key`.
    pub fn render_vars(&mut self, text: &Sp<String>, key: &str) -> Option<String> {
        let scope = self.vars_scope();
        match self.renderer.render_str(&text.value, &scope) {
            Ok(s) => Some(s),
            Err(e) => {
                let mut d = self.template_error(&e, text, key);
                let name = undefined_name(&e, &text.value).unwrap_or_default();
                let root = name.split(['.', '[']).next().unwrap_or_default();
                let seen = name.starts_with("vars.")
                    || name.starts_with("env.")
                    || self.attempt.is_some() && root == "attempt";
                if !seen && !root.is_empty() {
                    // Not a typo: this key is read before there are instances.
                    let sees = if self.attempt.is_some() { "`vars`, `env` and `attempt`" } else { "`vars` and `env`" };
                    d.help = Some(format!(
                        "`{key}` is worked out once for the task, before its instances exist, so it sees only \
                         {sees}, not `{root}`; use a variable (`{{{{ vars.NAME }}}}`)"
                    ));
                }
                self.error(d);
                None
            }
        }
    }

    /// A diagnostic for a template error in `text` (the value of `key`); an
    /// undefined `vars.NAME` gets the closest variable as a suggestion.
    pub fn template_error(&self, err: &minijinja::Error, text: &Sp<String>, key: &str) -> Diagnostic {
        let mut d = template_diagnostic(err, &self.source.text, &text.span, &text.value, key);
        if let Some(name) = undefined_name(err, &text.value).and_then(|n| n.strip_prefix("vars."))
            && let Some(vars) = self.vars_value.as_object()
        {
            let known: Vec<String> = vars.try_iter().into_iter().flatten().map(|k| k.to_string()).collect();
            let first = name.split(['.', '[']).next().unwrap_or(name);
            if let Some(close) = crate::diag::closest(first, known.iter().map(String::as_str)) {
                d.help = Some(format!("did you mean `vars.{close}`?"));
            }
        }
        d
    }

    /// A numeric key: a number, or a string rendered with `vars` then parsed by `parse`.
    pub fn quantity<T>(
        &mut self,
        q: &Sp<Quantity>,
        key: &str,
        from_number: impl FnOnce(f64) -> Result<T, String>,
        parse: impl FnOnce(&str) -> Result<T, String>,
        help: &str,
    ) -> Option<T> {
        let result = match &q.value {
            Quantity::Number(n) => from_number(*n),
            Quantity::Text(t) => {
                let text = self.render_vars(&Sp::new(t.clone(), q.span.clone()), key)?;
                parse(&text)
            }
        };
        match result {
            Ok(v) => Some(v),
            Err(msg) => {
                self.error(
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
            if n.fract() != 0.0 || n < min as f64 || n > u32::MAX as f64 {
                Err(format!("{n} is not a whole number of at least {min}"))
            } else {
                Ok(n as u64)
            }
        };
        let help = format!("`{key}` takes a whole number of at least {min}");
        self.quantity(
            q,
            key,
            check,
            |s| s.trim().parse::<f64>().map_err(|_| format!("`{s}` is not a number")).and_then(check),
            &help,
        )
    }
}
