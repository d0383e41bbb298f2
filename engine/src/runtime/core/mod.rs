//! The scheduler core: which ready task runs on which worker, with which
//! resources, and what happens when tasks finish, fail or lose their worker.
//!
//! [`Core`] is plain data structures, tested and benchmarked alone: no tokio,
//! no sockets, no clock, no I/O. The driver calls it with events
//! ([`Core::on_finished`], [`Core::add_worker`], [`Core::remove_worker`],
//! [`Core::stop`]) and then [`Core::schedule`]; the core answers through an
//! [`Out`] — start this task there, this task reached that state — and
//! says of an ended attempt whether it runs again, and if not why ([`Retry`]). It never
//! prints and never knows file syntax, processes or transports.
//!
//! It stays compact with a million queued instances: one byte of state per
//! instance, a dependency counter per instance only for groups with
//! element-wise or explicit incoming edges, `All` edges counted per group,
//! and the ready instances of a group as a cursor over its instances. A
//! match visits groups in rank order (priority, then b-level, then id) and
//! never looks at individual queued instances.

mod allocation;
#[allow(clippy::module_inception, reason = "the file is named for the type it holds, `Core`")]
mod core;
mod deps;
mod group_state;
mod order;
mod out;
mod retry;
mod state_counts;
mod worker;
mod worker_id;

#[cfg(test)]
pub(crate) use self::core::tests;

pub use self::core::{Core, CoreOptions, GroupBacklog};
pub use allocation::Allocation;
pub use out::{CancelReason, Out, SkipReason, TaskResult, TaskState};
pub use retry::Retry;
pub use state_counts::StateCounts;
pub use worker_id::WorkerId;
