//! Dependency inference, pass one: every instance's `inputs`, `outputs` and
//! `after` are rendered and outputs are indexed by file name. Pass two
//! ([`super::link`]) matches inputs and selectors against them.
//!
//! Work is linear in the number of instances: exact file names are looked up
//! in a hash map, and each distinct glob is matched once against all outputs.

use std::collections::HashSet;

use super::ctx::Ctx;
use super::draft::{Draft, base_domain, instance_name, is_deferred};
use super::link::Linker;
use super::output_index::{OutputIndex, Producer};
use super::rendered::Rendered;
use super::resolved::Resolved;
use super::symbolic;
use super::when_files;
use crate::diag::{Code, Diagnostic};
use crate::ir::{Command, Domain, Edge, EdgeKind, EdgeOn, EdgeOrigin, GroupId};
use crate::paths::normalize;
use crate::scripts;
use crate::spec::{AfterOn, Sp};
use crate::template::{Tmpl, instance_scope, is_context_name, undefined_name};

/// Instances to render every template for, to catch errors in keys that are
/// otherwise only rendered at run time (plus the last instance).
const VALIDATE_FIRST: u64 = 100;

/// One template key of a group, compiled.
struct Key {
    name: String,
    source: Sp<String>,
    tmpl: Tmpl,
    /// Set once this key failed to render, so one mistake is reported once.
    failed: bool,
}

/// Renders file names and selectors of every instance and returns the edges.
///
/// With `complete` false some task failed to compile, so inputs nobody
/// produces are not reported (the failed task may have produced them).
pub fn infer(
    ctx: &mut Ctx,
    resolved: &[Resolved],
    names: &[&str],
    drafts: &[Option<Draft>],
    complete: bool,
) -> Vec<Edge> {
    // A group known only at run time is one symbolic instance here.
    let counts: Vec<u64> = (0..drafts.len())
        .map(|g| match &drafts[g] {
            Some(_) if is_deferred(drafts, g) => 1,
            Some(d) => d.group.count,
            None => 0,
        })
        .collect();
    let mut producers = OutputIndex::default();
    let mut reported = HashSet::new();
    let mut rendered = Vec::with_capacity(drafts.len());
    for (g, draft) in drafts.iter().enumerate() {
        let r = match draft {
            Some(draft) => render_group(ctx, &resolved[g], drafts, g, draft, &mut producers, &mut reported),
            None => Rendered::default(),
        };
        rendered.push(r);
    }
    stale_expansions(ctx, drafts, &producers);
    let later = deferred_outputs(&producers, drafts);
    let mut linker = Linker::new(&producers, &later, &counts, ctx.options().base_dir.clone(), complete);
    for (g, r) in rendered.iter().enumerate() {
        if drafts[g].is_some() {
            linker.inputs(ctx, drafts, g as u32, r);
            linker.scripts(g as u32, &r.scripts);
            linker.after(ctx, names, drafts, g as u32, r);
        }
    }
    deferred_edges(drafts, linker.finish())
}

/// The parent of nested group `g`.
fn parent_of(drafts: &[Option<Draft>], g: usize) -> Option<usize> {
    match drafts.get(g).and_then(Option::as_ref).map(|d| &d.group.domain) {
        Some(Domain::Nested { parent, .. }) => Some(parent.index()),
        _ => None,
    }
}

/// The base group of `g` (following `for_each`).
fn base_group(drafts: &[Option<Draft>], mut g: usize) -> usize {
    while let Some(Domain::Same { group }) = drafts.get(g).and_then(Option::as_ref).map(|d| &d.group.domain) {
        g = group.index();
    }
    g
}

/// The outputs of groups known only at run time, as patterns.
fn deferred_outputs(producers: &OutputIndex, drafts: &[Option<Draft>]) -> Vec<(u32, globset::GlobMatcher)> {
    producers
        .iter()
        .filter(|(path, (g, _))| symbolic::is_symbolic(path) && is_deferred(drafts, *g as usize))
        .filter_map(|(path, (g, _))| Some((g, crate::paths::glob_matcher(&symbolic::to_glob(path)).ok()?)))
        .collect()
}

