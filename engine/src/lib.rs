//! flow's engine: the workflow file ([`spec`]), the compiler ([`compile`])
//! and the graph IR it produces ([`ir`]).
//!
//! The pipeline is `spec::parse` → `compile::compile` → `ir::Graph`; each
//! stage reports problems as [`diag::Diagnostic`]s, all of them at once.
//! [`runtime`] runs a graph, through the small facade it re-exports; [`log`],
//! [`explain`] and [`report`] read the run directories it leaves.

pub mod compile;
pub mod container;
pub mod diag;
pub mod expansion;
pub mod explain;
pub mod file_id;
pub mod host;
pub mod ir;
pub mod log;
pub mod net;
pub mod paths;
pub mod profile;
pub mod report;
pub mod resources;
pub mod rundir;
pub mod runtime;
pub mod scripts;
pub mod shell_word;
pub mod spec;
pub mod template;
pub mod text_file;
pub mod units;

/// The scheduler core, for the benchmarks in `engine/benches/` only: it is
/// not part of the engine's interface and may change at any time.
#[doc(hidden)]
pub mod bench {
    pub use crate::resources::WorkerShape;
    pub use crate::runtime::core::{
        Allocation, CancelReason, Core, CoreOptions, Out, StateCounts, TaskResult, TaskState, WorkerId,
    };
}
