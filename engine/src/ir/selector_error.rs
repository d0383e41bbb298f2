//! [`SelectorError`]: why a selector (`name`, `name[1-10]`) does not parse,
//! or names nothing in a graph.

use thiserror::Error;

use super::range_error::RangeError;

/// A selector that does not parse, or that names instances a graph does not have.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SelectorError {
    /// A `[` with no `]` at the end.
    #[error("`{text}` has `[` without a closing `]`")]
    Unclosed {
        /// The selector.
        text: String,
    },
    /// The list between `[` and `]` does not parse.
    #[error("bad index list in `{text}`: {source}")]
    BadIndices {
        /// The selector.
        text: String,
        /// What is wrong with the list.
        source: RangeError,
    },
    /// The task is in the workflow file but was dropped from the run.
    #[error("`{name}` is not in this run: it was dropped, {reason}")]
    Dropped {
        /// The task.
        name: String,
        /// Why it was dropped, in words.
        reason: String,
    },
    /// No task has this name, and one has a close name.
    #[error("no task named `{name}`; did you mean `{close}`?")]
    UnknownTaskLike {
        /// The name asked for.
        name: String,
        /// The closest task name.
        close: String,
    },
    /// No task has this name, nor one close to it.
    #[error("no task named `{name}` (tasks: {tasks})")]
    UnknownTask {
        /// The name asked for.
        name: String,
        /// The graph's task names, comma-separated.
        tasks: String,
    },
    /// Indices of a task whose instances are known only when the run reaches it.
    #[error("the instances of `{name}` are known only when the run reaches it; select the whole task")]
    Deferred {
        /// The task.
        name: String,
    },
    /// Indices of a nested task whose parent has not run yet.
    #[error("the instances of `{name}` are known only as `{parent}` runs; select the whole task")]
    PartsUnknown {
        /// The nested task.
        name: String,
        /// The task whose instances make its parts.
        parent: String,
    },
    /// Two levels of indices (`name[12.3]`) on a task that is not nested.
    #[error("`{name}` has one level of indices: write `{name}[3]`")]
    OneLevel {
        /// The task.
        name: String,
    },
    /// An index the task does not have.
    #[error("`{name}` has no instance with index {index} (its indices: {indices})")]
    NoIndex {
        /// The task.
        name: String,
        /// The index asked for.
        index: i64,
        /// The indices it has (`1-10`, `0-99`, `none`).
        indices: String,
    },
    /// A part a nested task does not have.
    #[error("`{name}` has no part {index} (parts known: {known})")]
    NoPart {
        /// The nested task.
        name: String,
        /// The parent index asked for.
        index: i64,
        /// The parts known, comma-separated, or `none yet`.
        known: String,
    },
    /// A position past the end of a part of a nested task.
    #[error("`{name}[{index}]` has no instance {sub} (it has {size})")]
    NoInstance {
        /// The nested task.
        name: String,
        /// The part.
        index: i64,
        /// The position asked for.
        sub: i64,
        /// How many instances the part has.
        size: u64,
    },
}
