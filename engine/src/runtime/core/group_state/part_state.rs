//! [`PartState`], and the methods that move the parts of a nested group
//! on: where the part of each parent instance is.

use super::GroupState;

/// Where the part of one parent instance of a nested group is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(in crate::runtime::core) enum PartState {
    /// The parent instance has not succeeded yet.
    Waiting,
    /// The parent instance succeeded: the file can be read once the
    /// group's `All` sources are done too.
    Ready,
    /// Handed to the driver to read ([`crate::runtime::core::Core::take_parts`]).
    Reading,
    /// Its instances are known.
    Known,
    /// Never known: the parent failed or was cancelled, or the run stopped.
    Cancelled,
    /// Its file could not be read.
    Failed,
    /// Never known: its parent instance was skipped.
    Skipped,
}

impl GroupState {
    /// Gives a nested group `parts` parts, each a pending placeholder.
    pub(in crate::runtime::core) fn expect_parts(&mut self, parts: u64) {
        self.parts = vec![PartState::Waiting; parts as usize];
        self.parts_left = parts;
        self.pending += parts;
    }

    /// How many parts the group has (one per parent instance; 0 unless nested).
    #[inline]
    pub(in crate::runtime::core) fn part_count(&self) -> u64 {
        self.parts.len() as u64
    }

    /// The groups that share this nested group's instances (itself and its
    /// mirrors), which gain and lose parts together; empty otherwise.
    #[inline]
    pub(in crate::runtime::core) fn members(&self) -> &[usize] {
        &self.members
    }

    /// Group `g` (this group or one of its mirrors) shares its parts.
    pub(in crate::runtime::core) fn add_member(&mut self, g: usize) {
        self.members.push(g);
    }

    /// Parent instance `outer` succeeded: its waiting part is ready to be
    /// read; false if it was not waiting.
    pub(in crate::runtime::core) fn parent_done(&mut self, outer: u64) -> bool {
        match self.parts.get_mut(outer as usize) {
            Some(part) if *part == PartState::Waiting => {
                *part = PartState::Ready;
                true
            }
            _ => false,
        }
    }

    /// Hands ready part `outer` over to be read; false if it is not ready.
    pub(in crate::runtime::core) fn read_part(&mut self, outer: u64) -> bool {
        let part = &mut self.parts[outer as usize];
        let take = *part == PartState::Ready;
        if take {
            *part = PartState::Reading;
        }
        take
    }

    /// The parent instances whose parts are ready to be read.
    pub(in crate::runtime::core) fn ready_parts(&self) -> impl Iterator<Item = u64> + '_ {
        self.parts.iter().enumerate().filter(|(_, p)| **p == PartState::Ready).map(|(outer, _)| outer as u64)
    }

    /// Part `outer` ends as `state` (known or cancelled); false if it had
    /// ended already.
    pub(in crate::runtime::core) fn end_part(&mut self, outer: u64, state: PartState) -> bool {
        match self.parts.get_mut(outer as usize) {
            Some(p)
                if !matches!(p, PartState::Known | PartState::Cancelled | PartState::Failed | PartState::Skipped) =>
            {
                *p = state
            }
            _ => return false,
        }
        self.parts_left -= 1;
        self.pending -= 1;
        match state {
            PartState::Cancelled => self.cancelled += 1,
            PartState::Failed => self.failed += 1,
            PartState::Skipped => self.skipped_parts += 1,
            _ => {}
        }
        true
    }
}
