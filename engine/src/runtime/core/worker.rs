//! [`Worker`]: what the core tracks of one worker — its shape, its pools,
//! what is free, how many tasks it runs.

use crate::ir::Amount;
use crate::resources::{Capacity, Deadline, Names, Pools, Request, WorkerShape, ends_in_time};

use super::allocation::Allocation;

/// One worker: its pools, what is free, and what the core runs on it.
#[derive(Debug, Clone)]
pub(super) struct Worker {
    /// What it has.
    shape: WorkerShape,
    /// What of it is free.
    pools: Pools,
    /// When it goes away, if it has a time limit.
    pub(super) deadline: Option<Deadline>,
    /// Single-node tasks running here.
    pub(super) tasks: u32,
    /// Whole worker held by a multi-node task.
    pub(super) reserved: bool,
    /// Whether tasks are sent ahead to it (a worker across a network).
    pub(super) prefetch: bool,
    /// The deepest line behind one of its running tasks: its share of
    /// the lines of all workers (see `prefetch.rs`).
    pub(super) line_cap: u8,
    /// Set when matching found nothing for this worker at this epoch of the
    /// ready set; cleared when resources are freed here.
    pub(super) stale: Option<u64>,
}

impl Worker {
    /// A worker with everything free, interning its custom resource names.
    pub(super) fn new(shape: WorkerShape, deadline: Option<Deadline>, names: &mut Names) -> Self {
        Self {
            pools: Pools::new(shape.cpus.clone(), shape.gpus.clone(), shape.memory, &shape.custom, names),
            shape,
            deadline,
            tasks: 0,
            reserved: false,
            prefetch: false,
            line_cap: 0,
            stale: None,
        }
    }

    /// Whether `request` fits what is free now, ending before the deadline
    /// when started at `now_us` (µs since the Unix epoch).
    pub(super) fn fits(&self, request: &Request, now_us: u64) -> bool {
        self.pools.has_room(request) && ends_in_time(request.time, self.deadline, now_us)
    }

    /// Whether `request` fits what is free now, whatever its time: for a
    /// task already running here ([`super::Core::adopt`]).
    pub(super) fn has_room(&self, request: &Request) -> bool {
        self.pools.has_room(request)
    }

    /// How many CPUs it has (at least one).
    pub(super) fn cpu_count(&self) -> u32 {
        self.shape.cpus.len().max(1) as u32
    }

    /// What this worker has when nothing runs on it.
    pub(super) fn capacity(&self) -> Capacity {
        self.shape.capacity()
    }

    /// Takes `request` (which must fit), recording what was taken in `alloc`.
    pub(super) fn take(&mut self, request: &Request, names: &Names, alloc: &mut Allocation) {
        self.pools.take(request, &mut alloc.cpus, &mut alloc.gpus);
        self.took(request, names, alloc);
    }

    /// Takes `request` on exactly the CPU and GPU ids named, as `take`
    /// does; false, and nothing taken, unless they have room.
    pub(super) fn take_ids(
        &mut self,
        request: &Request,
        ids: (&[u32], &[u32]),
        names: &Names,
        alloc: &mut Allocation,
    ) -> bool {
        if !self.pools.take_ids(request, ids, &mut alloc.cpus, &mut alloc.gpus) {
            return false;
        }
        self.took(request, names, alloc);
        true
    }

    /// Records in `alloc` the rest of what was taken for `request`: one task more.
    fn took(&mut self, request: &Request, names: &Names, alloc: &mut Allocation) {
        alloc.memory = request.memory;
        alloc.custom.extend(request.custom.iter().map(|&(i, amount)| (names.get(i).clone(), amount)));
        self.tasks += 1;
    }

    /// Gives back what `take` took for `request`.
    pub(super) fn give(&mut self, request: &Request, alloc: &Allocation) {
        self.pools.give(request, &alloc.cpus, &alloc.gpus);
        self.tasks -= 1;
        self.stale = None;
    }

    /// Records in `alloc` the whole worker, for a multi-node task.
    pub(super) fn describe_whole(&self, names: &Names, alloc: &mut Allocation) {
        alloc.cpus.extend(self.pools.cpus.ids().iter().map(|&id| (id, Amount::whole(1))));
        alloc.gpus.extend(self.pools.gpus.ids().iter().map(|&id| (id, Amount::whole(1))));
        alloc.memory = self.pools.memory;
        alloc.custom.extend(self.pools.custom_totals(names).map(|(name, a)| (name.clone(), a)));
    }

    /// Whether nothing runs here.
    pub(super) fn is_idle(&self) -> bool {
        self.tasks == 0 && !self.reserved
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ir::Resources;

    #[test]
    fn takes_and_gives_back_every_pool() {
        let mut names = Names::default();
        let shape = WorkerShape {
            cpus: vec![0, 1],
            gpus: vec![7],
            memory: 1000,
            custom: [("fpga".to_owned(), Amount::whole(1))].into(),
        };
        let mut worker = Worker::new(shape, None, &mut names);
        let request = Request {
            cpus: Amount::whole(1),
            gpus: Amount(2500),
            memory: 600,
            custom: vec![(names.intern("fpga"), Amount::whole(1))],
            time: None,
        };
        let now = 0;
        assert!(worker.fits(&request, now));
        let mut alloc = Allocation::default();
        worker.take(&request, &names, &mut alloc);
        assert_eq!(
            (alloc.cpus.as_slice(), alloc.gpus.as_slice()),
            (&[(0, Amount::whole(1))][..], &[(7, Amount(2500))][..])
        );
        assert_eq!(&*alloc.custom[0].0, "fpga");
        assert!(!worker.fits(&Request { memory: 600, ..Request::default() }, now), "memory is taken");
        assert!(!worker.fits(&request, now), "the fpga is taken");
        assert!(worker.capacity().fits(&Resources {
            cpus: Amount::whole(1),
            gpus: Amount(2500),
            memory: 600,
            custom: [("fpga".to_owned(), Amount::whole(1))].into(),
            time_request: None,
        }));
        worker.give(&request, &alloc);
        assert!(worker.fits(&request, now) && worker.is_idle());
        let unknown = Request { custom: vec![(names.intern("license"), Amount(1))], ..Request::default() };
        assert!(!worker.fits(&unknown, now));
    }

    #[test]
    fn time_requests_must_end_before_the_deadline() {
        let now = 5_000_000;
        let deadline = Some(Deadline::after(now, Duration::from_secs(60)));
        let shape = WorkerShape { cpus: vec![0], ..WorkerShape::default() };
        let worker = Worker::new(shape, deadline, &mut Names::default());
        let short = Request { time: Some(Duration::from_secs(30)), ..Request::default() };
        let long = Request { time: Some(Duration::from_secs(90)), ..Request::default() };
        assert!(worker.fits(&short, now) && !worker.fits(&long, now));
        assert!(worker.fits(&Request::default(), now));
        // Issue 18: the same boundary as the planner and `flow explain`.
        let at = |secs| Request { time: Some(Duration::from_secs(secs)), ..Request::default() };
        assert!(!worker.fits(&at(60), now) && worker.fits(&at(59), now) && !worker.fits(&at(61), now));
    }
}
