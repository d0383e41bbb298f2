//! What the coordinator and the agent share: a [`job::Job`] (one instance
//! rendered into what a worker executes), the reports a worker sends back ([`outcome`]), the messages
//! on a remote worker's connection ([`messages`]) and the fingerprints both
//! sides compute ([`fingerprint`]).

pub(crate) mod fingerprint;
pub(crate) mod job;
pub(crate) mod messages;
pub(crate) mod outcome;
