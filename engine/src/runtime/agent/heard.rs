//! [`Heard`]: when a remote worker last heard its coordinator. Each time
//! it does, the worker's guard gets a lease of [`HEARTBEAT_TIMEOUT`]; a
//! worker that has not heard it for that long is fenced: it stops its
//! tasks (or, if it is paused, the guard does as the lease runs out).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::guard::Guard;
use crate::runtime::protocol::messages::HEARTBEAT_TIMEOUT;

/// When the worker last heard its coordinator, which renews the guard's
/// lease (at most once a second).
pub(super) struct Heard {
    at: Instant,
    leased: Option<Instant>,
    guard: Option<Arc<Guard>>,
}

impl Heard {
    pub(super) fn new(guard: Option<Arc<Guard>>) -> Self {
        let mut heard = Heard { at: Instant::now(), leased: None, guard };
        heard.now();
        heard
    }

    /// The coordinator was heard just now.
    pub(super) fn now(&mut self) {
        self.at = Instant::now();
        if self.leased.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
            self.leased = Some(self.at);
            if let Some(guard) = &self.guard {
                guard.lease(HEARTBEAT_TIMEOUT);
            }
        }
    }

    /// Whether the coordinator was last heard [`HEARTBEAT_TIMEOUT`] ago or more.
    pub(super) fn is_stale(&self) -> bool {
        self.at.elapsed() >= HEARTBEAT_TIMEOUT
    }

    /// The tasks run on without a coordinator: the guard's lease is taken away.
    pub(super) fn keep_tasks(&mut self) {
        self.leased = None;
        if let Some(guard) = &self.guard {
            guard.lease(Duration::ZERO);
        }
    }
}
