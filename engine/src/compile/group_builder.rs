//! Building a group: one task compiled on its own (command, templates,
//! domain, resources, numbers) into a [`Draft`], before dependencies are known.

use super::ctx::Ctx;
use super::draft::Draft;
use super::resolved::Resolved;
use super::value_error::ValueError;
use super::writers::Writers;
use super::{containers, expand, failure_keys, requests, when_files};
use crate::diag::{Code, Diagnostic};
use crate::ir::{Command, Group, Resources, Stream, TaskTemplate};
use crate::spec::{Quantity, Sp};
use crate::template::group_scope;

/// Compiles one task on its own. Errors are reported and, so later passes
/// can still find problems, replaced by defaults; only a task whose
/// instances cannot be known gives `None`. `g` is the task's position;
/// `writers` tells which expansion files other tasks write.
pub fn build(ctx: &mut Ctx, writers: &Writers, r: &Resolved, g: usize) -> Option<Draft> {
    let spec = &r.spec;
    ctx.enter_task(&r.name);

    let command = match (&spec.command, &spec.argv) {
        (Some(cmd), None) => Some(Command::Shell(cmd.value.clone())),
        (None, Some(argv)) if !argv.value.is_empty() => {
            Some(Command::Argv(argv.value.iter().map(|a| a.value.clone()).collect()))
        }
        (None, Some(argv)) => {
            ctx.report(
                Diagnostic::new(Code::CompileEmptyArgv, format!("`argv` of task `{}` is empty", r.name))
                    .at(argv.span.clone(), "empty list")
                    .help("list the program and its arguments, e.g. argv = [\"echo\", \"hi\"]"),
            );
            None
        }
        (Some(cmd), Some(_)) => {
            ctx.report(
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
            ctx.report(
                Diagnostic::new(Code::CompileNoCommand, format!("task `{}` has no command", r.name))
                    .at(r.name_span.clone(), "nothing to run")
                    .help("add `command = \"...\"` (run with sh -c) or `argv = [...]`, here or in its template"),
            );
            None
        }
    };

    let domain = expand::domain(ctx, writers, r, g);
    let retries = spec.retries.as_ref().map_or(Some(0), |q| ctx.count(q, "retries", 0));
    let variants = requests::variants(ctx, spec, &r.name_span, retries.unwrap_or(0) as u32);
    let timeout = spec.timeout.as_ref().and_then(|q| requests::duration(ctx, q, "timeout", None));
    let nodes = spec.nodes.as_ref().map_or(Some(1), |q| ctx.count(q, "nodes", 1));
    let crash_limit = spec.crash_limit.as_ref().map_or(Some(5), |q| ctx.count(q, "crash_limit", 0));
    let priority = spec.priority.as_ref().map_or(Some(0), |q| priority(ctx, q));
    let retry_delay = spec.retry_delay.as_ref().and_then(|d| failure_keys::retry_delay(ctx, d));
    let retry_on = spec.retry_on.as_ref().map(|l| failure_keys::retry_on(ctx, l)).unwrap_or_default();
    let max_fails = spec.max_fails.as_ref().and_then(|q| failure_keys::max_fails(ctx, q, "max_fails"));

    check_syntax(ctx, r);
    let (domain, count, waits_for) = domain?;
    let command = command.unwrap_or(Command::Argv(Vec::new()));
    let (variants, retry_variants) = variants.unwrap_or_else(|| (vec![Resources::default_request()], Vec::new()));
    requests::check_nodes(ctx, &variants, nodes, spec.nodes.as_ref());

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
        setup: list(&spec.setup),
        // `container = ""` runs a task outside the container its defaults or template name.
        container: spec.container.as_ref().and_then(|c| image(ctx, &r.name, c)),
        when: spec.when.as_ref().filter(|w| when_files::decided_at_run(ctx, &r.name, w)).map(|w| w.value.clone()),
    };
    let scope = group_scope(ctx.vars(), &r.name, count, None, &variants[0]);
    let group = Group {
        name: r.name.clone(),
        span: r.name_span.clone(),
        source: ctx.included_from(r.name_span.start),
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
        retry_delay,
        retry_on,
        max_fails,
        continue_on_failure: spec.continue_on_failure.as_ref().is_some_and(|b| b.value),
        implicit_inputs: spec.implicit_inputs.as_ref().is_none_or(|b| b.value),
        keys: requests::key_spans(spec),
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

fn priority(ctx: &mut Ctx, q: &Sp<Quantity>) -> Option<i64> {
    let whole = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 { Ok(n as i64) } else { Err(ValueError::NotWhole(n)) }
    };
    let parse = |s: &str| s.trim().parse::<i64>().map_err(|_| ValueError::NotWholeText(s.to_owned()));
    ctx.quantity(q, "priority", None, whole, parse, "`priority` takes a whole number; higher runs first")
}

/// Compiles every per-instance template so syntax errors show even for
/// keys that are only rendered at run time.
fn check_syntax(ctx: &mut Ctx, r: &Resolved) {
    let spec = &r.spec;
    let mut checks = r.run_time_keys();
    for (key, list) in [("inputs", &spec.inputs), ("outputs", &spec.outputs)] {
        checks.extend(list.iter().flat_map(|l| l.value.iter()).map(|s| (key.to_owned(), s.clone())));
    }
    checks.extend(spec.after.iter().flat_map(|l| l.value.iter()).map(|a| ("after".to_owned(), a.task.clone())));
    for (key, s) in checks {
        if let Err(e) = ctx.template(&s.value) {
            let d = ctx.template_error(&e, &s, &key);
            ctx.report(d);
        }
    }
}

/// The image `container` names, its variables rendered; none for `""` (a
/// task outside the container its defaults or template name) or a value
/// that cannot be an image ([`containers::bad_image`], reported).
fn image(ctx: &mut Ctx, task: &str, container: &Sp<String>) -> Option<String> {
    let text = ctx.render_vars(container, "container").filter(|c| !c.is_empty())?;
    match containers::bad_image(&text, &format!("task `{task}`"), container) {
        Some(diagnostic) => {
            ctx.report(diagnostic);
            None
        }
        None => Some(text),
    }
}
