//! Per-instance fan-out: `for_each` together with `each_line`,
//! `each_chunk` or `from_json` gives a nested group
//! ([`crate::ir::Domain::Nested`]), a part per instance of its parent, whose
//! file is a template rendered for that instance.

use super::ctx::Ctx;
use super::draft::Draft;
use super::resolved::Resolved;
use super::symbolic;
use super::writers::Writers;
use crate::diag::{Code, Diagnostic};
use crate::ir::{Domain, Expansion, GroupId};
use crate::spec::Sp;
use crate::template::instance_scope;

/// `for_each` together with one file expansion: a part of instances per
/// instance of the `for_each` task, from the file rendered for it. `None`
/// when the task is not written so; the parent is set by [`nest`].
/// `writers` tells which files other tasks write.
pub(super) fn domain(
    ctx: &mut Ctx,
    writers: &Writers,
    r: &Resolved,
    g: usize,
    present: &[(&'static str, std::ops::Range<usize>)],
) -> Option<Option<(Domain, u64, Vec<usize>)>> {
    let spec = &r.spec;
    let keys: Vec<&str> = present.iter().map(|(k, _)| *k).collect();
    if present.len() != 2 || !keys.contains(&"for_each") {
        return None;
    }
    let file = r.nested_file()?;
    let expansion = match (&spec.each_line, &spec.from_json, &spec.each_chunk) {
        (Some(_), _, _) => Expansion::Lines { file: file.value.clone() },
        (_, Some(_), _) => Expansion::Json { file: file.value.clone() },
        (_, _, Some(chunk)) => {
            let Some(lines) = ctx.count(&chunk.value.lines, "lines", 1) else { return Some(None) };
            let stdin = chunk.value.stdin.as_ref().is_some_and(|s| s.value);
            Expansion::Chunks { file: file.value.clone(), dir: format!(".flow/chunks/{}", r.name), lines, stdin }
        }
        _ => return None,
    };
    if let Err(e) = ctx.template(&file.value) {
        let d = ctx.template_error(&e, file, expansion.key());
        ctx.report(d);
        return Some(None);
    }
    let pattern = symbolic::render(ctx, &r.name, &file.value);
    let writers = writers.of_pattern(&pattern, g);
    let domain = Domain::Nested { parent: GroupId(u32::MAX), expansion, parts: Default::default() };
    Some(Some((domain, 0, writers)))
}

/// Points nested task `i` at its parent: the task its `for_each` names
/// (`target`), whose instances live in group `base`. A parent whose
/// instances are themselves known only at run time is refused.
pub(super) fn nest(
    ctx: &mut Ctx,
    resolved: &[Resolved],
    drafts: &mut [Option<Draft>],
    i: usize,
    base: usize,
    target: &Sp<String>,
) {
    let parent = resolved.iter().position(|r| r.name == target.value).unwrap_or(base);
    let dynamic = drafts[base]
        .as_ref()
        .is_some_and(|d| matches!(d.group.domain, Domain::Deferred { .. } | Domain::Nested { .. }));
    if dynamic {
        ctx.report(
            Diagnostic::new(
                Code::CompileNestedParent,
                format!(
                    "`{}` expands a file per instance of `{}`, whose own instances are known only at run time",
                    resolved[i].name, target.value
                ),
            )
            .at(target.span.clone(), "instances not known before the run")
            .help("expand per instance of a task whose instances are known before the run, or expand over one file"),
        );
        drafts[i] = None;
        return;
    }
    if let Some(d) = drafts[i].as_mut() {
        if let Domain::Nested { parent: p, .. } = &mut d.group.domain {
            *p = GroupId(parent as u32);
        }
        d.scope = crate::template::group_scope(ctx.vars(), &d.group.name, 0, Some(&target.value), &d.group.variants[0]);
        d.for_each = None;
    }
    unwritten(ctx, resolved, drafts, i, base);
}

/// When no task writes the files of nested task `i`, they must be there
/// before the run: reports the first one missing. The parent's instances
/// live in group `base`.
fn unwritten(ctx: &mut Ctx, resolved: &[Resolved], drafts: &[Option<Draft>], i: usize, base: usize) {
    let (Some(draft), Some(parent)) = (&drafts[i], &drafts[base]) else { return };
    let Domain::Nested { expansion, .. } = &draft.group.domain else { return };
    if !draft.waits_for.is_empty() {
        return;
    }
    let Some(file) = resolved[i].nested_file() else { return };
    let Ok(tmpl) = ctx.template(&file.value) else { return };
    for k in 0..parent.group.count {
        let scope = instance_scope(&parent.scope, &parent.group.domain, k, None);
        let Ok(path) = ctx.render(&tmpl, &scope) else { return };
        if ctx.options().base_dir.join(path.as_ref()).is_file() {
            continue;
        }
        let index = parent.group.domain.index(k);
        ctx.report(
            Diagnostic::new(
                Code::CompileUnreadableFile,
                format!(
                    "`{path}`, the `{}` file of `{}[{index}]`, does not exist, and no task writes it",
                    expansion.key(),
                    resolved[base].name
                ),
            )
            .at(file.span.clone(), "rendered per instance")
            .help("create the files, or list them in the `outputs` of the task that writes them"),
        );
        return;
    }
}
