//! The compiler: a [`crate::spec::Workflow`] in, a validated
//! [`crate::ir::Graph`] out, or every problem found.
//!
//! Passes: layer defaults and templates (`merge`), leave out tasks whose
//! `when` is false and those needing them (`condition`), build each group on its
//! own (`group`: expansion, resources, numbers), resolve `for_each`
//! (`for_each`), render every instance's file names and infer edges
//! (`deps`, `link`) and what a `when` that reads a file waits for
//! (`when_files`), then check cycles and order groups (`order`). The
//! passes share a `Ctx` (the file, the options, the templates, the
//! problems found) and return what they produce; [`compile`] threads one
//! pass's result into the next. This module never runs anything.

mod compiler;
mod condition;
mod containers;
mod ctx;
mod draft;
mod edge_builder;
mod expand;
mod failure_keys;
mod for_each;
mod group_builder;
mod inference;
mod link;
mod merge;
mod nested;
mod options;
mod output_index;
mod rendered;
mod requests;
mod resolved;
mod run_policy;
mod symbolic;
mod topo_order;
mod value_error;
mod when_files;
mod writers;

#[cfg(test)]
mod include_tests;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;

pub use compiler::compile;
#[cfg(test)]
pub(crate) use compiler::compile_toml;
pub use options::{MAX_INSTANCES, Options};
