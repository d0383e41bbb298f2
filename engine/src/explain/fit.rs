//! Whether a resource variant would end before a worker of `workers.json`
//! leaves. Whether it fits the worker at all is the scheduler's
//! [`crate::resources::Capacity`], on [`WorkerInfo::capacity`].

use std::time::Duration;

use crate::ir::Resources;
use crate::resources::finishes_in;
use crate::rundir::WorkerInfo;

/// Whether `request` would end before `worker` leaves, starting at `now_us`.
pub(super) fn in_time(worker: &WorkerInfo, request: &Resources, now_us: u64) -> bool {
    match (worker.deadline_us, request.time_request) {
        (Some(deadline), Some(secs)) => {
            finishes_in(Duration::from_secs(secs), Duration::from_micros(deadline.saturating_sub(now_us)))
        }
        _ => true,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::ir::Amount;

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
    fn time_requests_must_end_before_the_worker_leaves() {
        let mut w = worker(0, 1, 0, 0);
        let mut r = request(1.0, 0.0, 0);
        r.time_request = Some(3600);
        assert!(in_time(&w, &r, 0), "a worker without a deadline has all the time");
        w.deadline_us = Some(3_600_000_001);
        assert!(in_time(&w, &r, 0));
        assert!(!in_time(&w, &r, 1), "exactly the time left is too little (issue 18)");
        assert!(!in_time(&w, &r, 2));
        r.time_request = None;
        assert!(in_time(&w, &r, 1));
    }
}
