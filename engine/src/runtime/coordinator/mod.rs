//! The coordinator: the `flow run` process around the scheduler core.
//!
//! [`run::start`] sets a run up and starts the [`driver`], the event loop
//! on a single-threaded tokio runtime (the agent and the transport use
//! tokio too; the core never does). Its parts are in folders by role:
//!
//! - [`dispatch`]: the core's decisions rendered into jobs, container
//!   images checked, what a task waiting for a failure is told, the
//!   `[finally]` command;
//! - [`workers`]: the embedded and remote workers behind one interface, the
//!   listener that accepts remote ones, tasks sent ahead, `workers.json`;
//! - [`books`]: the recorder and the journal's thread, attempt metrics,
//!   ready times, where the results are;
//! - [`earlier`]: what earlier runs finished, the cache checked before
//!   dispatch, outputs moved aside, old runs pruned;
//! - [`killed`]: the tasks a killed run's workers still carry, held for
//!   them, and the processes its embedded worker left running;
//! - [`alloc`]: allocation queues (Slurm, PBS) and the driver's side of
//!   them.
//!
//! The run stops on [`signals`]; [`preview`] replays its dispatch decisions
//! for `flow plan --why`.

pub(crate) mod alloc;
mod books;
mod dispatch;
mod driver;
mod driver_event;
mod earlier;
mod killed;
mod loop_sender;
mod outgoing;
pub(crate) mod preview;
pub(crate) mod run;
mod signals;
mod workers;

pub use dispatch::images::{ImageProblem, image_problems};
pub use dispatch::rendered::{RUN_ID_PLACEHOLDER, RenderedCommand, rendered_commands};
pub use earlier::prune::{Kept, PrunedRun, prune_plan, remove_run};
pub use earlier::resume::origin;
