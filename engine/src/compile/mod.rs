//! The compiler: a [`crate::spec::Workflow`] in, a validated
//! [`crate::ir::Graph`] out, or every problem found.
//!
//! Passes: layer defaults and templates ([`merge`]), build each group on its
//! own (expansion, resources, numbers), resolve `for_each`, render every
//! instance's file names and infer edges ([`deps`], [`link`]), then check
//! cycles and order groups ([`order`]). This module never runs anything.

mod compiler;
mod deps;
mod edge_builder;
mod expand;
mod group;
mod instance;
mod link;
mod merge;
mod order;
mod output_index;
mod paths;
mod render;
mod resources;
mod selector;
mod units;

#[cfg(test)]
mod tests;

pub use compiler::{MAX_INSTANCES, Options, compile};
pub use group::group_scope;
pub use instance::instance_scope;
pub use paths::{glob_matcher, glob_walk, is_glob};
pub use render::{GroupScope, Renderer, Scope, Tmpl, json_value, unquoted_items};
pub use selector::Selector;
pub use units::{parse_duration, parse_size};
