//! `for_each`: every mirroring group pointed at the group that owns its
//! instances, and every nested group at its parent ([`nested::nest`]).

use super::ctx::Ctx;
use super::draft::Draft;
use super::nested;
use super::resolved::Resolved;
use crate::diag::{Code, Diagnostic};
use crate::ir::{Domain, GroupId};

/// Points every `for_each` group at the group it mirrors and copies its count.
pub fn resolve(ctx: &mut Ctx, resolved: &[Resolved], drafts: &mut [Option<Draft>]) {
    for i in 0..drafts.len() {
        let Some(target) = drafts[i].as_ref().and_then(|d| d.for_each.clone()) else { continue };
        let mut seen = vec![i];
        let mut current = target.clone();
        let found = loop {
            let Some(j) = resolved.iter().position(|r| r.name == current.value) else {
                let help = crate::diag::closest(&current.value, resolved.iter().map(|r| r.name.as_str()))
                    .map_or_else(|| "name a task defined in this file".to_owned(), |b| format!("did you mean `{b}`?"));
                ctx.report(
                    Diagnostic::new(
                        Code::CompileUnknownTask,
                        format!("`for_each` names unknown task `{}`", current.value),
                    )
                    .at(current.span.clone(), "no such task")
                    .help(help),
                );
                break None;
            };
            if seen.contains(&j) {
                let path: Vec<&str> = seen.iter().chain([&j]).map(|&k| resolved[k].name.as_str()).collect();
                ctx.report(
                    Diagnostic::new(
                        Code::CompileCycle,
                        format!("`for_each` goes round in a circle: {}", path.join(" → ")),
                    )
                    .at(target.span.clone(), "circular for_each")
                    .help("one task in the circle must expand on its own (range, each_line, ...)"),
                );
                break None;
            }
            // A nested task's `for_each` names its parent: mirroring it
            // mirrors its parts.
            match drafts[j].as_ref().map(|d| (matches!(d.group.domain, Domain::Nested { .. }), d.for_each.clone())) {
                Some((true, _)) => break Some(j),
                Some((false, Some(next))) => {
                    seen.push(j);
                    current = next;
                }
                Some((false, None)) => break Some(j),
                None => break None,
            }
        };
        let Some(j) = found else {
            drafts[i] = None;
            continue;
        };
        if drafts[i].as_ref().is_some_and(|d| matches!(d.group.domain, Domain::Nested { .. })) {
            nested::nest(ctx, resolved, drafts, i, j, &target);
            continue;
        }
        let count = drafts[j].as_ref().map_or(0, |d| d.group.count);
        if let Some(d) = drafts[i].as_mut() {
            d.group.domain = Domain::Same { group: GroupId(j as u32) };
            d.group.count = count;
            d.scope = crate::template::group_scope(
                ctx.vars(),
                &d.group.name,
                count,
                Some(&resolved[j].name),
                &d.group.variants[0],
            );
            d.for_each = None;
        }
    }
}
