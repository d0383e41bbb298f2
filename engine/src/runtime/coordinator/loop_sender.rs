//! [`LoopSender`]: how a part that works off the driver's thread (the hashing
//! threads, the manager's commands, the listener) tells the run loop what
//! it found, without knowing the loop's own event type — so the parts do
//! not import the driver and the driver imports them.

use std::sync::Arc;

/// Sends a `T` to the run loop; cheap to clone.
pub(super) struct LoopSender<T>(Arc<dyn Fn(T) -> bool + Send + Sync>);

impl<T> LoopSender<T> {
    /// Sends with `send`, which says whether the loop still listens.
    pub(super) fn new(send: impl Fn(T) -> bool + Send + Sync + 'static) -> Self {
        Self(Arc::new(send))
    }

    /// Tells the loop `message`; false once the loop is gone.
    pub(super) fn send(&self, message: T) -> bool {
        (self.0)(message)
    }
}

impl<T> Clone for LoopSender<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}
