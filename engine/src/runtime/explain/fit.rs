//! Whether a resource variant fits a worker of `workers.json`, and what it
//! lacks when it fits none — the scheduler's rules (`core::worker`), on the
//! totals a worker reported.

use crate::ir::{Amount, Resources};
use crate::runtime::core::{Shortfall, ids_needed};
use crate::runtime::links::WorkerInfo;

/// Whether `request` fits `worker` when nothing runs there.
pub(super) fn could_fit(worker: &WorkerInfo, request: &Resources) -> bool {
    ids_needed(request.cpus) <= worker.cpus as u64
        && ids_needed(request.gpus) <= worker.gpus as u64
        && request.memory <= worker.memory
        && request
            .custom
            .iter()
            .all(|(name, &amount)| amount.0 == 0 || worker.custom.get(name).is_some_and(|&have| have >= amount))
}

/// Whether `request` would end before `worker` leaves, starting at `now_us`.
pub(super) fn in_time(worker: &WorkerInfo, request: &Resources, now_us: u64) -> bool {
    match (worker.deadline_us, request.time_request) {
        (Some(deadline), Some(secs)) => now_us.saturating_add(secs.saturating_mul(1_000_000)) <= deadline,
        _ => true,
    }
}

/// What of `request` not even the largest of `workers` has (there is at least one worker).
pub(super) fn shortfall(request: &Resources, workers: &[WorkerInfo]) -> Shortfall {
    let max = |f: &dyn Fn(&WorkerInfo) -> u64| workers.iter().map(f).max().unwrap_or(0);
    let cpus = max(&|w| w.cpus as u64);
    if ids_needed(request.cpus) > cpus {
        return Shortfall::Cpus { needs: request.cpus, largest: cpus };
    }
    let gpus = max(&|w| w.gpus as u64);
    if ids_needed(request.gpus) > gpus {
        return Shortfall::Gpus { needs: request.gpus, largest: gpus };
    }
    let memory = max(&|w| w.memory);
    if request.memory > memory {
        return Shortfall::Memory { needs: request.memory, largest: memory };
    }
    for (name, &amount) in &request.custom {
        let most = Amount(max(&|w| w.custom.get(name).map_or(0, |a| a.0)));
        if amount > most {
            return Shortfall::Custom { name: name.clone(), needs: amount, largest: most };
        }
    }
    Shortfall::Combination
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A worker with these totals and no deadline.
    pub(crate) fn worker(id: u32, cpus: usize, gpus: usize, memory: u64) -> WorkerInfo {
        WorkerInfo {
            id,
            hostname: format!("node{id}"),
            peer: String::new(),
            cpus,
            gpus,
            memory,
            custom: Default::default(),
            deadline_us: None,
            allocation: None,
            running: 0,
        }
    }

    fn request(cpus: f64, gpus: f64, memory: u64) -> Resources {
        Resources {
            cpus: Amount::from_f64(cpus).unwrap(),
            gpus: Amount::from_f64(gpus).unwrap(),
            memory,
            ..Resources::default()
        }
    }

    #[test]
    fn fits_by_ids_memory_and_custom_resources() {
        let w = worker(0, 2, 1, 1 << 30);
        assert!(could_fit(&w, &request(2.0, 1.0, 1 << 30)));
        assert!(could_fit(&w, &request(1.5, 0.25, 0)));
        assert!(!could_fit(&w, &request(2.5, 0.0, 0)), "2.5 cpus touch 3 ids");
        assert!(!could_fit(&w, &request(1.0, 0.0, 2 << 30)));
        let mut fpga = request(1.0, 0.0, 0);
        fpga.custom.insert("fpga".into(), Amount::whole(1));
        assert!(!could_fit(&w, &fpga));
        let mut with_fpga = w.clone();
        with_fpga.custom.insert("fpga".into(), Amount::whole(2));
        assert!(could_fit(&with_fpga, &fpga));
        fpga.custom.insert("license".into(), Amount::ZERO);
        assert!(could_fit(&with_fpga, &fpga), "a zero request needs nothing");
    }

    #[test]
    fn time_requests_must_end_before_the_worker_leaves() {
        let mut w = worker(0, 1, 0, 0);
        let mut r = request(1.0, 0.0, 0);
        r.time_request = Some(3600);
        assert!(in_time(&w, &r, 0), "a worker without a deadline has all the time");
        w.deadline_us = Some(3_600_000_000);
        assert!(in_time(&w, &r, 0));
        assert!(!in_time(&w, &r, 1));
        r.time_request = None;
        assert!(in_time(&w, &r, 1));
    }

    #[test]
    fn the_first_resource_no_worker_has_is_named() {
        let workers = [worker(0, 2, 0, 4 << 30), worker(1, 1, 1, 8 << 30)];
        assert_eq!(shortfall(&request(4.0, 0.0, 0), &workers), Shortfall::Cpus { needs: Amount::whole(4), largest: 2 });
        assert_eq!(shortfall(&request(1.0, 2.0, 0), &workers), Shortfall::Gpus { needs: Amount::whole(2), largest: 1 });
        assert_eq!(
            shortfall(&request(1.0, 0.0, 16 << 30), &workers),
            Shortfall::Memory { needs: 16 << 30, largest: 8 << 30 }
        );
        let mut fpga = request(1.0, 0.0, 0);
        fpga.custom.insert("fpga".into(), Amount::whole(1));
        assert_eq!(
            shortfall(&fpga, &workers),
            Shortfall::Custom { name: "fpga".into(), needs: Amount::whole(1), largest: Amount::ZERO }
        );
        assert_eq!(shortfall(&request(2.0, 1.0, 0), &workers), Shortfall::Combination);
    }
}
