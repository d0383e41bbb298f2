//! The resource model: what a worker has, what a request needs, whether it
//! fits, how many fit side by side, and what is short — asked in one place
//! and answered in one wording, whether the asker is the compiler
//! (`flow check --cpus …`), the scheduler core, `flow explain` or an
//! allocation queue's planner. It also holds the one [`Deadline`] and the
//! one rule for whether a task ends in the time a worker has left.
//!
//! It knows [`crate::ir`]'s [`Amount`](crate::ir::Amount) and
//! [`Resources`](crate::ir::Resources) and nothing above them: no graphs,
//! no scheduling, no processes. See `docs/design/architecture.md`.

mod capacity;
mod deadline;
mod pool;
mod pools;
mod request;
mod shortfall;
mod time_left;
mod unfit;
mod worker_shape;

pub use capacity::{Capacity, MAX_SLOTS};
pub use deadline::{Deadline, ends_in_time};
pub(crate) use pools::Pools;
pub(crate) use request::{Names, Request};
pub use shortfall::{Holder, LARGEST, Shortfall, no_variant_fits};
pub use time_left::{finishes_in, worker_time_limit};
pub use unfit::Unfit;
pub use worker_shape::WorkerShape;
