//! [`Draft`]: one task compiled on its own (templates, domain, resources,
//! numbers), before dependencies are known.

use std::sync::Arc;

use super::compiler::Compiler;
use super::{expand, merge::Resolved, resources};
use crate::diag::{Code, Diagnostic};
use crate::ir::{Command, Group, Resources, Stream, TaskTemplate};
use crate::spec::{Quantity, Sp, TaskSpec};
use crate::template::{GroupScope, group_scope};

/// A group being compiled.
pub struct Draft {
    /// The group as it will appear in the IR (`domain` may still be a `for_each` placeholder).
    pub group: Group,
    /// What all instances share in their template context.
    pub scope: Arc<GroupScope>,
    /// Index of the resolved task named by `for_each`, until resolved.
    pub for_each: Option<Sp<String>>,
    /// The tasks that write the file a deferred expansion reads.
    pub waits_for: Vec<usize>,
}

/// Compiles one task on its own. Errors are reported and, so later passes
/// can still find problems, replaced by defaults; only a task whose
/// instances cannot be known gives `None`.
pub fn build(c: &mut Compiler, r: &Resolved, g: usize) -> Option<Draft> {
    let spec = &r.spec;

    let command = match (&spec.command, &spec.argv) {
        (Some(cmd), None) => Some(Command::Shell(cmd.value.clone())),
        (None, Some(argv)) if !argv.value.is_empty() => {
            Some(Command::Argv(argv.value.iter().map(|a| a.value.clone()).collect()))
        }
        (None, Some(argv)) => {
            c.error(
                Diagnostic::new(Code::CompileEmptyArgv, format!("`argv` of task `{}` is empty", r.name))
                    .at(argv.span.clone(), "empty list")
                    .help("list the program and its arguments, e.g. argv = [\"echo\", \"hi\"]"),
            );
            None
        }
        (Some(cmd), Some(_)) => {
            c.error(
                Diagnostic::new(
                    Code::CompileCommandAndArgv,
                    format!("task `{}` has both `command` and `argv`", r.name),
                )
                .at(cmd.span.clone(), "one of these must go")
                .help("keep `command` to run through `sh -c`, or `argv` to run the program directly"),
            );
            None
        }
        (None, None) => {
            c.error(
                Diagnostic::new(Code::CompileNoCommand, format!("task `{}` has no command", r.name))
                    .at(r.name_span.clone(), "nothing to run")
                    .help("add `command = \"...\"` (run with sh -c) or `argv = [...]`, here or in its template"),
            );
            None
        }
    };

    let domain = expand::domain(c, r, g);
    let retries = spec.retries.as_ref().map_or(Some(0), |q| c.count(q, "retries", 0));
    let variants = resources::variants(c, spec, &r.name_span, retries.unwrap_or(0) as u32);
    let timeout = spec.timeout.as_ref().and_then(|q| resources::duration(c, q, "timeout"));
    let nodes = spec.nodes.as_ref().map_or(Some(1), |q| c.count(q, "nodes", 1));
    let crash_limit = spec.crash_limit.as_ref().map_or(Some(5), |q| c.count(q, "crash_limit", 0));
    let priority = spec.priority.as_ref().map_or(Some(0), |q| priority(c, q));

    check_syntax(c, r);
    let (domain, count, waits_for) = domain?;
    let command = command.unwrap_or(Command::Argv(Vec::new()));
    let (variants, retry_variants) = variants.unwrap_or_else(|| (vec![Resources::default_request()], Vec::new()));

    let text = |s: &Option<Sp<String>>| s.as_ref().map(|s| s.value.clone());
    let list = |s: &Option<Sp<Vec<Sp<String>>>>| {
        s.as_ref().map(|l| l.value.iter().map(|x| x.value.clone()).collect()).unwrap_or_default()
    };
    let template = TaskTemplate {
        command,
        cwd: text(&spec.cwd),
        env: spec
            .env
            .as_ref()
            .map(|e| e.value.iter().map(|(k, v)| (k.clone(), v.value.0.clone())).collect())
            .unwrap_or_default(),
        stdin: text(&spec.stdin),
        stdout: stream(&spec.stdout),
        stderr: stream(&spec.stderr),
        inputs: list(&spec.inputs),
        outputs: list(&spec.outputs),
    };
    let scope = group_scope(&c.vars_value, &r.name, count, None, &variants[0]);
    let group = Group {
        name: r.name.clone(),
        span: r.name_span.clone(),
        count,
        domain,
        template,
        variants,
        retry_variants,
        timeout,
        nodes: nodes.unwrap_or(1) as u32,
        priority: priority.unwrap_or(0),
        retries: retries.unwrap_or(0) as u32,
        crash_limit: crash_limit.unwrap_or(5) as u32,
        implicit_inputs: spec.implicit_inputs.as_ref().is_none_or(|b| b.value),
    };
    Some(Draft { group, scope, for_each: spec.for_each.clone(), waits_for })
}

fn stream(s: &Option<Sp<String>>) -> Stream {
    match s.as_ref().map(|s| s.value.as_str()) {
        None | Some("log") => Stream::Log,
        Some("none") => Stream::Null,
        Some(path) => Stream::File(path.to_owned()),
    }
}

fn priority(c: &mut Compiler, q: &Sp<Quantity>) -> Option<i64> {
    let whole = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 { Ok(n as i64) } else { Err(format!("{n} is not a whole number")) }
    };
    let parse = |s: &str| s.trim().parse::<i64>().map_err(|_| format!("`{s}` is not a whole number"));
    c.quantity(q, "priority", whole, parse, "`priority` takes a whole number; higher runs first")
}

/// The template keys rendered only when an instance starts: `command`,
/// `argv`, `cwd`, `stdin`, `stdout`, `stderr` and `env.NAME`, with their text.
pub fn run_time_keys(spec: &TaskSpec) -> Vec<(String, Sp<String>)> {
    let single = [
        ("command", &spec.command),
        ("cwd", &spec.cwd),
        ("stdin", &spec.stdin),
        ("stdout", &spec.stdout),
        ("stderr", &spec.stderr),
    ];
    let mut keys: Vec<(String, Sp<String>)> =
        single.into_iter().filter_map(|(key, s)| Some((key.to_owned(), s.clone()?))).collect();
    keys.extend(spec.argv.iter().flat_map(|l| l.value.iter()).map(|s| ("argv".to_owned(), s.clone())));
    keys.extend(
        spec.env
            .iter()
            .flat_map(|e| e.value.iter())
            .map(|(k, v)| (format!("env.{k}"), Sp::new(v.value.0.clone(), v.span.clone()))),
    );
    keys
}

/// Compiles every per-instance template so syntax errors show even for
/// keys that are only rendered at run time.
fn check_syntax(c: &mut Compiler, r: &Resolved) {
    let spec = &r.spec;
    let mut checks = run_time_keys(spec);
    for (key, list) in [("inputs", &spec.inputs), ("outputs", &spec.outputs), ("after", &spec.after)] {
        checks.extend(list.iter().flat_map(|l| l.value.iter()).map(|s| (key.to_owned(), s.clone())));
    }
    for (key, s) in checks {
        if let Err(e) = c.renderer.compile(&s.value) {
            let d = c.template_error(&e, &s, &key);
            c.error(d);
        }
    }
}
