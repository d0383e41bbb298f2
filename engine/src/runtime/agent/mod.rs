//! The agent: what executes jobs on one machine and reports how they ended,
//! embedded in `flow run` ([`local::LocalWorker`]) or as `flow worker`
//! connected to a coordinator ([`remote_worker`]).
//!
//! It starts each job's process in its own process group ([`spawn`], with
//! [`vfork_spawn`]), reaps
//! it with its resource usage ([`process`], with [`proc_stats`]), sends its output on
//! ([`output_sink`]), and has a guard process end its tasks should it die
//! ([`guard`]) or stop hearing its coordinator ([`heard`]). It knows the jobs and reports of [`super::protocol`], never
//! the scheduler's decisions or the run's graph.

pub(crate) mod detect;
pub(crate) mod guard;
pub(crate) mod heard;
pub(crate) mod local;
pub(crate) mod outbox;
pub(crate) mod outbox_writer;
pub(crate) mod output_budget;
pub(crate) mod output_sink;
pub(crate) mod proc_stats;
pub(crate) mod process;
pub(crate) mod program;
pub(crate) mod remote_worker;
pub(crate) mod spawn;
pub(crate) mod vfork_spawn;
