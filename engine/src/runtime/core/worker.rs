//! [`WorkerResources`] as a worker reports them, and [`Worker`]: what the core
//! tracks of one worker — its pools, what is free, how many tasks it runs.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::ir::Amount;

use super::allocation::Allocation;
use super::capacity::Capacity;
use super::pool::IndexedPool;
use super::request::{Names, Request};

/// A worker's id, unique for the life of a [`super::Core`] (never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkerId(pub u32);

/// What a worker offers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerResources {
    /// CPU ids (each one unit; fractions of an id may be shared).
    pub cpus: Vec<u32>,
    /// GPU device ids (each one unit; fractions of a device may be shared).
    pub gpus: Vec<u32>,
    /// Memory in bytes.
    pub memory: u64,
    /// Custom resources by name (sum pools).
    pub custom: BTreeMap<String, Amount>,
    /// When the worker goes away (end of its cluster allocation): a task
    /// whose `time_request` does not fit before then is not given to it.
    pub deadline: Option<Instant>,
}

/// One worker: its total resources and what is free right now.
#[derive(Debug, Clone)]
pub(super) struct Worker {
    pub(super) cpus: IndexedPool,
    pub(super) gpus: IndexedPool,
    pub(super) memory: u64,
    pub(super) memory_free: u64,
    /// Totals and free amounts by interned custom index (missing = none).
    pub(super) custom: Vec<u64>,
    pub(super) custom_free: Vec<u64>,
    pub(super) deadline: Option<Instant>,
    /// Single-node tasks running here.
    pub(super) tasks: u32,
    /// Whole worker held by a multi-node task.
    pub(super) reserved: bool,
    /// Whether tasks are sent ahead to it (a worker across a network).
    pub(super) prefetch: bool,
    /// Set when matching found nothing for this worker at this epoch of the
    /// ready set; cleared when resources are freed here.
    pub(super) stale: Option<u64>,
}

impl Worker {
    /// A worker with everything free, interning its custom resource names.
    pub(super) fn new(resources: WorkerResources, names: &mut Names) -> Self {
        let mut custom = Vec::new();
        for (name, amount) in &resources.custom {
            let i = names.intern(name);
            if custom.len() <= i {
                custom.resize(i + 1, 0);
            }
            custom[i] += amount.0;
        }
        Self {
            cpus: IndexedPool::new(resources.cpus),
            gpus: IndexedPool::new(resources.gpus),
            memory: resources.memory,
            memory_free: resources.memory,
            custom_free: custom.clone(),
            custom,
            deadline: resources.deadline,
            tasks: 0,
            reserved: false,
            prefetch: false,
            stale: None,
        }
    }

    /// Whether `request` fits what is free now, finishing before the deadline.
    pub(super) fn fits(&self, request: &Request, now: Instant) -> bool {
        self.has_room(request) && self.in_time(request, now)
    }

    /// Whether `request` fits what is free now, whatever its time request.
    pub(super) fn has_room(&self, request: &Request) -> bool {
        self.memory_free >= request.memory
            && self.cpus.fits(request.cpus)
            && self.gpus.fits(request.gpus)
            && request.custom.iter().all(|&(i, a)| self.custom_free.get(i).is_some_and(|&free| free >= a.0))
    }

    /// What this worker has when nothing runs on it.
    pub(super) fn capacity(&self, names: &Names) -> Capacity {
        let ids = |pool: &IndexedPool| Some(Amount::whole(pool.len() as u64));
        let custom = self.custom.iter().enumerate().filter(|&(_, &a)| a > 0);
        Capacity {
            cpus: ids(&self.cpus),
            gpus: ids(&self.gpus),
            memory: Some(self.memory),
            custom: Some(custom.map(|(i, &a)| (names.get(i).to_string(), Amount(a))).collect()),
        }
    }

    fn in_time(&self, request: &Request, now: Instant) -> bool {
        match (self.deadline, request.time) {
            (Some(deadline), Some(time)) => now.checked_add(time).is_some_and(|end| end <= deadline),
            _ => true,
        }
    }

    /// Takes `request` (which must fit), recording what was taken in `alloc`.
    pub(super) fn take(&mut self, request: &Request, names: &Names, alloc: &mut Allocation) {
        self.cpus.take(request.cpus, &mut alloc.cpus);
        self.gpus.take(request.gpus, &mut alloc.gpus);
        self.memory_free -= request.memory;
        alloc.memory = request.memory;
        for &(i, amount) in &request.custom {
            self.custom_free[i] -= amount.0;
            alloc.custom.push((names.get(i).clone(), amount));
        }
        self.tasks += 1;
    }

    /// Gives back what `take` took for `request`.
    pub(super) fn give(&mut self, request: &Request, alloc: &Allocation) {
        self.cpus.give(&alloc.cpus);
        self.gpus.give(&alloc.gpus);
        self.memory_free = (self.memory_free + request.memory).min(self.memory);
        for &(i, amount) in &request.custom {
            self.custom_free[i] = (self.custom_free[i] + amount.0).min(self.custom[i]);
        }
        self.tasks -= 1;
        self.stale = None;
    }

    /// Records in `alloc` the whole worker, for a multi-node task.
    pub(super) fn describe_whole(&self, names: &Names, alloc: &mut Allocation) {
        alloc.cpus.extend(self.cpus.ids().iter().map(|&id| (id, Amount::whole(1))));
        alloc.gpus.extend(self.gpus.ids().iter().map(|&id| (id, Amount::whole(1))));
        alloc.memory = self.memory;
        let custom = self.custom.iter().enumerate().filter(|&(_, &a)| a > 0);
        alloc.custom.extend(custom.map(|(i, &a)| (names.get(i).clone(), Amount(a))));
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
        let resources = WorkerResources {
            cpus: vec![0, 1],
            gpus: vec![7],
            memory: 1000,
            custom: [("fpga".to_owned(), Amount::whole(1))].into(),
            deadline: None,
        };
        let mut worker = Worker::new(resources, &mut names);
        let request = Request {
            cpus: Amount::whole(1),
            gpus: Amount(2500),
            memory: 600,
            custom: vec![(names.intern("fpga"), Amount::whole(1))],
            time: None,
        };
        let now = Instant::now();
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
        assert!(worker.capacity(&names).fits(&Resources {
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
        let now = Instant::now();
        let deadline = Some(now + Duration::from_secs(60));
        let worker =
            Worker::new(WorkerResources { cpus: vec![0], deadline, ..Default::default() }, &mut Names::default());
        let short = Request { time: Some(Duration::from_secs(30)), ..Request::default() };
        let long = Request { time: Some(Duration::from_secs(90)), ..Request::default() };
        assert!(worker.fits(&short, now) && !worker.fits(&long, now));
        assert!(worker.fits(&Request::default(), now));
    }
}
