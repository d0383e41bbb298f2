//! Layering of `[defaults]`, `[templates.NAME]` and a task's own keys into one
//! [`Resolved`] task per `[[tasks]]` entry.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use super::ctx::Ctx;
use super::resolved::Resolved;
use crate::diag::{Code, Diagnostic};
use crate::spec::{Sp, TaskSpec, Workflow};

/// Resolves every task, reporting missing or duplicate names and unknown templates.
pub fn resolve(ctx: &mut Ctx, workflow: &Workflow) -> Vec<Resolved> {
    let empty = TaskSpec::default();
    let root_defaults = workflow.defaults.as_ref().map_or(&empty, |d| &d.value);
    // A task's defaults are those of the file it is written in.
    let defaults_of = |name: &str| match name.rsplit_once('.') {
        Some((namespace, _)) => workflow.namespace_defaults.get(namespace).map_or(&empty, |d| &d.value),
        None => root_defaults,
    };
    for d in workflow.defaults.iter().chain(workflow.namespace_defaults.values()) {
        for (key, span) in
            [("name", d.value.name.as_ref().map(|s| &s.span)), ("use", d.value.use_template.as_ref().map(|s| &s.span))]
        {
            if let Some(span) = span {
                ctx.report(
                    Diagnostic::new(Code::CompileMisplacedKey, format!("`{key}` is not allowed in [defaults]"))
                        .at(span.clone(), "not allowed here")
                        .help(format!("move `{key}` into a task")),
                );
            }
        }
    }
    for (tname, t) in &workflow.templates {
        for (key, span) in
            [("name", t.value.name.as_ref().map(|s| &s.span)), ("use", t.value.use_template.as_ref().map(|s| &s.span))]
        {
            if let Some(span) = span {
                ctx.report(
                    Diagnostic::new(Code::CompileMisplacedKey, format!("`{key}` is not allowed in template `{tname}`"))
                        .at(span.clone(), "not allowed in a template")
                        .help(if key == "use" {
                            "templates cannot use other templates; copy the keys you need"
                        } else {
                            "a template is named by its table; remove `name`"
                        }),
                );
            }
        }
    }

    let mut seen: HashMap<&str, &Range<usize>> = HashMap::new();
    let mut out = Vec::new();
    for task in &workflow.tasks {
        let Some(name) = &task.value.name else {
            ctx.report(
                Diagnostic::new(Code::CompileMissingName, "task has no `name`")
                    .at(task.span.clone(), "this task")
                    .help("add `name = \"...\"`: a unique name of letters, digits, `-` and `_`"),
            );
            continue;
        };
        // A `.` comes only from a namespace: the loader reports one written in a name.
        let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name.value.split('.').all(word) {
            ctx.report(
                Diagnostic::new(Code::CompileBadName, format!("task name `{}` is not allowed", name.value))
                    .at(name.span.clone(), "bad name")
                    .help("use letters, digits, `-` and `_` only"),
            );
        }
        if let Some(first) = seen.insert(&name.value, &name.span) {
            ctx.report(
                Diagnostic::new(Code::CompileDuplicateTask, format!("task `{}` is defined twice", name.value))
                    .at(name.span.clone(), "second definition")
                    .help(format!(
                        "task names must be unique; rename one (the first is {})",
                        where_is(ctx, first.start)
                    )),
            );
            continue;
        }
        let template = match &task.value.use_template {
            None => None,
            Some(u) => match workflow.templates.get(&u.value) {
                Some(t) => Some(&t.value),
                None => {
                    ctx.report(unknown_template(u, &workflow.templates));
                    continue;
                }
            },
        };
        let mut spec = task.value.clone();
        if let Some(t) = template {
            inherit(&mut spec, t);
        }
        inherit(&mut spec, defaults_of(&name.value));
        out.push(Resolved { name: name.value.clone(), name_span: name.span.clone(), spec });
    }
    out
}

/// `on line N`, N counted in the file `offset` lies in (two tasks of one
/// name are always in one file: a namespace belongs to one include).
fn where_is(ctx: &Ctx, offset: usize) -> String {
    let (file, at) = ctx.source().place(offset);
    format!("on line {}", file.line_col(at).0)
}

fn unknown_template(u: &Sp<String>, templates: &BTreeMap<String, Sp<TaskSpec>>) -> Diagnostic {
    let help = match crate::diag::closest(&u.value, templates.keys().map(String::as_str)) {
        Some(best) => format!("did you mean `{best}`?"),
        None if templates.is_empty() => "define it under [templates.NAME]".to_owned(),
        None => format!("known templates: {}", templates.keys().cloned().collect::<Vec<_>>().join(", ")),
    };
    Diagnostic::new(Code::CompileUnknownTemplate, format!("unknown template `{}`", u.value))
        .at(u.span.clone(), "no such template")
        .help(help)
}

macro_rules! inherit_fields {
    ($dst:expr, $src:expr, $($field:ident),* $(,)?) => {
        $( if $dst.$field.is_none() { $dst.$field = $src.$field.clone(); } )*
    };
}

/// Fills keys `spec` leaves out from `base`; `env` maps are merged key by key,
/// `setup` lines are `base`'s followed by `spec`'s, and an expansion is
/// inherited only when `spec` has none of its own.
fn inherit(spec: &mut TaskSpec, base: &TaskSpec) {
    if let (Some(setup), Some(base_setup)) = (&mut spec.setup, &base.setup) {
        setup.value.splice(0..0, base_setup.value.iter().cloned());
    }
    if let (Some(env), Some(base_env)) = (&mut spec.env, &base.env) {
        for (k, v) in &base_env.value {
            env.value.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    inherit_fields!(
        spec,
        base,
        command,
        argv,
        cwd,
        env,
        stdin,
        stdout,
        stderr,
        inputs,
        outputs,
        after,
        implicit_inputs,
        cpus,
        gpus,
        memory,
        resources,
        variants,
        time_request,
        timeout,
        nodes,
        priority,
        retries,
        crash_limit,
        retry_delay,
        retry_on,
        max_fails,
        continue_on_failure,
        setup,
        container,
        when,
    );
    let has_expansion = spec.range.is_some()
        || spec.each_line.is_some()
        || spec.each_chunk.is_some()
        || spec.from_json.is_some()
        || spec.matrix.is_some()
        || spec.for_each.is_some();
    if !has_expansion {
        inherit_fields!(spec, base, range, each_line, each_chunk, from_json, matrix, for_each);
    }
}
