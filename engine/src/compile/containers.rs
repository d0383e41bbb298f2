//! The `[containers]` table: the engine a workflow names, checked; and
//! the images tasks name, checked as far as the text goes.

use super::ctx::Ctx;
use crate::container::ContainerEngine;
use crate::diag::{Code, Diagnostic, closest};
use crate::spec::{Sp, Workflow};

/// The engine `[containers] engine` names, if any; an unknown name is reported.
pub fn engine(ctx: &mut Ctx, workflow: &Workflow) -> Option<ContainerEngine> {
    let name = workflow.containers.as_ref()?.value.engine.as_ref()?;
    match ContainerEngine::parse(&name.value) {
        Some(engine) => Some(engine),
        None => {
            ctx.report(unknown_engine(name));
            None
        }
    }
}

/// The diagnostic for an engine name flow does not know, with the closest known one.
pub fn unknown_engine(name: &Sp<String>) -> Diagnostic {
    let names = ContainerEngine::ALL.map(ContainerEngine::name);
    let help = match closest(&name.value, names) {
        Some(near) => format!("did you mean `{near}`?"),
        None => format!("the engines are: {}", names.join(", ")),
    };
    Diagnostic::new(Code::CompileUnknownEngine, format!("unknown container engine `{}`", name.value))
        .at(name.span.clone(), "no such engine")
        .help(help)
}

/// The diagnostic for image `text` of `owner` (``task `a` ``), written at
/// `at`, when it cannot be an image: it starts with `-`, so an engine
/// would take it for an option (`--help` prints help and exits 0).
pub fn bad_image(text: &str, owner: &str, at: &Sp<String>) -> Option<Diagnostic> {
    text.starts_with('-').then(|| {
        Diagnostic::new(Code::CompileBadImage, format!("container image `{text}` of {owner} starts with `-`"))
            .at(at.span.clone(), "not an image")
            .help(
                "an image reference names a repository and a tag (`docker.io/library/alpine:3.20`) or a `.sif` file; \
                 it never starts with `-`",
            )
    })
}