/// Edges that meet a group known only at run time say "the whole group":
/// its instances are not known yet. Only a `for_each` mirror that reads
/// what its own instance of the base group wrote keeps an element-wise
/// edge. The tasks that write an expansion file get an `expansion` edge;
/// a nested group gets one element-wise `expansion` edge from its parent,
/// which stands for the edges the files between them would give.
fn deferred_edges(drafts: &[Option<Draft>], mut edges: Vec<Edge>) -> Vec<Edge> {
    edges.retain(|e| parent_of(drafts, e.to.index()) != Some(e.from.index()));
    for e in &mut edges {
        let (from, to) = (e.from.index(), e.to.index());
        let same_base = base_group(drafts, from) == base_group(drafts, to);
        if (is_deferred(drafts, from) || is_deferred(drafts, to)) && !(same_base && e.kind == EdgeKind::ElementWise) {
            e.kind = EdgeKind::All;
        }
    }
    for (to, draft) in drafts.iter().enumerate() {
        let parent = parent_of(drafts, to);
        if let Some(from) = parent {
            let (from, to) = (GroupId(from as u32), GroupId(to as u32));
            edges.push(Edge {
                from,
                to,
                kind: EdgeKind::ElementWise,
                origin: EdgeOrigin::Expansion,
                on: EdgeOn::Success,
            });
        }
        for &from in draft.iter().flat_map(|d| &d.waits_for).filter(|&&w| Some(w) != parent) {
            edges.push(Edge {
                from: GroupId(from as u32),
                to: GroupId(to as u32),
                kind: EdgeKind::All,
                origin: EdgeOrigin::Expansion,
                on: EdgeOn::Success,
            });
        }
    }
    edges
}

/// A file expanded before the run that a task writes after all: flow could
/// not see it from the writer's `outputs` (named only by `{{ item }}`, say),
/// and reading it now would use an old copy.
fn stale_expansions(ctx: &mut Ctx, drafts: &[Option<Draft>], producers: &OutputIndex) {
    for (g, draft) in drafts.iter().enumerate() {
        let Some(d) = draft else { continue };
        let (Domain::Lines { file, .. } | Domain::Json { file, .. } | Domain::Chunks { file, .. }) = &d.group.domain
        else {
            continue;
        };
        if let Some(writer) = producers.get(&normalize(file)).filter(|w| w.0 as usize != g) {
            ctx.report(
                Diagnostic::new(
                    Code::CompileUnseenWriter,
                    format!("`{file}` is expanded before the run, but {} writes it", instance_name(drafts, writer)),
                )
                .at(d.group.span.clone(), "this task")
                .help("give the writer's `outputs` entry some fixed text (a directory or extension) so flow sees that it writes the file"),
            );
        }
    }
}

fn keys(ctx: &mut Ctx, name: &str, list: &Option<Sp<Vec<Sp<String>>>>) -> Vec<Key> {
    list.iter().flat_map(|l| l.value.iter()).filter_map(|s| key(ctx, name.to_owned(), s.clone())).collect()
}

fn key(ctx: &mut Ctx, name: String, source: Sp<String>) -> Option<Key> {
    // Syntax errors were reported when the group was built.
    let tmpl = ctx.template(&source.value).ok()?;
    Some(Key { name, source, tmpl, failed: false })
}

fn render_group(
    ctx: &mut Ctx,
    task: &Resolved,
    drafts: &[Option<Draft>],
    g: usize,
    draft: &Draft,
    producers: &mut OutputIndex,
    reported: &mut HashSet<(u32, usize)>,
) -> Rendered {
    let spec = &task.spec;
    let mut inputs = keys(ctx, "inputs", &spec.inputs);
    // The file `stdin` names is read like an input: it waits for its writer.
    inputs.extend(spec.stdin.iter().filter_map(|s| key(ctx, "stdin".to_owned(), s.clone())));
    let mut outputs = keys(ctx, "outputs", &spec.outputs);
    let (mut after, after_on): (Vec<Key>, Vec<EdgeOn>) = spec
        .after
        .iter()
        .flat_map(|l| l.value.iter())
        .filter_map(|a| key(ctx, "after".to_owned(), a.task.clone()).map(|k| (k, edge_on(a.on()))))
        .unzip();
    // A `when` that reads a file is checked by `when_files`: the file may not exist yet.
    let keys = task.run_time_keys().into_iter().filter(|(name, _)| name != "stdin");
    let keys: Vec<_> =
        keys.filter(|(name, s)| name != "when" || when_files::reads(ctx, &task.name, &s.value).is_empty()).collect();
    let mut others: Vec<Key> = keys.into_iter().filter_map(|(name, source)| key(ctx, name, source)).collect();
    let mut out = Rendered {
        input_spans: inputs.iter().map(|k| k.source.span.clone()).collect(),
        after_spans: after.iter().map(|k| k.source.span.clone()).collect(),
        after_on,
        scripts: named_scripts(&draft.group),
        ..Rendered::default()
    };
    let domain = base_domain(drafts, g);
    let deferred = is_deferred(drafts, g);
    let count = if deferred { 1 } else { draft.group.count };
    for i in 0..count {
        let scope = if deferred {
            symbolic::scope(ctx, &draft.group.name, matches!(domain, Domain::Nested { .. }))
        } else {
            instance_scope(&draft.scope, domain, i, None)
        };
        let at = Instance { drafts, id: (g as u32, i), count, deferred };
        for key in &mut outputs {
            let path = match render(ctx, key, &scope, &at) {
                Some(path) => path,
                None if deferred => symbolic::fallback(&key.source.value),
                None => continue,
            };
            let path = normalize(&path);
            if let Some(first) = producers.insert(&path, (g as u32, i))
                && first != (g as u32, i)
                && reported.insert((first.0, g))
            {
                ctx.report(duplicate_producer(&path, drafts, first, (g as u32, i), &key.source));
            }
        }
        for (k, key) in inputs.iter_mut().enumerate() {
            if let Some(path) = render(ctx, key, &scope, &at) {
                out.inputs.push(&normalize(&path));
                out.input_keys.push(k as u32);
            }
        }
        out.input_ends.push(out.inputs.len());
        for (k, key) in after.iter_mut().enumerate() {
            if let Some(selector) = render(ctx, key, &scope, &at) {
                out.after.push(&selector);
                out.after_keys.push(k as u32);
            }
        }
        out.after_ends.push(out.after.len());
        if i < VALIDATE_FIRST || i + 1 == count {
            // Keys rendered when the instance starts also see `attempt`.
            let scope = if deferred { scope } else { instance_scope(&draft.scope, domain, i, Some(0)) };
            for key in &mut others {
                render(ctx, key, &scope, &at);
            }
        }
    }
    out
}

