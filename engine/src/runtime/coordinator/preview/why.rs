//! [`Why`]: the reason `flow plan --why` gives for an instance, in data
//! and in words.

use schemars::JsonSchema;
use serde::Serialize;

/// Why an instance would run, or that it would not.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "reason", content = "detail")]
pub enum Why {
    /// No earlier run finished it.
    New,
    /// Its item changed.
    ItemChanged,
    /// Its command (or `argv`) changed.
    CommandChanged,
    /// Its `env`, `cwd`, `stdin`, `stdout` or `stderr` paths, or output
    /// paths changed: which.
    SettingsChanged(String),
    /// An input file (or a script its command or setup lines name) changed: which.
    InputChanged(String),
    /// The file its `stdin` names has other contents: which.
    StdinChanged(String),
    /// Its last success is not trusted: this file it reads changed while it ran.
    Untrusted(String),
    /// An input file or script changed, and which is not known: its last
    /// success was journaled before what each file held was kept, and no
    /// file is newer than it.
    SomeInputChanged,
    /// A file a glob input matches came or went: which glob.
    GlobChanged(String),
    /// A declared output is missing: which.
    OutputMissing(String),
    /// A declared output has other bytes than its last run left: which.
    OutputChanged(String),
    /// An attempt started after its last success and did not finish.
    Tainted,
    /// Its last attempt failed (and it never succeeded since).
    FailedLastTime,
    /// An instance of this task, which it waits for, runs first (or the
    /// task's instances are known only at run time): compared once it is done.
    AfterUpstream(String),
    /// Its `when` reads a file a task that runs first writes: whether it
    /// runs is decided once that file is written (which, as written).
    DecidedLater(String),
    /// Its `when` reads a file per instance, and a task that writes such
    /// files runs first: decided once it wrote them (which task).
    DecidedAfterWriter(String),
    /// Same fingerprint, outputs there: skipped.
    Unchanged,
    /// It would be skipped — its per-instance `when` is false, or it waits
    /// on an instance that would be: why, in words.
    Skipped(String),
}

impl Why {
    /// Whether the instance would run.
    pub fn runs(&self) -> bool {
        !matches!(self, Why::Unchanged | Why::Skipped(_))
    }

    /// The reason in words.
    pub fn text(&self) -> String {
        match self {
            Why::New => "new".to_owned(),
            Why::ItemChanged => "item changed".to_owned(),
            Why::CommandChanged => "command changed".to_owned(),
            Why::SettingsChanged(what) => format!("{what} changed"),
            Why::InputChanged(file) => format!("input `{file}` changed"),
            Why::StdinChanged(file) => format!("stdin file `{file}` changed"),
            Why::Untrusted(file) => format!("`{file}` changed while it last ran: its result is not trusted"),
            Why::SomeInputChanged => "an input file or script changed".to_owned(),
            Why::GlobChanged(glob) => format!("the files input `{glob}` matches changed"),
            Why::OutputMissing(file) => format!("output `{file}` missing"),
            Why::OutputChanged(file) => format!("output `{file}` changed since it was written"),
            Why::Tainted => "an attempt started after its last success and did not finish".to_owned(),
            Why::FailedLastTime => "failed last time".to_owned(),
            Why::AfterUpstream(task) => format!("after `{task}`, which runs first"),
            Why::DecidedLater(file) => format!("decided when `{file}` is written"),
            Why::DecidedAfterWriter(task) => format!("decided when `{task}` has written the file its `when` reads"),
            Why::Unchanged => "unchanged".to_owned(),
            Why::Skipped(why) => format!("skipped: {why}"),
        }
    }
}
