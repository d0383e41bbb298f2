//! [`compile`]: the passes in order, each given the shared [`Ctx`] and the
//! results of the passes before it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::ctx::Ctx;
use super::draft::Draft;
use super::options::Options;
use super::writers::Writers;
use super::{condition, for_each, group_builder, inference, merge, topo_order};
use crate::diag::{Code, Diagnostic, Source};
use crate::ir::Graph;
use crate::spec::Workflow;

/// Compiles `workflow` (parsed from `source`) into a validated graph, or
/// returns every problem found.
pub fn compile(workflow: &Workflow, source: &Arc<Source>, options: &Options) -> Result<Graph, Vec<Diagnostic>> {
    if workflow.tasks.is_empty() {
        return Err(vec![no_tasks(source)]);
    }
    let mut vars: BTreeMap<String, serde_json::Value> =
        workflow.vars.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect();
    vars.extend(options.vars.iter().cloned());
    let mut ctx = Ctx::new(source, options, &vars);

    let resolved = merge::resolve(&mut ctx, workflow);
    let (resolved, dropped) = condition::decide(&mut ctx, resolved);
    let writers = Writers::new(&mut ctx, &resolved);
    let mut drafts: Vec<Option<Draft>> =
        resolved.iter().enumerate().map(|(g, r)| group_builder::build(&mut ctx, &writers, r, g)).collect();
    for_each::resolve(&mut ctx, &resolved, &mut drafts);
    // Inputs a failed task would have produced must not be reported missing.
    let complete = drafts.iter().all(Option::is_some) && resolved.len() + dropped.len() == workflow.tasks.len();
    let names: Vec<&str> = resolved.iter().map(|r| r.name.as_str()).collect();
    let edges = inference::infer(&mut ctx, &resolved, &names, &drafts, complete);

    let groups = drafts.into_iter().map(|d| d.map(|d| d.group)).collect::<Option<Vec<_>>>();
    let Some(groups) = groups else { return Err(ctx.finish()) };
    let name = workflow.name.as_ref().map_or_else(|| "workflow".to_owned(), |n| n.value.clone());
    match topo_order::sort(&mut ctx, groups, edges) {
        Some((groups, edges)) if !ctx.has_errors() => Ok(Graph { name, vars, groups, edges, dropped }),
        _ => Err(ctx.finish()),
    }
}

/// An empty file is a mistake (the wrong file, an unsaved editor), not a
/// workflow that succeeds at doing nothing.
fn no_tasks(source: &Source) -> Diagnostic {
    let end = source.text.trim_end().len();
    Diagnostic::new(Code::CompileNoTasks, "the workflow has no tasks")
        .at(end..end, "tasks go here")
        .help("add a task: `[[tasks]]` with `name = \"hello\"` and `command = \"echo hello\"` (YAML: `tasks:` with `- name: hello`)")
}
