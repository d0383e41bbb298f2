//! [`Profile`] and its [`Queue`]: what the runtime is given.

use super::settings::QueueSettings;
use crate::resources::Capacity;

/// The profiles file's name next to a workflow.
pub const PROFILES_FILE: &str = "flow.profiles.toml";

/// A profile, checked and with its values parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Its name.
    pub name: String,
    /// Address the coordinator listens on for workers.
    pub listen: Option<String>,
    /// Whether the embedded worker runs tasks too.
    pub local_worker: bool,
    /// The allocation queue, if any.
    pub queue: Option<Queue>,
    /// The engine that runs task images on this cluster (`container_engine`);
    /// it overrides the workflow's `[containers] engine`.
    pub container_engine: Option<crate::container::ContainerEngine>,
}

/// An allocation queue with its values parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    /// The settings as written.
    pub settings: QueueSettings,
    /// Wall-time of an allocation in seconds.
    pub time_limit: u64,
    /// Idle timeout of its workers in seconds.
    pub idle_timeout: u64,
    /// Seconds between polls of allocations no worker came from yet.
    pub poll_interval: u64,
    /// What each worker has, as far as the settings say: CPUs and GPUs
    /// unknown on whole nodes (no `worker.cpus`), memory unknown unless
    /// given, and only the custom resources listed.
    pub worker: Capacity,
}

impl Queue {
    /// The `flow` executable the compute nodes run: the queue's `flow`
    /// setting, or this very executable (a shared filesystem).
    pub fn flow_command(&self) -> String {
        self.settings.flow.clone().unwrap_or_else(|| {
            std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "flow".to_owned())
        })
    }
}
