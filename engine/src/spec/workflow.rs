//! [`Workflow`]: the workflow file as written, one struct per table.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::after::After;
use super::finally_spec::FinallySpec;
use super::include::Include;
use super::retry_delay::RetryDelay;
use super::scalar::{Quantity, RangeSpec, Text};
use super::sp::Sp;

/// A whole workflow file (`workflow.toml` or `workflow.yaml`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "flow workflow file")]
pub struct Workflow {
    /// Name of the workflow, shown in plans and reports.
    pub name: Option<Sp<String>>,
    /// Variables available to templates as `vars.NAME`; overridable with `-v NAME=VALUE`.
    #[serde(default)]
    pub vars: BTreeMap<String, Sp<serde_json::Value>>,
    /// Keys inherited by every task (a task or its template overrides them).
    pub defaults: Option<Sp<TaskSpec>>,
    /// Reusable task templates; a task takes one with `use = "NAME"`.
    #[serde(default)]
    pub templates: BTreeMap<String, Sp<TaskSpec>>,
    /// The tasks. Each is one task, or an array of instances when it has an expansion key.
    #[serde(default)]
    pub tasks: Vec<Sp<TaskSpec>>,

    /// Stop the run once this many instances have failed for good: a count (`5`) or a share of all instances (`"10%"`, `0.1`). What has not started is cancelled. `flow run --max-fails` overrides it. Default: no limit.
    pub max_fails: Option<Sp<Quantity>>,
    /// `false` stops the run at the first failure (the same as `max_fails = 1`). Default true: independent tasks keep running.
    pub continue_on_failure: Option<Sp<bool>>,
    /// A command run once at the end of every run, whatever happened (cleanup, a notification).
    pub finally: Option<Sp<FinallySpec>>,
    /// How tasks with a `container` run: `[containers] engine = "podman"`.
    pub containers: Option<Sp<Containers>>,
    /// Other workflow files whose `vars`, `templates` and `tasks` come in under a namespace
    /// (`lib/ligen.toml`: task `score` becomes `ligen.score`). Paths inside an included file
    /// are relative to it.
    #[serde(default)]
    pub include: Vec<Sp<Include>>,
    /// The `defaults` of each included file by namespace (`ligen`, `ligen.inner`), which
    /// apply to that file's tasks only. Filled when includes are loaded; never written.
    #[serde(skip)]
    #[schemars(skip)]
    pub namespace_defaults: BTreeMap<String, Sp<TaskSpec>>,
}

/// The `[containers]` table.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Containers {
    /// The engine that runs task images: `"podman"`, `"docker"`, `"apptainer"` or `"singularity"`. A cluster profile's `container_engine` overrides it. Default: Apptainer (or Singularity) for a `.sif` file, otherwise the first of podman, docker, apptainer, singularity found on PATH.
    pub engine: Option<Sp<String>>,
}

