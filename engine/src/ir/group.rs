//! [`Group`]: one task or task array of the graph, with its unrendered templates.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::{Amount, BackOff, Domain, IntRange, KeySpans, MaxFails, RetryOn, SourceRef};

/// A task or task array: one template and an index domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The task's name.
    pub name: String,
    /// Byte range of the task's `name` value in the workflow file.
    pub span: Range<usize>,
    /// The included file the task is written in; `None` for a task of the workflow file itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRef>,
    /// Number of instances.
    pub count: u64,
    /// The instances.
    pub domain: Domain,
    /// What each instance runs (templates, rendered per instance by the runtime).
    pub template: TaskTemplate,
    /// Resource requests: the first that fits a worker is used.
    pub variants: Vec<Resources>,
    /// When a resource key names `attempt`: the requests of attempt 1, 2, …
    /// (one list per retry, in the order of `variants`); an attempt past the
    /// end uses the last list. Empty when every attempt asks the same.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry_variants: Vec<Vec<Resources>>,
    /// Kill an instance after this many seconds.
    pub timeout: Option<u64>,
    /// Whole workers per instance.
    pub nodes: u32,
    /// Higher runs first.
    pub priority: i64,
    /// Reruns of a failed instance.
    pub retries: u32,
    /// Lost workers an instance may survive.
    pub crash_limit: u32,
    /// How long a failed instance waits before its next attempt; none: no wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_delay: Option<BackOff>,
    /// The failures that are retried; empty: every failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry_on: Vec<RetryOn>,
    /// Cancel the group's instances not yet started once this many failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_fails: Option<MaxFails>,
    /// A failed instance is shown as failed but treated as ended: its
    /// dependents run, and it counts neither towards the run's `max_fails`
    /// nor against its exit code.
    #[serde(default, skip_serializing_if = "is_no")]
    pub continue_on_failure: bool,
    /// Hash the scripts and programs the command names like inputs.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub implicit_inputs: bool,
    /// Where its resource keys are written, for the check made as the run
    /// starts; not kept in `graph.json` (nothing reads it later).
    #[serde(skip)]
    pub keys: KeySpans,
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

fn is_no(b: &bool) -> bool {
    !*b
}

impl Group {
    /// The resource requests of attempt `attempt` (0 first).
    pub fn requests(&self, attempt: u32) -> &[Resources] {
        match attempt.checked_sub(1) {
            Some(k) if !self.retry_variants.is_empty() => {
                &self.retry_variants[(k as usize).min(self.retry_variants.len() - 1)]
            }
            _ => &self.variants,
        }
    }

    /// `count` instances (indices `0..count`) of `template`, each asking for
    /// one CPU, with default settings: a group as tests and benchmarks build it.
    pub fn range(name: &str, count: u64, template: TaskTemplate) -> Group {
        Group {
            name: name.to_owned(),
            span: 0..0,
            source: None,
            count,
            domain: Domain::Range { ranges: vec![IntRange { start: 0, count, step: 1 }] },
            template,
            variants: vec![Resources::default_request()],
            retry_variants: Vec::new(),
            timeout: None,
            nodes: 1,
            priority: 0,
            retries: 0,
            crash_limit: 5,
            retry_delay: None,
            retry_on: Vec::new(),
            max_fails: None,
            continue_on_failure: false,
            implicit_inputs: true,
            keys: KeySpans::default(),
        }
    }
}

/// The per-instance templates of a group, as written (minijinja syntax).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskTemplate {
    /// What to execute.
    pub command: Command,
    /// Working directory, relative to the workflow directory.
    pub cwd: Option<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// File fed to stdin.
    pub stdin: Option<String>,
    /// Where stdout goes.
    pub stdout: Stream,
    /// Where stderr goes.
    pub stderr: Stream,
    /// Declared input files (may be globs).
    pub inputs: Vec<String>,
    /// Declared output files.
    pub outputs: Vec<String>,
    /// Shell lines run before the command (templates), from the defaults, the template and the task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
    /// The image the task runs in, rendered with `vars`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// A `when` naming `item`, `index` or `subindex`: decided per instance
    /// as it starts (false: the instance is skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
}

impl TaskTemplate {
    /// A shell command with no files, environment or redirections.
    pub fn shell(command: &str) -> TaskTemplate {
        TaskTemplate {
            command: Command::Shell(command.to_owned()),
            cwd: None,
            env: BTreeMap::new(),
            stdin: None,
            stdout: Stream::Log,
            stderr: Stream::Log,
            inputs: Vec::new(),
            outputs: Vec::new(),
            setup: Vec::new(),
            container: None,
            when: None,
        }
    }
}

/// How an instance is executed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Run with `sh -c`.
    Shell(String),
    /// Run directly.
    Argv(Vec<String>),
}

/// Destination of an output stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    /// Into the run log.
    Log,
    /// Discarded.
    Null,
    /// Into a file (a template).
    File(String),
}

/// One resource request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// CPUs.
    pub cpus: Amount,
    /// GPUs.
    pub gpus: Amount,
    /// Memory in bytes.
    pub memory: u64,
    /// Custom resources by name.
    pub custom: BTreeMap<String, Amount>,
    /// Expected run time in seconds.
    pub time_request: Option<u64>,
}

impl Resources {
    /// The CPUs a task asks for when it does not say: one.
    pub const DEFAULT_CPUS: Amount = Amount::whole(1);

    /// What a task without resource keys asks for: [`Self::DEFAULT_CPUS`] and nothing else.
    pub fn default_request() -> Self {
        Resources { cpus: Self::DEFAULT_CPUS, ..Resources::default() }
    }
}
