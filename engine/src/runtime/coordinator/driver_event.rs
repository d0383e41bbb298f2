//! [`DriverEvent`]: what reaches the run loop from workers, the listener,
//! the resource manager and the hashing threads.

use tokio::sync::oneshot;

use crate::ir::TaskId;
use crate::runtime::coordinator::alloc::queue_side::ManagerAnswer;
use crate::runtime::coordinator::earlier::cache_lookup::Lookup;
use crate::runtime::coordinator::outgoing::WorkerLink;
use crate::runtime::core::WorkerId;
use crate::runtime::protocol::messages::Offer;
use crate::runtime::protocol::outcome::WorkerEvent;

/// What reaches the run loop from workers and the listener.
pub enum DriverEvent {
    /// A worker reported on a job.
    Worker {
        /// Which worker.
        worker: WorkerId,
        /// What it said.
        event: WorkerEvent,
    },
    /// A remote worker connected and introduced itself.
    Joined {
        /// What it offers.
        offer: Offer,
        /// Where to send it jobs.
        link: WorkerLink,
        /// Its address.
        peer: String,
        /// Gets the id the worker was given.
        reply: oneshot::Sender<WorkerId>,
    },
    /// A remote worker disconnected or fell silent.
    Lost {
        /// Which worker.
        worker: WorkerId,
        /// Why.
        reason: String,
        /// Whether the worker planned to leave (idle, time limit) rather than being killed or vanishing.
        clean: bool,
    },
    /// The manager answered a submission or a poll.
    Manager(ManagerAnswer),
    /// An instance was compared with its last success before dispatch:
    /// its fingerprint if unchanged.
    Checked {
        /// Which instance.
        task: TaskId,
        /// What the cache had for it.
        found: Lookup,
    },
    /// A peer failed the handshake (wrong or no secret) and was turned away.
    Refused {
        /// Its address.
        peer: String,
        /// What went wrong.
        reason: String,
    },
}
