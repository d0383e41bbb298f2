//! Turning the core's decisions into what workers run: the
//! [`job_factory`] renders instances into jobs, [`upstream_failures`] says
//! what a task waiting for a failure is told, [`images`] checks container
//! images before any task starts, [`rendered`] shows the command a worker
//! would start (`flow plan --commands`), and [`finally_runner`] runs the
//! workflow's `[finally]` command.

pub(in crate::runtime::coordinator) mod finally_runner;
pub(in crate::runtime::coordinator) mod images;
pub(in crate::runtime::coordinator) mod job_factory;
pub(in crate::runtime::coordinator) mod rendered;
pub(in crate::runtime::coordinator) mod upstream_failures;
