//! The graph IR: what to run, validated and compact.
//!
//! [`Graph`] is the contract between the compiler and the runtime. An array
//! of a million instances is one [`Group`] with a [`Domain`], never a million
//! structs; an [`Edge`] says how the instances of two groups connect. The IR
//! serialises to JSON (`flow plan --json`). It never knows file syntax,
//! processes or sockets.

mod amount;
mod critical_path;
mod domain;
mod dropped;
mod edge;
mod failure_policy;
mod finally;
mod graph;
mod group;
mod group_id;
mod key_spans;
mod parts;
mod range_error;
mod ranges;
mod selector;
mod selector_error;
mod source_ref;
mod str_pool;
mod task_id;
mod upstream;

pub use amount::{Amount, InvalidAmount};
pub use critical_path::CriticalPath;
pub use domain::{Domain, Expansion, IntRange, Item};
pub use dropped::{DropReason, Dropped};
pub use edge::{Edge, EdgeKind, EdgeOn, EdgeOrigin};
pub use failure_policy::{BackOff, Failure, MAX_DELAY_US, MaxFails, RetryOn, TIMED_OUT};
pub use finally::Finally;
pub use graph::Graph;
pub use group::{Command, Group, Resources, Stream, TaskTemplate};
pub use group_id::GroupId;
pub use key_spans::KeySpans;
pub use parts::{Part, Parts};
pub use range_error::RangeError;
pub use ranges::parse_ranges;
pub use selector::{Selected, Selector};
pub use selector_error::SelectorError;
pub use source_ref::SourceRef;
pub use str_pool::StrPool;
pub use task_id::TaskId;
pub use upstream::Upstream;
