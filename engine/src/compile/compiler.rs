//! [`compile`]: the passes in order, each given the shared [`Ctx`] and the
//! results of the passes before it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::ctx::Ctx;
use super::draft::Draft;
use super::options::Options;
use super::writers::Writers;
use super::{condition, containers, for_each, group_builder, inference, merge, run_policy, topo_order, when_files};
use crate::diag::{Code, Diagnostic, Source};
use crate::ir::Graph;
use crate::spec::Workflow;

/// The graph of a TOML workflow `text` with default options, for tests
/// that need one; panics on a mistake in it.
#[cfg(test)]
pub(crate) fn compile_toml(text: &str) -> Graph {
    let source = Source::new("workflow.toml", text);
    let workflow = crate::spec::parse(&source, crate::spec::Format::Toml).expect("parses");
    compile(&workflow, &source, &Options::default()).expect("compiles")
}

/// Compiles `workflow` (parsed from `source`) into a validated graph, or
/// returns every problem found.
pub fn compile(workflow: &Workflow, source: &Arc<Source>, options: &Options) -> Result<Graph, Vec<Diagnostic>> {
    if workflow.tasks.is_empty() {
        return Err(vec![no_tasks(source)]);
    }
    let mut vars: BTreeMap<String, serde_json::Value> =
        workflow.vars.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect();
    let namespaces: BTreeSet<&str> = workflow.namespace_defaults.keys().map(String::as_str).collect();
    for (name, value) in &options.vars {
        set_var(&mut vars, &namespaces, name, value.clone());
    }
    let mut ctx = Ctx::new(source, options, &vars);

    let container_engine = containers::engine(&mut ctx, workflow);
    let resolved = merge::resolve(&mut ctx, workflow);
    let (resolved, dropped) = condition::decide(&mut ctx, resolved);
    let writers = Writers::new(&mut ctx, &resolved);
    let mut drafts: Vec<Option<Draft>> =
        resolved.iter().enumerate().map(|(g, r)| group_builder::build(&mut ctx, &writers, r, g)).collect();
    for_each::resolve(&mut ctx, &resolved, &mut drafts);
    // Inputs a failed task would have produced must not be reported missing.
    let complete = drafts.iter().all(Option::is_some) && resolved.len() + dropped.len() == workflow.tasks.len();
    let names: Vec<&str> = resolved.iter().map(|r| r.name.as_str()).collect();
    let mut edges = inference::infer(&mut ctx, &resolved, &names, &drafts, complete);
    when_files::wait_for_writers(&mut ctx, &resolved, &writers, complete, &mut edges);
    let max_fails = run_policy::max_fails(&mut ctx, workflow);
    let finally = workflow.finally.as_ref().and_then(|f| run_policy::finally(&mut ctx, f));

    let groups = drafts.into_iter().map(|d| d.map(|d| d.group)).collect::<Option<Vec<_>>>();
    let Some(groups) = groups else { return Err(ctx.finish()) };
    let name = workflow.name.as_ref().map_or_else(|| "workflow".to_owned(), |n| n.value.clone());
    match topo_order::sort(&mut ctx, groups, edges) {
        Some((groups, edges)) if !ctx.has_errors() => Ok(Graph {
            name,
            vars,
            groups,
            edges,
            max_fails,
            finally,
            container_engine,
            images: BTreeMap::new(),
            dropped,
        }),
        _ => Err(ctx.finish()),
    }
}

/// Sets the variable `name` to `value`; `ns.name` sets the variable of the
/// file included as `ns` (`-v ligen.receptor=x.pdb`), and a table given
/// for `ns` (in a `--vars` file) sets those of its variables it names.
fn set_var(
    vars: &mut BTreeMap<String, serde_json::Value>,
    namespaces: &BTreeSet<&str>,
    name: &str,
    value: serde_json::Value,
) {
    let (namespace, rest) = name.split_once('.').unwrap_or((name, ""));
    let inward = !rest.is_empty() || value.is_object();
    if inward
        && namespaces.contains(namespace)
        && let Some(serde_json::Value::Object(inner)) = vars.get_mut(namespace)
    {
        // The namespaces inside this one, relative to it.
        let prefix = format!("{namespace}.");
        let inside: BTreeSet<&str> = namespaces.iter().filter_map(|n| n.strip_prefix(&prefix)).collect();
        let mut inner_vars: BTreeMap<String, serde_json::Value> = std::mem::take(inner).into_iter().collect();
        match value {
            serde_json::Value::Object(table) if rest.is_empty() => {
                for (k, v) in table {
                    set_var(&mut inner_vars, &inside, &k, v);
                }
            }
            value => set_var(&mut inner_vars, &inside, rest, value),
        }
        *inner = inner_vars.into_iter().collect();
        return;
    }
    vars.insert(name.to_owned(), value);
}

/// An empty file is a mistake (the wrong file, an unsaved editor), not a
/// workflow that succeeds at doing nothing.
fn no_tasks(source: &Source) -> Diagnostic {
    let end = source.text.trim_end().len();
    Diagnostic::new(Code::CompileNoTasks, "the workflow has no tasks")
        .at(end..end, "tasks go here")
        .help("add a task: `[[tasks]]` with `name = \"hello\"` and `command = \"echo hello\"` (YAML: `tasks:` with `- name: hello`)")
}
