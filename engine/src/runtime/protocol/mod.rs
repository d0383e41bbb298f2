//! What the coordinator and the agent share: a [`job::Job`] (one instance
//! rendered into what a worker executes), the reports a worker sends back ([`outcome`]), the messages
//! on a remote worker's connection ([`messages`]), the fingerprints both
//! sides compute ([`fingerprint`]) and the ids of the files a job reads,
//! compared when it ends ([`read_stamps`]).

pub(crate) mod fingerprint;
pub(crate) mod job;
pub(crate) mod messages;
pub(crate) mod outcome;
pub(crate) mod read_stamps;
