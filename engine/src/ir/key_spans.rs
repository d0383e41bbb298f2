//! [`KeySpans`]: where a task's resource and container keys are written.

use std::collections::BTreeMap;
use std::ops::Range;

/// Byte ranges of the values of a task's own resource keys in the workflow
/// file (`cpus`, `gpus`, `memory`, `resources`, `nodes`), where it has
/// them, so that a request found impossible when the run starts points at
/// its key, as `flow check` does. A task with `variants` keeps only
/// `nodes` and `container`: its requests are written in several places.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeySpans {
    /// `cpus = …`.
    pub cpus: Option<Range<usize>>,
    /// `gpus = …`.
    pub gpus: Option<Range<usize>>,
    /// `memory = …`.
    pub memory: Option<Range<usize>>,
    /// Each key of `resources = { … }`.
    pub resources: BTreeMap<String, Range<usize>>,
    /// `nodes = …`.
    pub nodes: Option<Range<usize>>,
    /// `container = …` (the task's own, its template's or `[defaults]`'),
    /// for a missing image found by `flow check` and `flow plan`.
    pub container: Option<Range<usize>>,
}
