//! The run's books: the [`recorder`] takes the driver's records and events,
//! the [`journal_thread`] writes them, [`ready_times`] says when instances
//! became ready, and [`results`] where the run's results are.

pub(in crate::runtime::coordinator) mod journal_thread;
pub(in crate::runtime::coordinator) mod ready_times;
pub(in crate::runtime::coordinator) mod recorder;
pub(in crate::runtime::coordinator) mod results;
