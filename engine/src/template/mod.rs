//! Templates: minijinja with strict undefined ([`Renderer`], [`Tmpl`]) and
//! the contexts a group and each of its instances render with. The compiler
//! checks templates with it; the runtime renders every instance's command.

mod diagnostic;
mod filters;
mod marker;
mod read;
mod render;
mod scope;
mod taint;
mod truth;

pub use diagnostic::{is_context_name, template_diagnostic, undefined_name};
pub use read::{READ, Reads};
pub use render::{GroupScope, Renderer, Scope, Tmpl, json_value};
pub use scope::{group_scope, instance_scope, namespace_vars};
pub use taint::{Leak, LeakKind, data_leaks};
pub use truth::is_true;
