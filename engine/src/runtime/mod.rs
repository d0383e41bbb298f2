//! The runtime: executing a [`crate::ir::Graph`] — the scheduler core, the
//! workers, the run directory, and the driver that ties them together.

pub mod run_dir;