/// One task (or task array), a template, or the defaults.
///
/// Every key is optional here; the compiler checks which are required where.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Unique task name (letters, digits, `-`, `_`).
    pub name: Option<Sp<String>>,
    /// Template to inherit keys from (`[templates.NAME]`).
    #[serde(rename = "use")]
    pub use_template: Option<Sp<String>>,

    /// Shell command, run with `sh -c`. Template.
    pub command: Option<Sp<String>>,
    /// Program and arguments, run without a shell. Each element is a template.
    pub argv: Option<Sp<Vec<Sp<String>>>>,
    /// Working directory, relative to the workflow file. Template.
    pub cwd: Option<Sp<String>>,
    /// Environment variables added to the task's environment. Values are templates.
    pub env: Option<Sp<BTreeMap<String, Sp<Text>>>>,
    /// File fed to the task's standard input. Template.
    pub stdin: Option<Sp<String>>,
    /// Where standard output goes: `"log"` (the run log, default), `"none"`, or a path template.
    pub stdout: Option<Sp<String>>,
    /// Where standard error goes: `"log"` (the run log, default), `"none"`, or a path template.
    pub stderr: Option<Sp<String>>,

    /// Files the task reads (templates; globs allowed). Producers of these files become dependencies.
    pub inputs: Option<Sp<Vec<Sp<String>>>>,
    /// Files the task writes (templates).
    pub outputs: Option<Sp<Vec<Sp<String>>>>,
    /// Tasks that must finish first: `"name"` (all instances) or `"name[{{ index }}]"` (selected instances), or `{ task = "name", on = "failure" }` to run on their failure (`"always"`: whatever happened).
    pub after: Option<Sp<Vec<After>>>,
    /// Whether scripts and programs the command names inside the workflow directory (`scripts/score.py`) count as inputs, so editing one reruns the task. Default true.
    pub implicit_inputs: Option<Sp<bool>>,

    /// CPUs per instance (fractions allowed, e.g. 0.5). Default 1.
    pub cpus: Option<Sp<Quantity>>,
    /// GPUs per instance (fractions below 1 share a device, e.g. 0.25). Default 0.
    pub gpus: Option<Sp<Quantity>>,
    /// Memory per instance: `"4 GiB"`, `"512 MB"`, or a number of MiB. Default 0.
    pub memory: Option<Sp<Quantity>>,
    /// Custom resources per instance, e.g. `{ fpga = 2 }`.
    pub resources: Option<Sp<BTreeMap<String, Sp<Quantity>>>>,
    /// Alternative resource requests, tried in order; the first that fits wins.
    pub variants: Option<Sp<Vec<Sp<Variant>>>>,
    /// Expected run time (`"90s"`, `"2h"`, `"1h30m"`, `"HH:MM:SS"`, or seconds); workers with less time left are not given the task.
    pub time_request: Option<Sp<Quantity>>,
    /// Kill the task after this long (same units as `time_request`).
    pub timeout: Option<Sp<Quantity>>,
    /// Number of whole workers (nodes) the task needs. Default 1.
    pub nodes: Option<Sp<Quantity>>,

    /// Higher runs first among ready tasks. Default 0.
    pub priority: Option<Sp<Quantity>>,
    /// How many times a failed instance is rerun. Default 0.
    pub retries: Option<Sp<Quantity>>,
    /// How many lost workers an instance may be running on before it fails. Default 5.
    pub crash_limit: Option<Sp<Quantity>>,

    /// How long a failed instance waits before it is retried, without holding a worker: a duration (`"30s"`), or `{ first = "30s", factor = 2, max = "10m" }` to wait longer after each failure. Default: no wait.
    pub retry_delay: Option<Sp<RetryDelay>>,
    /// Which failures are retried: exit codes (`75`), signal names (`"SIGKILL"`) and `"timeout"`; any other failure fails at once. Default: every failure.
    pub retry_on: Option<Sp<Vec<Sp<Text>>>>,
    /// Cancel this task's instances not yet started once this many of them have failed: a count (`5`) or a share of its instances (`"10%"`, `0.1`). Default: no limit.
    pub max_fails: Option<Sp<Quantity>>,
    /// A failed instance is shown as "failed, ignored": its dependents run as if it had succeeded, and it counts neither towards the run's `max_fails` nor against its exit code. Default false.
    pub continue_on_failure: Option<Sp<bool>>,

    /// One instance per integer: `"1-1000"`, `"1-100:2"`, `"1,5,7-9"` or a list.
    pub range: Option<Sp<RangeSpec>>,
    /// One instance per non-empty line of this file (`item` is the line). Template.
    pub each_line: Option<Sp<String>>,
    /// One instance per chunk of lines of a file.
    pub each_chunk: Option<Sp<EachChunk>>,
    /// One instance per element of the JSON array in this file (`item` is the element). Template.
    pub from_json: Option<Sp<String>>,
    /// One instance per combination of the listed values (`item.NAME`).
    pub matrix: Option<Sp<BTreeMap<String, Sp<Vec<serde_json::Value>>>>>,
    /// One instance per instance of the named task, with the same `index` and `item`.
    pub for_each: Option<Sp<String>>,

    /// Shell lines run before the command, in the same shell (`module load gromacs/2024`, `. venv/bin/activate`). Templates. The lines of `[defaults]`, then of the template, then of the task run in that order; the first that fails fails the instance.
    pub setup: Option<Sp<Vec<Sp<String>>>>,
    /// Image the task runs in: `"docker://ghcr.io/org/image:tag"`, a local image name (`"localhost/tools:1"`), or a `.sif` file relative to the workflow file. Template over `vars`.
    pub container: Option<Sp<String>>,
    /// Condition: a template. Over `vars` and `env` it is decided before the run: when it renders false (`""`, `false`, `no`, `0`, `none`, `[]`), the task is left out of the run, and so is every task that needs it. Naming `item`, `index` or `subindex` (`"{{ item.score > 0.6 }}"`), it is decided per instance as the instance would start: a false one is skipped (state `skipped`), and so is what waits on it element-wise. Calling `read("PATH")` (the text of a file), it waits for the tasks that write the file and is decided per instance too.
    pub when: Option<Sp<String>>,
}

/// An alternative resource request inside `variants`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// CPUs per instance.
    pub cpus: Option<Sp<Quantity>>,
    /// GPUs per instance.
    pub gpus: Option<Sp<Quantity>>,
    /// Memory per instance.
    pub memory: Option<Sp<Quantity>>,
    /// Custom resources per instance.
    pub resources: Option<Sp<BTreeMap<String, Sp<Quantity>>>>,
    /// Expected run time with this variant.
    pub time_request: Option<Sp<Quantity>>,
}

/// `each_chunk = { file = "...", lines = 1000 }`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EachChunk {
    /// The file to split. Template.
    pub file: Sp<String>,
    /// Non-empty lines per chunk (number or template).
    pub lines: Sp<Quantity>,
    /// Also feed the chunk to the task's standard input. Default false.
    pub stdin: Option<Sp<bool>>,
}
