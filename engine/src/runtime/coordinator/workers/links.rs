//! [`Links`]: the workers a run dispatches to — the embedded one and the
//! remote ones — behind one interface, so the driver does not care which.
//! A job for the embedded worker starts at once (it dies with its run); a
//! message to a remote worker waits in [`Links::take_messages`] until the
//! journal has the records of the step that sent it (see `journal_thread.rs`).

use std::collections::BTreeMap;

use crate::ir::TaskId;
use crate::net::{NetError, encode};
use crate::resources::Deadline;
use crate::rundir::WorkerInfo;
use crate::runtime::agent::local::LocalWorker;
use crate::runtime::coordinator::outgoing::{Outgoing, Release, WorkerLink};
use crate::runtime::core::WorkerId;
use crate::runtime::protocol::job::Job;
use crate::runtime::protocol::messages::{Offer, ToWorker};

/// How jobs reach one worker.
pub enum Link {
    /// The embedded worker, in this process.
    Local(LocalWorker),
    /// A remote worker, through its connection.
    Remote {
        /// Messages to the worker.
        tx: WorkerLink,
        /// The jobs of this step, encoded, not yet handed on.
        pending: Vec<u8>,
        /// What it offered.
        offer: Offer,
        /// Its address.
        peer: String,
        /// When it leaves, if it has a time limit.
        deadline: Option<Deadline>,
        /// When it joined.
        joined: std::time::Instant,
    },
}

/// Every worker of a run.
#[derive(Default)]
pub struct Links {
    links: BTreeMap<WorkerId, Link>,
    /// This machine's host name and cluster job, once asked for.
    here: std::sync::OnceLock<(String, Option<String>)>,
    /// Messages to remote workers, sent once this step's records are written.
    messages: Vec<Release>,
    /// The remote workers sent jobs since the last [`Links::take_messages`].
    sent_to: Vec<WorkerId>,
}

impl Links {
    /// Adds a worker under the id the core gave it.
    pub fn insert(&mut self, id: WorkerId, link: Link) {
        self.links.insert(id, link);
    }

    /// Each remote worker that runs in a cluster job, with the job's id.
    pub fn allocations(&self) -> impl Iterator<Item = (WorkerId, &str)> {
        self.links.iter().filter_map(|(id, link)| match link {
            Link::Remote { offer, .. } => Some((*id, offer.allocation.as_deref()?)),
            Link::Local(_) => None,
        })
    }

    /// The cluster job worker `id` runs in, if any.
    pub fn allocation(&self, id: WorkerId) -> Option<&str> {
        match self.links.get(&id) {
            Some(Link::Remote { offer, .. }) => offer.allocation.as_deref(),
            _ => None,
        }
    }

    /// Whether some remote worker is still connected.
    pub fn has_remote(&self) -> bool {
        self.links.values().any(|l| matches!(l, Link::Remote { .. }))
    }

    /// Whether there is no worker at all.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// Forgets a worker that left.
    pub fn remove(&mut self, id: WorkerId) -> Option<Link> {
        self.links.remove(&id)
    }

    /// The host name of a worker (this machine's for the embedded one).
    pub fn hostname(&self, id: WorkerId) -> String {
        self.place(id).0
    }

    /// Where worker `id` runs, for an attempt's metrics: its real host
    /// name (this machine's for the embedded worker) and cluster job.
    pub fn place(&self, id: WorkerId) -> (String, Option<String>) {
        match self.links.get(&id) {
            Some(Link::Remote { offer, .. }) => (offer.hostname.clone(), offer.allocation.clone()),
            _ => self.here.get_or_init(|| (crate::host::hostname(), crate::host::cluster_job())).clone(),
        }
    }

    /// Whether worker `id` is the embedded one.
    pub fn is_local(&self, id: WorkerId) -> bool {
        matches!(self.links.get(&id), Some(Link::Local(_)))
    }

    /// Sends a job to worker `id` (to start after task `after` there, if
    /// set: only remote workers are sent jobs ahead); a job for a worker
    /// that is gone is dropped (its loss requeues the task). A job for a
    /// remote worker is encoded now and fails if it is too large to send.
    pub fn start(&mut self, id: WorkerId, job: Job, after: Option<TaskId>) -> Result<(), NetError> {
        match self.links.get_mut(&id) {
            Some(Link::Local(local)) => {
                local.start(job);
                Ok(())
            }
            Some(Link::Remote { pending, .. }) => {
                if pending.is_empty() {
                    self.sent_to.push(id);
                }
                encode(&ToWorker::Start { job: Box::new(job), after }, pending)
            }
            None => Ok(()),
        }
    }

    /// Stops every running job everywhere.
    pub fn stop_all(&mut self) {
        for link in self.links.values_mut() {
            match link {
                Link::Local(local) => local.stop_all(),
                Link::Remote { tx, pending, .. } => {
                    hand_on(&mut self.messages, tx, pending);
                    self.messages.push((tx.clone(), Outgoing::Message(ToWorker::StopAll)));
                }
            }
        }
    }

    /// Tells remote workers the run is over.
    pub fn shutdown(&mut self) {
        for link in self.links.values_mut() {
            if let Link::Remote { tx, pending, .. } = link {
                hand_on(&mut self.messages, tx, pending);
                self.messages.push((tx.clone(), Outgoing::Message(ToWorker::Shutdown)));
            }
        }
    }

    /// The messages to remote workers since the last call, in order: they
    /// leave once the records journaled before them are written.
    pub fn take_messages(&mut self) -> Vec<Release> {
        for id in std::mem::take(&mut self.sent_to) {
            if let Some(Link::Remote { tx, pending, .. }) = self.links.get_mut(&id) {
                hand_on(&mut self.messages, tx, pending);
            }
        }
        take_keeping_size(&mut self.messages)
    }

    /// The workers for `workers.json`, given how many tasks run on each.
    pub fn infos(&self, running: impl Fn(WorkerId) -> u64) -> Vec<WorkerInfo> {
        self.links
            .iter()
            .map(|(&id, link)| match link {
                Link::Local(local) => {
                    let (hostname, allocation) = self.place(id);
                    WorkerInfo {
                        id: id.0,
                        hostname,
                        peer: String::new(),
                        shape: local.resources().clone(),
                        deadline: None,
                        allocation,
                        running: running(id),
                    }
                }
                Link::Remote { offer, peer, deadline, .. } => WorkerInfo {
                    id: id.0,
                    hostname: offer.hostname.clone(),
                    peer: peer.clone(),
                    shape: offer.shape.clone(),
                    deadline: *deadline,
                    allocation: offer.allocation.clone(),
                    running: running(id),
                },
            })
            .collect()
    }
}

/// Moves the jobs encoded for the worker behind `tx` to `messages`, if there are any.
fn hand_on(messages: &mut Vec<Release>, tx: &WorkerLink, pending: &mut Vec<u8>) {
    if !pending.is_empty() {
        messages.push((tx.clone(), Outgoing::Encoded(take_keeping_size(pending))));
    }
}

/// The least room a list of messages starts a step with.
const ROOM: usize = 256;

/// Takes the items of `batch`, leaving it room for as many (and at least
/// [`ROOM`]): the next step's batch is about as big, and growing it again
/// from nothing would copy its items over and over.
fn take_keeping_size<T>(batch: &mut Vec<T>) -> Vec<T> {
    if batch.is_empty() {
        return Vec::new();
    }
    let room = Vec::with_capacity(batch.len().max(ROOM));
    std::mem::replace(batch, room)
}
