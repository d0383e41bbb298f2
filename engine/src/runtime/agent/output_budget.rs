//! [`OutputBudget`]: how much of its tasks' output a remote worker holds
//! in memory before it stops reading their pipes. Output is counted from
//! the moment a task's pipe is read until the coordinator has it; while the
//! count is at the limit (the connection is slow, or down while the worker
//! tries to rejoin), the readers wait and the tasks block on their next
//! write — nothing is dropped — until what is held drains.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

/// The default limit: 256 MiB.
pub const DEFAULT_OUTPUT_BUFFER: u64 = 256 << 20;

/// Output bytes held, and the limit.
#[derive(Debug)]
pub(crate) struct OutputBudget {
    limit: usize,
    held: AtomicUsize,
    freed: Notify,
    /// The worker is leaving: nobody waits any more.
    open: AtomicBool,
}

impl OutputBudget {
    /// A budget of `limit` bytes (at least one read is always let through).
    pub(crate) fn new(limit: u64) -> Self {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        Self { limit, held: AtomicUsize::new(0), freed: Notify::new(), open: AtomicBool::new(true) }
    }

    /// Counts `bytes` just read, first waiting while the limit is reached:
    /// one read may pass it, so a chunk larger than the limit still goes.
    pub(crate) async fn take(&self, bytes: usize) {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.held.load(Ordering::Acquire) < self.limit || !self.open.load(Ordering::Acquire) {
                self.held.fetch_add(bytes, Ordering::AcqRel);
                return;
            }
            freed.await;
        }
    }

    /// Counts `bytes` held again without waiting (output delivered once and
    /// kept, to be sent again after the connection dropped).
    pub(crate) fn add(&self, bytes: usize) {
        self.held.fetch_add(bytes, Ordering::AcqRel);
    }

    /// `bytes` are no longer held: the coordinator has them, or they were dropped.
    pub(crate) fn give(&self, bytes: usize) {
        if bytes == 0 {
            return;
        }
        let _ = self.held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| Some(h.saturating_sub(bytes)));
        self.freed.notify_waiters();
    }

    /// Bytes held now.
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    /// The limit.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// The worker leaves: readers no longer wait (their tasks are being stopped).
    pub(crate) fn close(&self) {
        self.open.store(false, Ordering::Release);
        self.freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_reader_waits_at_the_limit_until_output_drains() {
        let budget = Arc::new(OutputBudget::new(100));
        budget.take(60).await;
        budget.take(60).await;
        assert_eq!(budget.held(), 120, "one read may pass the limit");
        let waiting = tokio::spawn({
            let budget = budget.clone();
            async move { budget.take(10).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "the reader waits");
        budget.give(60);
        tokio::time::timeout(Duration::from_secs(1), waiting).await.expect("let through").expect("joined");
        assert_eq!(budget.held(), 70);
        budget.add(100);
        let closed = tokio::spawn({
            let budget = budget.clone();
            async move { budget.take(1).await }
        });
        budget.close();
        tokio::time::timeout(Duration::from_secs(1), closed).await.expect("let through").expect("joined");
    }
}
