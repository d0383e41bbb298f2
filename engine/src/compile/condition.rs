//! The `when` pass: tasks whose condition renders false are left out of
//! the graph, and so is every task that needs one of them — through
//! `after`, an input only they write, `for_each`, or the file it expands
//! over ("skip propagates").
//!
//! A condition over `vars` and `env` is decided here, once, before any
//! instance exists. One that names `item`, `index` or `subindex` is kept
//! in the task's template and decided per instance when the run starts it
//! (the instance is then skipped, not left out of the graph), and so is one
//! that reads a file (`when_files`).

use std::collections::HashMap;

use super::ctx::Ctx;
use super::resolved::Resolved;
use super::symbolic;
use super::when_files;
use super::writers::Writers;
use crate::ir::{DropReason, Dropped};
use crate::template::is_true;

/// Splits `resolved` into the tasks that run and those left out, in file
/// order. A `when` that cannot be rendered is reported and its task kept,
/// so the passes after this one still check it.
pub fn decide(ctx: &mut Ctx, resolved: Vec<Resolved>) -> (Vec<Resolved>, Vec<Dropped>) {
    let mut reasons: Vec<Option<DropReason>> = resolved.iter().map(|r| own_condition(ctx, r)).collect();
    if reasons.iter().all(Option::is_none) {
        return (resolved.into_iter().map(|r| decided(ctx, r)).collect(), Vec::new());
    }
    propagate(ctx, &resolved, &mut reasons);
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for (r, reason) in resolved.into_iter().zip(reasons) {
        match reason {
            Some(reason) => dropped.push(Dropped { name: r.name, reason }),
            None => kept.push(r),
        }
    }
    (kept.into_iter().map(|r| decided(ctx, r)).collect(), dropped)
}

/// `r`, kept, without its `when` if that was decided here: only a
/// condition decided when the run reaches the task is left (one over the
/// instance is checked with the keys rendered when an instance starts).
fn decided(ctx: &mut Ctx, mut r: Resolved) -> Resolved {
    ctx.enter_task(&r.name);
    let name = r.name.clone();
    if r.spec.when.as_ref().is_some_and(|w| !when_files::decided_at_run(ctx, &name, w)) {
        r.spec.when = None;
    }
    r
}

/// Why `r` is left out by its own `when`, if it is.
fn own_condition(ctx: &mut Ctx, r: &Resolved) -> Option<DropReason> {
    let when = r.spec.when.as_ref()?;
    ctx.enter_task(&r.name);
    if when_files::check(ctx, &r.name, when) || ctx.names_instance(when) {
        return None;
    }
    let rendered = ctx.render_vars(when, "when")?;
    (!is_true(&rendered)).then(|| DropReason::Condition { when: when.value.clone(), rendered })
}

/// Leaves out every task that needs a task left out, until none is left.
fn propagate(ctx: &mut Ctx, resolved: &[Resolved], reasons: &mut [Option<DropReason>]) {
    let writers = Writers::new(ctx, resolved);
    let position: HashMap<&str, usize> = resolved.iter().enumerate().map(|(g, r)| (r.name.as_str(), g)).collect();
    let needs: Vec<Vec<Vec<usize>>> =
        resolved.iter().enumerate().map(|(g, r)| needs(ctx, &writers, &position, g, r)).collect();
    loop {
        let mut changed = false;
        for g in 0..resolved.len() {
            if reasons[g].is_some() {
                continue;
            }
            let lost = needs[g].iter().find(|any_of| any_of.iter().all(|&up| reasons[up].is_some()));
            if let Some(&up) = lost.and_then(|any_of| any_of.first()) {
                reasons[g] = Some(DropReason::Upstream { task: resolved[up].name.clone() });
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// What `r` (at position `g`) cannot run without, each need as the tasks
/// any one of which meets it: the task each of its `after` and its
/// `for_each` name, and the writers of each of its inputs, of its
/// expansion file and of each file its `when` reads (a file no task writes
/// is not needed from any).
fn needs(ctx: &mut Ctx, writers: &Writers, position: &HashMap<&str, usize>, g: usize, r: &Resolved) -> Vec<Vec<usize>> {
    let spec = &r.spec;
    let mut out = Vec::new();
    let after = spec.after.iter().flat_map(|l| l.value.iter()).map(|a| a.task.value.as_str());
    for text in after.chain(spec.for_each.as_ref().map(|f| f.value.as_str())) {
        let selector = symbolic::render(ctx, &r.name, text);
        let name = selector.split('[').next().unwrap_or_default().trim();
        out.extend(position.get(name).map(|&up| vec![up]));
    }
    let mut paths: Vec<String> = spec
        .inputs
        .iter()
        .flat_map(|l| l.value.iter())
        .chain(r.nested_file())
        .map(|file| symbolic::render(ctx, &r.name, &file.value))
        .collect();
    if let Some(when) = &spec.when {
        paths.extend(when_files::reads(ctx, &r.name, &when.value));
    }
    for path in paths {
        let by = if symbolic::is_symbolic(&path) { writers.of_pattern(&path, g) } else { writers.of(&path, g) };
        if !by.is_empty() {
            out.push(by);
        }
    }
    out
}
