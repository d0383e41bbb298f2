//! [`Unfit`]: why a task can never run on the workers there are (or on a
//! queue's workers), typed, and worded by its `Display` — the scheduler's
//! unschedulable groups and an allocation queue's planner say it alike.

use std::fmt;
use std::ops::Range;

use super::shortfall::{Holder, Shortfall, no_variant_fits};
use crate::ir::KeySpans;
use crate::units::{DurationStyle, duration};

/// Why a task can never run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfit {
    /// There are no workers at all.
    NoWorkers,
    /// The task has no resource request to fit (no variant).
    NoRequest,
    /// It needs more workers at once than fit it.
    TooFewWorkers {
        /// Workers it needs at once (its `nodes`).
        needs: u64,
        /// Workers any variant fits.
        fitting: usize,
        /// Workers there are.
        workers: usize,
    },
    /// It needs more workers at once than a queue may have.
    OverQueueMax {
        /// Workers it needs at once (its `nodes`).
        needs: u64,
        /// The queue's `max_workers`.
        max: u32,
    },
    /// No variant fits: what each lacks, in variant order.
    Short {
        /// Each variant's shortfall.
        shortfalls: Vec<Shortfall>,
        /// Whose resources they are measured against.
        holder: Holder,
    },
    /// Its `time_request` is longer than a queue's `time_limit`.
    LongerThanQueue {
        /// The `time_request`, in seconds.
        request_s: u64,
        /// The queue's `time_limit`, in seconds.
        time_limit_s: u64,
    },
    /// Its `time_request` does not end within what a worker of the queue
    /// gets of the `time_limit` (see [`super::worker_time_limit`]).
    LongerThanWorker {
        /// The `time_request`, in seconds.
        request_s: u64,
        /// What a worker gets, in seconds.
        worker_limit_s: u64,
        /// The queue's `time_limit`, in seconds.
        time_limit_s: u64,
    },
}

impl Unfit {
    /// Where the key that makes the task unfit is written, if one does and
    /// `keys` knows it: `nodes` for too few workers, the short resource of
    /// a task with one request.
    pub fn key<'a>(&self, keys: &'a KeySpans) -> Option<&'a Range<usize>> {
        match self {
            Unfit::TooFewWorkers { .. } | Unfit::OverQueueMax { .. } => keys.nodes.as_ref(),
            Unfit::Short { shortfalls, .. } => match shortfalls.as_slice() {
                [only] => only.key(keys),
                _ => None,
            },
            _ => None,
        }
    }

    /// What the key [`Unfit::key`] points at does wrong, for its label.
    pub fn label(&self) -> &'static str {
        match self {
            Unfit::TooFewWorkers { .. } | Unfit::OverQueueMax { .. } => "more workers than there are",
            _ => "cannot fit on any worker",
        }
    }

    /// How to make the task fit, for a diagnostic's help line.
    pub fn help(&self) -> &'static str {
        match self {
            Unfit::TooFewWorkers { .. } | Unfit::OverQueueMax { .. } => {
                "lower `nodes`, or run it where more workers join (--listen, or --profile for a cluster queue)"
            }
            _ => {
                "lower the request, add a smaller variant, or describe a bigger worker (--cpus, --gpus, --memory, --resource)"
            }
        }
    }
}

impl fmt::Display for Unfit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let exact = |secs: u64| duration(secs.saturating_mul(1_000_000), DurationStyle::Exact);
        match self {
            Unfit::NoWorkers => f.write_str("there are no workers"),
            Unfit::NoRequest => f.write_str("it has no resource request"),
            Unfit::TooFewWorkers { needs, fitting, workers } if fitting == workers => {
                write!(f, "needs {needs} workers, there are {workers}")
            }
            Unfit::TooFewWorkers { needs, fitting, workers } => {
                write!(f, "needs {needs} workers, {fitting} of the {workers} fit")
            }
            Unfit::OverQueueMax { needs, max } => write!(f, "needs {needs} workers, the queue allows at most {max}"),
            Unfit::Short { shortfalls, holder } => f.write_str(&no_variant_fits(shortfalls, holder.words())),
            Unfit::LongerThanQueue { request_s, time_limit_s } => write!(
                f,
                "its time_request ({}) is longer than the queue's time_limit ({})",
                exact(*request_s),
                exact(*time_limit_s)
            ),
            Unfit::LongerThanWorker { request_s, worker_limit_s, time_limit_s } => write!(
                f,
                "its time_request ({}) does not fit in the {} a worker of the queue gets (its time_limit of {} less a margin for starting and stopping; a task must end before its worker)",
                exact(*request_s),
                exact(*worker_limit_s),
                exact(*time_limit_s)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Amount;

    #[test]
    fn reasons_are_worded_for_people() {
        let cpus = Shortfall::Cpus { needs: Amount::whole(4), largest: Amount::whole(2) };
        let short = |holder| Unfit::Short { shortfalls: vec![cpus.clone()], holder }.to_string();
        assert_eq!(short(Holder::Largest), "needs 4 cpus, the largest worker has 2");
        assert_eq!(short(Holder::Queue), "needs 4 cpus, the queue's workers have 2");
        let nodes = |fitting| Unfit::TooFewWorkers { needs: 3, fitting, workers: 2 }.to_string();
        assert_eq!(
            (nodes(2).as_str(), nodes(1).as_str()),
            ("needs 3 workers, there are 2", "needs 3 workers, 1 of the 2 fit")
        );
        let long = Unfit::LongerThanQueue { request_s: 7200, time_limit_s: 3600 };
        assert_eq!(long.to_string(), "its time_request (2h) is longer than the queue's time_limit (1h)");
        assert_eq!(Unfit::OverQueueMax { needs: 4, max: 2 }.to_string(), "needs 4 workers, the queue allows at most 2");
    }
}
