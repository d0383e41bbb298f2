//! flow's engine: the workflow file ([`spec`]), the compiler ([`compile`])
//! and the graph IR it produces ([`ir`]).
//!
//! The pipeline is `spec::parse` → `compile::compile` → `ir::Graph`; each
//! stage reports problems as [`diag::Diagnostic`]s, all of them at once.

pub mod compile;
pub mod diag;
pub mod expansion;
pub mod host;
pub mod ir;
pub mod log;
pub mod net;
pub mod paths;
pub mod profile;
pub mod report;
pub mod resources;
pub mod runtime;
pub mod spec;
pub mod template;
pub mod units;
