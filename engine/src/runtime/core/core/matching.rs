//! [`Core::schedule`]: matching ready tasks to free resources.
//!
//! For a worker, matching visits the groups that have a ready instance in
//! rank order (priority, b-level, id) and starts an instance of the first
//! group one of whose variants fits the worker's free resources — the first
//! variant that fits. The cost of a match depends on the number of groups
//! and the size of the worker, never on the number of queued instances.
//! Workers are filled round-robin, one task each per pass, so work spreads
//! over idle workers. A worker that found nothing is skipped until resources
//! are freed on it or a group gains ready instances.

use crate::ir::TaskId;

use super::{Core, Running};
use crate::runtime::core::out::Out;
use crate::runtime::core::worker_id::WorkerId;

impl Core {
    /// Fills the free resources of every worker with ready tasks, calling
    /// [`Out::start`] for each task started. `now_us` (µs since the Unix epoch) is compared with worker
    /// deadlines for tasks that have a `time_request`, and instances
    /// waiting to be retried until then become ready first.
    pub fn schedule(&mut self, now_us: u64, out: &mut impl Out) {
        self.wake_due(now_us);
        if self.stopped.is_some() || self.order.is_idle() {
            return;
        }
        if self.multinode {
            self.schedule_multinode(now_us, out);
        }
        let mut candidates = std::mem::take(&mut self.scratch);
        candidates.clear();
        let epoch = self.epoch;
        candidates.extend(
            self.workers
                .iter()
                .enumerate()
                .filter_map(|(i, w)| w.as_ref().filter(|w| !w.reserved && w.stale != Some(epoch)).map(|_| i)),
        );
        while !candidates.is_empty() && !self.order.is_idle() {
            candidates.retain(|&w| self.start_one(w, now_us, out));
        }
        self.scratch = candidates;
        if !self.heads.is_empty() {
            self.prefetch(out);
        }
    }

    /// Starts one task on worker `w` if one fits; marks it stale otherwise.
    fn start_one(&mut self, w: usize, now_us: u64, out: &mut impl Out) -> bool {
        if self.workers[w].is_none() {
            return false;
        }
        let mut from = 0;
        while let Some((g, rank)) = self.order.next_active(from) {
            let attempt = self.next_attempt(g);
            let Some(worker) = self.workers[w].as_ref() else { return false };
            let group = &self.groups[g];
            if group.settings().nodes <= 1
                && let Some(v) = group.settings().requests(attempt).iter().position(|r| worker.fits(r, now_us))
            {
                self.start(g, v, w, out);
                return true;
            }
            from = rank + 1;
        }
        if let Some(worker) = self.workers[w].as_mut() {
            worker.stale = Some(self.epoch);
        }
        false
    }

    /// Starts the next ready instance of group `g` with variant `v` on worker `w`.
    fn start(&mut self, g: usize, v: usize, w: usize, out: &mut impl Out) {
        let Some(i) = self.groups[g].take() else { return };
        self.pending -= 1;
        self.sync_active(g);
        let task = TaskId::new(Self::group_id(g), i);
        let (attempt, worker) = (self.attempt_of(task), WorkerId(w as u32));
        let mut alloc = self.spare.pop().unwrap_or_default();
        alloc.variant = v;
        if let Some(worker) = self.workers[w].as_mut() {
            worker.take(&self.groups[g].settings().requests(attempt)[v], &self.names, &mut alloc);
        }
        out.start(task, attempt, worker, &alloc);
        self.running.insert(task, Running::new(task, worker, attempt, alloc));
        // A task of a short group on a prefetch worker may get a line behind it.
        if self.groups[g].line() > 0 && self.workers[w].as_ref().is_some_and(|w| w.prefetch) {
            self.heads.push(task);
        }
    }

    /// Starts multi-node tasks on whole idle workers, groups in rank order.
    fn schedule_multinode(&mut self, now_us: u64, out: &mut impl Out) {
        let mut from = 0;
        while let Some((g, rank)) = self.order.next_active(from) {
            from = rank + 1;
            if self.groups[g].settings().nodes <= 1 {
                continue;
            }
            while self.groups[g].is_active()
                && let Some((v, nodes)) = self.idle_nodes(g, now_us)
                && let Some(i) = self.groups[g].take()
            {
                self.pending -= 1;
                let task = TaskId::new(Self::group_id(g), i);
                let mut alloc = self.spare.pop().unwrap_or_default();
                alloc.variant = v;
                for &n in &nodes {
                    if let Some(worker) = self.workers[n].as_mut() {
                        worker.reserved = true;
                    }
                    alloc.nodes.push(WorkerId(n as u32));
                }
                if let Some(worker) = self.workers[nodes[0]].as_ref() {
                    worker.describe_whole(&self.names, &mut alloc);
                }
                self.scratch = nodes;
                let (attempt, worker) = (self.attempt_of(task), alloc.nodes[0]);
                out.start(task, attempt, worker, &alloc);
                self.running.insert(task, Running::new(task, worker, attempt, alloc));
            }
            self.sync_active(g);
        }
    }

    /// The attempt the next ready instance of group `g` runs as.
    fn next_attempt(&mut self, g: usize) -> u32 {
        if !self.groups[g].settings().grows_with_attempt() {
            return 0;
        }
        let next = self.groups[g].peek();
        next.map_or(0, |i| self.attempt_of(TaskId::new(Self::group_id(g), i)))
    }

    /// The first variant of group `g` for which enough idle workers fit, and
    /// those workers (lowest ids first).
    fn idle_nodes(&mut self, g: usize, now_us: u64) -> Option<(usize, Vec<usize>)> {
        let attempt = self.next_attempt(g);
        let group = &self.groups[g];
        let needed = group.settings().nodes as usize;
        let mut nodes = std::mem::take(&mut self.scratch);
        for (v, request) in group.settings().requests(attempt).iter().enumerate() {
            nodes.clear();
            let idle = self.workers.iter().enumerate().filter_map(|(i, w)| w.as_ref().map(|w| (i, w)));
            let fitting = idle.filter(|(_, w)| w.is_idle() && w.fits(request, now_us)).map(|(i, _)| i);
            nodes.extend(fitting.take(needed));
            if nodes.len() == needed {
                return Some((v, nodes));
            }
        }
        self.scratch = nodes;
        None
    }
}
