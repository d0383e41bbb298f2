//! The `[containers]` table: the engine a workflow names, checked.

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
