//! The workflow-level keys about the run as a whole, compiled:
//! `max_fails` and `continue_on_failure` into the run's [`MaxFails`], and
//! `[finally]` into a [`Finally`] with its templates rendered with `vars`.

use super::containers::bad_image;
use super::ctx::Ctx;
use super::{failure_keys, requests};
use crate::diag::{Code, Diagnostic};
use crate::ir::{Command, Finally, MaxFails};
use crate::spec::{FinallySpec, Sp, Workflow};

/// The run's `max_fails`: the key, or 1 for `continue_on_failure = false`;
/// both at once is a problem (they say the same thing twice).
pub fn max_fails(ctx: &mut Ctx, workflow: &Workflow) -> Option<MaxFails> {
    let stop_at_first = workflow.continue_on_failure.as_ref().filter(|c| !c.value);
    match (&workflow.max_fails, stop_at_first) {
        (Some(q), Some(c)) => {
            ctx.report(
                Diagnostic::new(Code::CompileConflictingKeys, "`continue_on_failure = false` and `max_fails` both set")
                    .at(c.span.clone(), "this already stops at the first failure")
                    .help(format!(
                        "keep one: `continue_on_failure = false` is `max_fails = 1` (line {})",
                        ctx.source().line_col(q.span.start).0
                    )),
            );
            None
        }
        (Some(q), None) => failure_keys::max_fails(ctx, q, "max_fails"),
        (None, Some(_)) => Some(MaxFails::Count(1)),
        (None, None) => None,
    }
}

/// `[finally]`: exactly one of `command`/`argv`, each template rendered
/// with `vars` (there are no instances to render it for).
pub fn finally(ctx: &mut Ctx, spec: &Sp<FinallySpec>) -> Option<Finally> {
    // The run's own keys see the workflow's variables.
    ctx.enter_task(Finally::LABEL);
    let f = &spec.value;
    let command = match (&f.command, &f.argv) {
        (Some(cmd), None) => ctx.render_vars(cmd, "finally.command").map(Command::Shell),
        (None, Some(argv)) if !argv.value.is_empty() => {
            let words: Vec<Option<String>> = argv.value.iter().map(|a| ctx.render_vars(a, "finally.argv")).collect();
            words.into_iter().collect::<Option<Vec<_>>>().map(Command::Argv)
        }
        (None, Some(argv)) => {
            ctx.report(
                Diagnostic::new(Code::CompileEmptyArgv, "`argv` of [finally] is empty")
                    .at(argv.span.clone(), "empty list")
                    .help("list the program and its arguments, e.g. argv = [\"echo\", \"done\"]"),
            );
            None
        }
        (Some(cmd), Some(_)) => {
            ctx.report(
                Diagnostic::new(Code::CompileCommandAndArgv, "[finally] has both `command` and `argv`")
                    .at(cmd.span.clone(), "one of these must go")
                    .help("keep `command` to run through `sh -c`, or `argv` to run the program directly"),
            );
            None
        }
        (None, None) => {
            ctx.report(
                Diagnostic::new(Code::CompileNoCommand, "[finally] has no command")
                    .at(spec.span.clone(), "nothing to run")
                    .help("add `command = \"...\"` (run with sh -c) or `argv = [...]`"),
            );
            None
        }
    };
    let cwd = f.cwd.as_ref().map(|c| ctx.render_vars(c, "finally.cwd"));
    let env: Vec<(String, Option<String>)> = f
        .env
        .iter()
        .flat_map(|e| e.value.iter())
        .map(|(k, v)| (k.clone(), ctx.render_vars(&Sp::new(v.value.0.clone(), v.span.clone()), "finally.env")))
        .collect();
    let timeout = f.timeout.as_ref().map(|q| requests::duration(ctx, q, "finally.timeout", None));
    let setup: Vec<Option<String>> =
        f.setup.iter().flat_map(|l| l.value.iter()).map(|line| ctx.render_vars(line, "finally.setup")).collect();
    let container = f.container.as_ref().map(|c| ctx.render_vars(c, "finally.container"));
    // An inner `None` is a problem reported above; an outer one, a key left out.
    let env = env.into_iter().map(|(k, v)| Some((k, v?))).collect::<Option<_>>()?;
    let cwd = match cwd {
        Some(c) => Some(c?),
        None => None,
    };
    let timeout = match timeout {
        Some(t) => Some(t?),
        None => None,
    };
    let setup = setup.into_iter().collect::<Option<Vec<_>>>()?;
    // An image that renders empty runs it on the host.
    let container = match container {
        Some(c) => Some(c?).filter(|c| !c.trim().is_empty()),
        None => None,
    };
    if let Some(bad) = container.as_ref().zip(f.container.as_ref()).and_then(|(c, at)| bad_image(c, "`[finally]`", at))
    {
        ctx.report(bad);
        return None;
    }
    Some(Finally { span: spec.span.clone(), command: command?, cwd, env, timeout, setup, container })
}
