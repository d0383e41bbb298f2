//! The compiler: a [`crate::spec::Workflow`] in, a validated
//! [`crate::ir::Graph`] out, or every problem found.
//!
//! Passes: layer defaults and templates (`merge`), build each group on its
//! own (expansion, resources, numbers), resolve `for_each`, render every
//! instance's file names and infer edges (`deps`, `link`), then check
//! cycles and order groups (`order`). This module never runs anything.

mod compiler;
mod deps;
mod edge_builder;
mod expand;
mod group;
mod link;
mod merge;
mod nested;
mod order;
mod output_index;
mod resources;
mod symbolic;

#[cfg(test)]
mod tests;

pub use compiler::{MAX_INSTANCES, Options, compile};
