//! A `when` over the content of a file: one that calls `read` is decided
//! per instance when the run reaches it, like a `when` over `item`, and
//! its task waits for every task that writes a file it reads, so the file
//! is final when the condition is rendered. A file no task writes is read
//! then too; a literal path that no task writes and that does not exist is
//! reported before the run.

use minijinja::ErrorKind;

use super::ctx::Ctx;
use super::resolved::Resolved;
use super::symbolic;
use super::writers::Writers;
use crate::diag::{Code, Diagnostic};
use crate::ir::{Edge, EdgeKind, EdgeOn, EdgeOrigin, GroupId};
use crate::spec::Sp;

/// The files the `when` of task `name` reads, rendered for its symbolic
/// instance (a path that names `item` has unknown parts).
pub fn reads(ctx: &mut Ctx, name: &str, when: &str) -> Vec<String> {
    let scope = symbolic::scope(ctx, name, true);
    ctx.reads(when, &scope).0
}

/// Reports the mistakes certain before the run in the `when` of task
/// `name` if it reads a file (one that does not is checked when it is
/// decided): a syntax error, an undefined variable, an unknown filter,
/// function or test. Returns whether it reads a file.
pub fn check(ctx: &mut Ctx, name: &str, when: &Sp<String>) -> bool {
    let scope = symbolic::scope(ctx, name, true);
    let (reads, err) = ctx.reads(&when.value, &scope);
    if reads.is_empty() {
        return false;
    }
    let certain = [
        ErrorKind::SyntaxError,
        ErrorKind::UndefinedError,
        ErrorKind::UnknownFilter,
        ErrorKind::UnknownFunction,
        ErrorKind::UnknownTest,
    ];
    if let Some(e) = err.filter(|e| certain.contains(&e.kind())) {
        let d = ctx.template_error(&e, when, "when");
        ctx.report(d);
    }
    true
}

/// Whether the `when` of task `name` is decided per instance, when the run
/// reaches it: it names `item`, `index` or `subindex`, or reads a file.
pub fn decided_at_run(ctx: &mut Ctx, name: &str, when: &Sp<String>) -> bool {
    ctx.names_instance(when) || !reads(ctx, name, &when.value).is_empty()
}

/// Adds to `edges` what the `when` of each task in `resolved` waits for:
/// the whole of every task whose `outputs` may name a file it reads (as
/// patterns: `out/{{ index }}.txt` may name `out/pass.txt`). With `complete`
/// false some task failed to compile, so a file nothing writes is not
/// reported (that task may have written it).
pub fn wait_for_writers(
    ctx: &mut Ctx,
    resolved: &[Resolved],
    writers: &Writers,
    complete: bool,
    edges: &mut Vec<Edge>,
) {
    for (g, r) in resolved.iter().enumerate() {
        let Some(when) = &r.spec.when else { continue };
        for path in reads(ctx, &r.name, &when.value) {
            let symbolic = symbolic::is_symbolic(&path);
            let by = if symbolic { writers.of_pattern(&path, g) } else { writers.of(&path, g) };
            if by.is_empty() && !symbolic && complete && !ctx.options().base_dir.join(&path).exists() {
                ctx.report(
                    Diagnostic::new(
                        Code::CompileMissingInput,
                        format!("`when` reads `{path}`, which does not exist, and no task produces it"),
                    )
                    .at(when.span.clone(), "read here")
                    .help("create the file, fix the path (relative to the workflow file), or add a task that lists it in `outputs`"),
                );
            }
            for from in by {
                wait_whole(edges, GroupId(from as u32), GroupId(g as u32));
            }
        }
    }
}

/// Makes every instance of `to` wait for every instance of `from`, unless
/// an edge already does.
fn wait_whole(edges: &mut Vec<Edge>, from: GroupId, to: GroupId) {
    if edges.iter().any(|e| e.from == from && e.to == to && e.kind == EdgeKind::All) {
        return;
    }
    match edges.iter_mut().find(|e| e.from == from && e.to == to && e.origin == EdgeOrigin::Files) {
        Some(e) => e.kind = EdgeKind::All,
        None => edges.push(Edge { from, to, kind: EdgeKind::All, origin: EdgeOrigin::Files, on: EdgeOn::Success }),
    }
}
