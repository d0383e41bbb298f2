//! The runtime: executing a [`crate::ir::Graph`] — the scheduler core, the
//! coordinator that drives it, the workers that run the tasks, and the run
//! directory they leave behind.
//!
//! The tree shows who runs where (see `docs/design/architecture.md`):
//! `core` is the scheduler, plain data with no tokio and no I/O;
//! `coordinator` is the `flow run` process around it (the driver loop, the
//! allocation queue, resuming, the remote workers' connections); `agent` is
//! what executes jobs on a machine, embedded in `flow run` or as
//! `flow worker`; `protocol` is what the two share: the jobs sent, the
//! reports sent back, the messages on the wire and fingerprints. The
//! coordinator imports the agent and the protocol, the agent imports only
//! the protocol and the core's resource types. The run directory the
//! coordinator writes is [`crate::rundir`]'s: `explain`, `report` and the
//! CLI read it from there.
//!
//! Everything outside the crate goes through the re-exports below; the
//! modules behind them are internal.

pub(crate) mod agent;
pub(crate) mod coordinator;
pub(crate) mod core;
pub(crate) mod event;
pub(crate) mod protocol;
pub(crate) mod run_options;

// Starting a run and following it.
pub use coordinator::run::{RunError, RunHandle, start};
pub use event::{Event, MoveReason};
pub use protocol::messages::{FENCE_MARGIN, HEARTBEAT_TIMEOUT};
pub use protocol::outcome::Status;
pub use run_options::RunOptions;

// The run directory and its files, which the run writes.
pub use crate::rundir::{
    AllocRecord, AllocState, AllocsFile, FinallyOutcome, IO_FAILURE, Meta, QueueRecord, RunDir, RunLock, STATE_DIR,
    Summary, WorkerInfo, if_written, locate, state_dir,
};

// Earlier runs: what a run would redo, and which run did an instance's work.
pub use coordinator::preview::{InstanceWhy, ReasonCount, TaskPreview, Why, preview};
pub use coordinator::{ImageProblem, image_problems};
pub use coordinator::{
    Kept, PrunedRun, RUN_ID_PLACEHOLDER, RenderedCommand, origin, prune_plan, remove_run, rendered_commands,
};

// A queue's fit and script, for `flow check` and `flow alloc`.
pub use coordinator::alloc::planner::{Fit, fits};
pub use coordinator::alloc::script::{ScriptContext, script, submit_command};

// Workers: this machine's resources, `flow worker`, and the guard process.
pub use agent::detect::{Given, detect};
pub use agent::guard::{Guard, serve as serve_guard};
pub use agent::output_budget::DEFAULT_OUTPUT_BUFFER;
pub use agent::remote_worker::{
    JoinRetry, JoinedRun, Leave, WorkerError, WorkerOptions, run as run_worker, run_copies as run_workers,
};
