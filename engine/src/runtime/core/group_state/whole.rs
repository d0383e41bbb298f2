//! What concerns a group as a whole: the `All` sources it waits for,
//! its cancellation as one, what waits for it to end, its own
//! `max_fails`, its precheck and its line.

use super::GroupState;

impl GroupState {
    /// Whether some `All` source is not yet fully succeeded.
    #[inline]
    pub(in crate::runtime::core) fn is_blocked(&self) -> bool {
        self.blocked_by != 0
    }

    /// One `All` source is complete; true if it was the last.
    pub(in crate::runtime::core) fn source_done(&mut self) -> bool {
        self.blocked_by -= 1;
        self.blocked_by == 0
    }

    /// Whether the group is cancelled as a whole.
    #[inline]
    pub(in crate::runtime::core) fn is_doomed(&self) -> bool {
        self.doomed
    }

    /// The group is cancelled as a whole; false if it was already.
    pub(in crate::runtime::core) fn doom(&mut self) -> bool {
        !std::mem::replace(&mut self.doomed, true)
    }

    /// Whether its failures reached its own `max_fails`.
    pub(in crate::runtime::core) fn reached_max_fails(&self) -> bool {
        self.settings.max_fails.is_some_and(|max| self.failed >= max.limit(self.count))
    }

    /// Something waits for the group to end, however: it is released once
    /// by [`GroupState::settle`].
    pub(in crate::runtime::core) fn wait_for_end(&mut self) {
        self.settled = false;
    }

    /// Whether what waits for the group to end, however, is to be released
    /// now: true once, when it has ended and something waits so.
    pub(in crate::runtime::core) fn settle(&mut self) -> bool {
        if self.settled || !self.is_ended() {
            return false;
        }
        self.settled = true;
        true
    }

    /// How many of its instances may wait in line behind each running one
    /// on a prefetch worker (0: none).
    #[inline]
    pub(in crate::runtime::core) fn line(&self) -> u8 {
        self.line
    }

    /// Sets [`GroupState::line`]; returns the one before.
    pub(in crate::runtime::core) fn set_line(&mut self, line: u8) -> u8 {
        std::mem::replace(&mut self.line, line)
    }

    /// Ready instances are first compared with an earlier run; false if
    /// they were already.
    pub(in crate::runtime::core) fn enable_precheck(&mut self) -> bool {
        !std::mem::replace(&mut self.precheck, true)
    }
}
