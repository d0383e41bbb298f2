//! How many allocations to submit: the queue's view of the work that can
//! run soon, measured in workers of the queue's shape. Plain functions, no
//! I/O, so the policy is tested alone.

use std::collections::HashSet;
use std::time::Duration;

use crate::ir::{Amount, Graph, GroupId, Resources};
use crate::profile::Queue;
use crate::resources::{Holder, Shortfall, Unfit, finishes_in, worker_time_limit};
use crate::runtime::core::GroupBacklog;

/// How a group's tasks fit on one worker of the queue.
#[derive(Debug, Clone, PartialEq)]
pub enum Fit {
    /// This many instances run side by side on one worker (per node for
    /// multi-node tasks, which take whole workers).
    Slots(u64),
    /// Never: no variant fits a worker of this queue, for this reason
    /// (e.g. "needs 4 cpus, the queue's workers have 2").
    Never(Unfit),
}

/// How each group fits the queue's workers.
pub fn fits(graph: &Graph, queue: &Queue) -> Vec<Fit> {
    graph
        .groups
        .iter()
        .map(|group| {
            let nodes = u64::from(group.nodes.max(1));
            if nodes > u64::from(queue.settings.max_workers) {
                return Fit::Never(Unfit::OverQueueMax { needs: nodes, max: queue.settings.max_workers });
            }
            match slots(&group.variants, queue) {
                // A multi-node task takes whole workers.
                Ok(n) if nodes > 1 => Fit::Slots(n.min(1)),
                Ok(n) => Fit::Slots(n),
                Err(why) => Fit::Never(why),
            }
        })
        .collect()
}

/// How many instances with `variants` the scheduler starts side by side on
/// a new worker of `queue`, or why it starts none.
fn slots(variants: &[Resources], queue: &Queue) -> Result<u64, Unfit> {
    if variants.is_empty() {
        return Err(Unfit::NoRequest);
    }
    // Workers get the time limit less a margin, and take only tasks whose
    // time_request fits in what they have left.
    let worker_limit = worker_time_limit(queue.time_limit);
    let (timely, late): (Vec<Resources>, Vec<Resources>) = variants
        .iter()
        .cloned()
        .partition(|r| finishes_in(r.time_request.map(Duration::from_secs), Some(Duration::from_secs(worker_limit))));
    let worker = &queue.worker;
    match worker.slots(&timely) {
        // A request for nothing: one per CPU.
        None => Ok(worker.cpus.map_or(1, |c| c.0 / Amount::SCALE).max(1)),
        Some(0) if late.is_empty() => {
            let shortfalls: Vec<Shortfall> = timely.iter().filter_map(|r| worker.shortfall(r)).collect();
            Err(Unfit::Short { shortfalls, holder: Holder::Queue })
        }
        Some(0) => Err(too_long(late[0].time_request.unwrap_or_default(), queue.time_limit, worker_limit)),
        Some(n) => Ok(n),
    }
}

/// Why a `time_request` of `t` seconds never runs on a queue.
fn too_long(t: u64, time_limit: u64, worker_limit: u64) -> Unfit {
    if t > time_limit {
        Unfit::LongerThanQueue { request_s: t, time_limit_s: time_limit }
    } else {
        Unfit::LongerThanWorker { request_s: t, worker_limit_s: worker_limit, time_limit_s: time_limit }
    }
}

/// Workers the queue should have (connected or queued) for the work that
/// can run soon: ready and running instances, and blocked instances whose
/// upstream groups have nothing blocked themselves (their dependencies are
/// ready or running, so they will be done within an allocation's life).
pub fn wanted_workers(graph: &Graph, backlog: &[GroupBacklog], fits: &[Fit]) -> u64 {
    let blocked: HashSet<GroupId> = backlog.iter().filter(|b| b.blocked > 0).map(|b| b.group).collect();
    let mut workers = 0f64;
    for b in backlog {
        let Fit::Slots(slots) = fits[b.group.index()] else { continue };
        let upstream_blocked = graph.edges.iter().any(|e| e.to == b.group && blocked.contains(&e.from));
        let soon = if upstream_blocked { 0 } else { b.blocked };
        let nodes = graph.group(b.group).nodes.max(1) as f64;
        workers += (b.ready + soon + b.running) as f64 * nodes / slots as f64;
    }
    workers.ceil() as u64
}

/// What a queue has now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueLoad {
    /// Workers of the queue connected now.
    pub connected: u64,
    /// Allocations submitted (or being submitted) whose workers have not connected.
    pub queued: u64,
}

