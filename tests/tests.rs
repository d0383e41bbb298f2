//! CLI integration tests, built into one binary.

mod support;

mod cache;
mod check;
mod check_fit;
mod check_notes;
mod conditions;
mod diagnostics;
mod docs;
mod dynamic;
mod examples;
mod exit_codes;
mod explain;
mod graph;
mod growing;
mod interrupt;
mod json;
mod json_schema;
mod layers;
mod log;
mod metrics;
mod model_check;
mod nested;
mod pbs;
mod permissions;
mod plan;
mod report;
mod rerun;
mod resources;
mod run;
mod schema;
mod slurm;
mod status;
mod storage;
mod workers;