/// The files the command and setup lines of `group` name as scripts,
/// from the workflow directory, when flow tracks them (`implicit_inputs`)
/// and its `cwd` holds no template: a task that writes one runs first.
fn named_scripts(group: &crate::ir::Group) -> Vec<String> {
    let t = &group.template;
    let cwd = t.cwd.as_deref().unwrap_or("");
    if !group.implicit_inputs || scripts::mask_templates(cwd) != cwd {
        return Vec::new();
    }
    let masked: Vec<String>;
    let command = match &t.command {
        Command::Shell(text) => {
            masked = vec![scripts::mask_templates(text)];
            scripts::CommandText::Shell(&masked[0])
        }
        Command::Argv(args) => {
            masked = args.iter().map(|a| scripts::mask_templates(a)).collect();
            scripts::CommandText::Argv(&masked)
        }
    };
    let setup: Vec<String> = t.setup.iter().map(|l| scripts::mask_templates(l)).collect();
    scripts::named_scripts(command, &setup, &normalize(cwd))
}

/// The instance being rendered, to name it in errors.
struct Instance<'a> {
    drafts: &'a [Option<Draft>],
    id: Producer,
    count: u64,
    /// The symbolic instance of a group known only at run time: only
    /// mistakes in `vars` are certain; the rest is checked at run time.
    deferred: bool,
}

/// Renders one key for one instance; reports the first failure of each key.
fn render(ctx: &mut Ctx, key: &mut Key, scope: &minijinja::Value, at: &Instance) -> Option<String> {
    if key.failed {
        return None;
    }
    match ctx.render(&key.tmpl, scope) {
        Ok(s) => Some(s.into_owned()),
        Err(e) => {
            key.failed = true;
            // A misspelt `vars` entry or context name is wrong for every
            // instance; anything else may be fine for the real ones.
            let certain = undefined_name(&e, &key.source.value).is_some_and(|n| {
                let root = n.split(['.', '[']).next().unwrap_or(n);
                root == "vars" || !is_context_name(root)
            });
            if at.deferred && !certain {
                return None;
            }
            let mut d = ctx.template_error(&e, &key.source, &key.name);
            if at.count > 1 {
                d.message.push_str(&format!(" (in {})", instance_name(at.drafts, at.id)));
            }
            ctx.report(d);
            None
        }
    }
}

fn duplicate_producer(
    path: &str,
    drafts: &[Option<Draft>],
    first: Producer,
    second: Producer,
    source: &Sp<String>,
) -> Diagnostic {
    Diagnostic::new(
        Code::CompileDuplicateProducer,
        format!("`{path}` is an output of both {} and {}", instance_name(drafts, first), instance_name(drafts, second)),
    )
    .at(source.span.clone(), "second producer")
    .help("every file must have one producer; make the names differ, e.g. with `{{ index }}`")
}

/// What an `after` entry's `on` says, in the graph's terms.
fn edge_on(on: AfterOn) -> EdgeOn {
    match on {
        AfterOn::Success => EdgeOn::Success,
        AfterOn::Failure => EdgeOn::Failure,
        AfterOn::Always => EdgeOn::Always,
    }
}
