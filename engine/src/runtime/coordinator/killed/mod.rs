//! After a run's flow process was killed: the tasks its remote workers
//! still carry ([`stranded`]), held for them by the resumed run ([`held`])
//! with what the killed run's log already holds of their output
//! ([`earlier_output`]), and the tasks its embedded worker left running
//! ([`orphans`]).

pub(in crate::runtime::coordinator) mod earlier_output;
pub(in crate::runtime::coordinator) mod held;
pub(in crate::runtime::coordinator) mod orphans;
pub(in crate::runtime::coordinator) mod stranded;