/// How many allocations to submit now: enough for `wanted` workers, never
/// more than `max_workers` alive or queued, nor more than `backlog`
/// allocations waiting in the manager's queue.
pub fn submissions(queue: &Queue, load: QueueLoad, wanted: u64) -> u64 {
    let s = &queue.settings;
    let per = u64::from(s.workers_per_allocation.max(1));
    let alive = load.connected + load.queued * per;
    let need = wanted.saturating_sub(alive).div_ceil(per);
    let room = u64::from(s.max_workers).saturating_sub(alive) / per;
    let waiting = u64::from(s.backlog).saturating_sub(load.queued);
    need.min(room).min(waiting)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Source;
    use crate::profile;
    use crate::runtime::core::tests::env::{GroupSpec, edge_all, graph};

    fn queue(extra: &str) -> Queue {
        let text = format!("[profile.p.queue]\nmanager = \"slurm\"\ntime_limit = \"1h\"\n{extra}");
        profile::load(&Source::new("p.toml", text), "p").unwrap().queue.unwrap()
    }

    fn backlog(group: u32, ready: u64, blocked: u64, running: u64) -> GroupBacklog {
        GroupBacklog { group: GroupId(group), ready, blocked, running }
    }

    #[test]
    fn submissions_respect_backlog_and_max_workers() {
        let q = queue("max_workers = 5\nbacklog = 2\n");
        let load = |connected, queued| QueueLoad { connected, queued };
        assert_eq!(submissions(&q, load(0, 0), 100), 2, "backlog caps");
        assert_eq!(submissions(&q, load(0, 2), 100), 0, "backlog full");
        assert_eq!(submissions(&q, load(4, 0), 100), 1, "max_workers caps");
        assert_eq!(submissions(&q, load(3, 0), 3), 0, "enough workers");
        assert_eq!(submissions(&q, load(0, 0), 0), 0, "no work, no allocation");
        let q = queue("max_workers = 8\nbacklog = 4\nworkers_per_allocation = 4\n");
        assert_eq!(submissions(&q, load(0, 0), 5), 2);
        assert_eq!(submissions(&q, load(4, 1), 20), 0, "a second allocation would exceed max_workers");
    }

    #[test]
    fn only_work_that_can_run_soon_counts() {
        let groups = vec![GroupSpec::new("a", 8), GroupSpec::new("b", 8), GroupSpec::new("c", 8)];
        let g = graph(groups, vec![edge_all(0, 1), edge_all(1, 2)]);
        let q = queue("worker = { cpus = 2 }\n");
        let fits = fits(&g, &q);
        assert_eq!(fits[0], Fit::Slots(2));
        // a: 4 ready + 4 running; b waits only on a (soon); c waits on b (far upstream).
        let b = [backlog(0, 4, 0, 4), backlog(1, 0, 8, 0), backlog(2, 0, 8, 0)];
        assert_eq!(wanted_workers(&g, &b, &fits), 8);
    }

    #[test]
    fn tasks_the_queue_cannot_run_say_why() {
        let g = graph(
            vec![
                GroupSpec::new("big", 1).cpus(4.0),
                GroupSpec::new("long", 1).time(7200),
                GroupSpec::new("gpu", 1).gpus(1.0),
                GroupSpec::new("small", 1).cpus(0.5),
            ],
            vec![],
        );
        let fits = fits(&g, &queue("worker = { cpus = 2 }\n"));
        let why = |i: usize| match &fits[i] {
            Fit::Never(why) => why.to_string(),
            Fit::Slots(_) => String::new(),
        };
        assert_eq!(why(0), "needs 4 cpus, the queue's workers have 2");
        assert_eq!(why(1), "its time_request (2h) is longer than the queue's time_limit (1h)");
        assert_eq!(why(2), "needs 1 gpu, the queue's workers have 0");
        assert_eq!(fits[3], Fit::Slots(4));
    }

    /// Issue 13: a time_request between the workers' time limit and the
    /// queue's was never run and never reported (7 allocations in 75 s).
    #[test]
    fn a_time_request_the_workers_margin_leaves_no_room_for_is_reported() {
        // Issue 18: a request of exactly what a worker gets never runs either.
        let g = graph(
            vec![
                GroupSpec::new("exact", 1).time(3600),
                GroupSpec::new("equal", 1).time(59 * 60),
                GroupSpec::new("fits", 1).time(59 * 60 - 1),
            ],
            vec![],
        );
        let fits = fits(&g, &queue(""));
        let margin = "a worker of the queue gets (its time_limit of 1h less a margin for starting and stopping; a task must end before its worker)";
        for (fit, asked) in [(&fits[0], "1h"), (&fits[1], "59m")] {
            let Fit::Never(why) = fit else { panic!("{fit:?} fits") };
            assert_eq!(why.to_string(), format!("its time_request ({asked}) does not fit in the 59m {margin}"));
        }
        assert_eq!(fits[2], Fit::Slots(1));
    }

    /// Issue 13: `cpus = 0.75` on 4-CPU workers counted 5 instances per
    /// worker where the scheduler starts 4, so the queue asked for too few.
    #[test]
    fn fractional_cpus_are_counted_as_the_scheduler_starts_them() {
        let g = graph(vec![GroupSpec::new("a", 8).cpus(0.75)], vec![]);
        let fits = fits(&g, &queue("worker = { cpus = 4 }\n"));
        assert_eq!(fits[0], Fit::Slots(4));
        assert_eq!(wanted_workers(&g, &[backlog(0, 8, 0, 0)], &fits), 2);
    }
}
