//! [`FinallySpec`]: the `[finally]` table as written.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::scalar::{Quantity, Text};
use super::sp::Sp;

/// The command run once at the end of every run, whatever happened: after
/// success, failure, `max_fails`, Ctrl-C, and at the end of a resumed run.
/// It runs on the coordinator's machine with `FLOW_RUN_ID`, `FLOW_OUTCOME`,
/// `FLOW_SUMMARY_JSON` and the counts in its environment; its output goes
/// to the run log under the label `finally`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinallySpec {
    /// Shell command, run with `sh -c`. Template over `vars`.
    pub command: Option<Sp<String>>,
    /// Program and arguments, run without a shell. Each element is a template over `vars`.
    pub argv: Option<Sp<Vec<Sp<String>>>>,
    /// Working directory, relative to the workflow file. Template over `vars`.
    pub cwd: Option<Sp<String>>,
    /// Environment variables added to its environment. Values are templates over `vars`.
    pub env: Option<Sp<BTreeMap<String, Sp<Text>>>>,
    /// Kill it after this long (`"90s"`, `"5m"`, or seconds).
    pub timeout: Option<Sp<Quantity>>,
    /// Shell lines run before the command in the same shell (`module load …`). Each is a template over `vars`.
    pub setup: Option<Sp<Vec<Sp<String>>>>,
    /// The image it runs in: `docker://…`, a `.sif` file, or a local image name. Template over `vars`; empty: on the host.
    pub container: Option<Sp<String>>,
}
