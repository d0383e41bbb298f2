//! `flow report`: one self-contained HTML page about a run. [`Report`] is its
//! data model, built from a run ([`crate::rundir::RunView`]) in one pass
//! over the journal and aggregated so that its size depends on the tasks and
//! workers, not on the number of instances; [`render()`] turns it into HTML
//! with an embedded template and SVG figures drawn here. It reads the run's
//! files and never writes them, and knows nothing of how tasks ran.
//! See `docs/guide/report.md`.

mod build;
mod counts;
mod graph_view;
mod page;
#[allow(clippy::module_inception)]
mod report;
mod report_error;
mod stats;
mod stderr_tails;
mod svg;
mod timeline;
mod timeline_builder;

#[cfg(test)]
mod tests;

pub use counts::Counts;
pub use graph_view::{GraphEdge, GraphView, Node};
pub use page::{is_report, render};
pub use report::{AllocationSpan, FailureReport, Report, RunInfo, SlowAttempt, TaskReport, VariantUse};
pub use report_error::ReportError;
pub use stats::Stats;
pub use stderr_tails::STDERR_LINES;
pub use timeline::{BINS, Bar, Lane, MAX_BARS, Timeline};

/// Failed instances a report lists one by one.
pub const MAX_FAILURES: usize = 50;
/// Attempts the report names as the longest.
pub const MAX_SLOWEST: usize = 10;
