//! flow's JSON output: one vocabulary for every `--json`. The shared
//! objects live here — [`TaskRef`] (an instance as `task`, `index`,
//! `label`), [`WorkerRef`] (a worker as `id`, `host`, `allocation`) and
//! [`Worker`] (with its resources), [`State`] (lower-case state words), [`Counts`] — with the
//! [`VERSION`] marker every printed object starts with, and the two
//! writers: [`write_line`] for NDJSON streams, [`write_document`] for one
//! document. Times and durations are in µs (`*_us`, times as `started_us`,
//! `ended_us`), sizes in bytes (`*_bytes`), `cpus`/`gpus` are counts and
//! `cpu_ids`/`gpu_ids` lists, enumerated values are lower-case words,
//! attempts count from 0. `flow schema output` prints the JSON Schema of these objects
//! (`schema/output.schema.json`); `docs/reference/json.md` shows every
//! command's shape.

mod alloc_list;
mod attempt_record;
mod attempt_usage;
mod check_report;
mod clean_report;
mod explained;
mod micros;
mod output_line;
mod report_written;
mod run_counts;
mod run_event;
mod run_standing;
mod run_state;
mod run_summary;
mod schema;
mod status_report;
mod task_ref;
mod versioned;
mod worker_event;
mod worker_list;
mod worker_object;

pub use alloc_list::{AllocList, QueueLimits};
pub use attempt_record::AttemptRecord;
pub use attempt_usage::AttemptUsage;
pub use check_report::{CheckDiagnostic, CheckReport, Severity};
pub use clean_report::{CleanReport, CleanedRun, KeptWhy};
pub use explained::Explained;
pub use flow_engine::log::State;
pub use micros::micros;
pub use output_line::{OutputChunk, OutputLine};
pub use report_written::ReportWritten;
pub use run_counts::Counts;
pub use run_event::RunEvent;
pub use run_standing::{RunList, RunStanding};
pub use run_state::RunState;
pub use run_summary::{OutputSizes, RunSummary, Slow, Spread, TaskUse};
pub use schema::schema;
pub use status_report::{QueueSummary, StatusReport};
pub use task_ref::TaskRef;
pub use versioned::{VERSION, write_document, write_line};
pub use worker_event::{LeftReason, WorkerEvent};
pub use worker_list::WorkerList;
pub use worker_object::{Worker, WorkerRef};

/// A graph compiled from `text`, a TOML workflow, for tests on synthetic data.
#[cfg(test)]
pub fn test_graph(text: &str) -> flow_engine::ir::Graph {
    use flow_engine::compile::{Options, compile};
    use flow_engine::diag::Source;
    use flow_engine::spec::{Format, parse};
    let source = Source::new("workflow.toml", text);
    let workflow = parse(&source, Format::Toml).expect("parses");
    compile(&workflow, &source, &Options::default()).expect("compiles")
}
