//! [`RunOptions`]: how `flow run` runs a graph.

use std::path::PathBuf;

use crate::ir::Selector;
use crate::profile::Queue;
use crate::resources::WorkerShape;

/// Settings of one run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The workflow file's directory (absolute): task `cwd`, relative paths.
    pub base_dir: PathBuf,
    /// The workflow file, recorded in the run's metadata.
    pub workflow: PathBuf,
    /// What the embedded worker owns.
    pub worker: WorkerShape,
    /// Stop scheduling after this many failed instances (overrides the workflow's `max_fails`).
    pub max_fails: Option<u64>,
    /// Keep going after failures whatever the workflow's `max_fails` or
    /// `continue_on_failure = false` say (`--keep-going`).
    pub keep_going: bool,
    /// Rerun every instance, even those an earlier run finished.
    pub force: bool,
    /// Rerun these instances and their dependents even if unchanged.
    pub only: Vec<Selector>,
    /// Complete tasks instantly without starting processes (engine throughput).
    pub dry_exec: bool,
    /// Leave the outputs of instances that no longer exist where they are.
    pub keep_stale_outputs: bool,
    /// Bind each task to the CPU ids it was given.
    pub bind_cpus: bool,
    /// Ends the embedded worker's tasks if `flow run` dies without doing so.
    pub guard: Option<std::sync::Arc<crate::runtime::agent::guard::Guard>>,
    /// Accept remote workers on this address (`host:port`; port 0 picks one).
    pub listen: Option<String>,
    /// Run tasks on the embedded worker too (off: only remote workers).
    pub local: bool,
    /// The engine for task images (from the profile): it overrides the workflow's.
    pub container_engine: Option<crate::container::ContainerEngine>,
    /// Submit allocations to this queue (from the named profile).
    pub queue: Option<(String, Queue)>,
    /// Make `.flow` and the run directory readable by the owner's group
    /// (0750); otherwise only the owner may enter them (0700).
    pub share_with_group: bool,
    /// The command line that started the run, recorded in its metadata (none if empty).
    pub command_line: Vec<String>,
}
