//! Workers coming and going: a remote worker joins with what it offers,
//! and leaves (or is lost) with the tasks it ran, which run again
//! elsewhere; `workers.json` follows.

use std::collections::HashMap;
use std::time::Instant;

use tokio::sync::oneshot;

use super::{Collect, Driver};
use crate::host::now_us;
use crate::ir::TaskId;
use crate::log::JournalEvent;
use crate::resources::Deadline;
use crate::runtime::coordinator::outgoing::WorkerLink;
use crate::runtime::coordinator::workers::links::Link;
use crate::runtime::core::WorkerId;
use crate::runtime::event::Event;
use crate::runtime::protocol::messages::{FENCE_MARGIN, Offer};

impl Driver {
    /// A remote worker connected at `peer` offering `offer`: it gets an id
    /// (sent on `reply`) and jobs through `link`.
    pub(super) fn joined(
        &mut self,
        mut offer: Offer,
        link: WorkerLink,
        peer: String,
        reply: oneshot::Sender<WorkerId>,
        out: &mut Collect,
    ) {
        let allocation = offer.allocation.as_deref().map(|job| self.queue.joined(job)).unwrap_or_default();
        let deadline = offer.time_limit.map(|t| Deadline::after(now_us(), t));
        let id = self.core.add_worker(offer.shape.clone(), deadline);
        // Across a network, the next task is sent before a slot frees.
        self.core.set_prefetch(id, true);
        self.recorder.event(Event::WorkerJoined {
            worker: id.0,
            hostname: offer.hostname.clone(),
            allocation: offer.allocation.clone(),
            peer: peer.clone(),
            cpus: offer.shape.cpus.len(),
            gpus: offer.shape.gpus.len(),
        });
        let carried = std::mem::take(&mut offer.carried);
        let copies = self.reattach(id, &offer.hostname, carried, &link);
        self.links
            .insert(id, Link::Remote { tx: link, pending: Vec::new(), offer, peer, deadline, joined: Instant::now() });
        self.copy_then_reply(copies, reply, id);
        self.write_workers(true);
        for event in allocation {
            self.recorder.event(event);
        }
        if self.links.allocation(id).is_some() {
            let demand = self.queue.worker_joined(&self.core, self.factory.graph());
            self.act_on(demand, out);
        }
    }

    /// `worker` left or was lost, planned or not (`clean`), for `reason`:
    /// the tasks it ran are lost and run again elsewhere.
    pub(super) fn lost(&mut self, worker: WorkerId, reason: String, clean: bool, out: &mut Collect) {
        let (hostname, allocation) = self.links.place(worker);
        if let Some(info) = self.links.infos(|_| 0).into_iter().find(|w| w.id == worker.0) {
            self.workers.left(info);
        }
        let Some(link) = self.links.remove(worker) else { return };
        if let Link::Remote { offer: Offer { allocation: Some(job), .. }, joined, .. } = &link {
            for event in self.queue.left(job, joined.elapsed(), clean, &reason) {
                self.recorder.event(event);
            }
        }
        // Lost without a word, its worker may still run them: they wait for
        // it to have stopped them (or to come back with them), so that two
        // attempts never run at once.
        let fence_until_us = (!clean).then(|| now_us() + FENCE_MARGIN.as_micros() as u64);
        let lost: Vec<(TaskId, u32)> =
            self.running.iter().filter(|(_, (_, w))| *w == worker).map(|(t, (a, _))| (*t, *a)).collect();
        let tasks = lost.len();
        for (task, attempt) in lost {
            self.running.remove(&task);
            self.ahead.forget(task);
            self.recorder.journal(task, attempt, JournalEvent::Lost { worker: worker.0 });
            self.ready.ready_again(task, fence_until_us.unwrap_or_else(now_us));
            if fence_until_us.is_some() {
                self.fenced.insert(task, attempt);
            }
        }
        self.core.remove_worker(worker, fence_until_us, out);
        self.recorder.event(Event::WorkerLost { worker: worker.0, hostname, allocation, reason, tasks });
        self.write_workers(true);
    }

    /// Writes `workers.json` (every connected worker and how many tasks it
    /// runs) if `always`, or if its running counts changed.
    pub(super) fn write_workers(&mut self, always: bool) {
        let mut counts: HashMap<WorkerId, u64> = HashMap::new();
        for (_, w) in self.running.values() {
            *counts.entry(*w).or_default() += 1;
        }
        let infos = self.links.infos(|w| counts.get(&w).copied().unwrap_or(0));
        self.workers.write(&infos, always);
    }
}
