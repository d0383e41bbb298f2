//! [`GroupState`]: the run-time state of one group — one byte per instance,
//! and its ready instances as a cursor over `0..count` plus a small queue.
//!
//! A group without per-instance dependencies never lists its instances: the
//! ready ones are "everything from the cursor on", and only retried or lost
//! instances go to the queue. A group with per-instance dependencies queues
//! an instance when its last dependency succeeds.

mod group_settings;
mod part_state;
mod whole;

use std::collections::VecDeque;

use crate::ir::Group;
use crate::resources::Request;

use group_settings::GroupSettings;
pub(super) use part_state::PartState;

/// Where one instance is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Instance {
    /// Not started yet: waiting for dependencies, or ready.
    Pending,
    /// Ready, and being compared with an earlier run's result before a
    /// worker is sought ([`GroupState::enable_precheck`]).
    Checking,
    /// Ready, compared, and changed: waiting for a worker.
    Checked,
    /// Started and not finished.
    Running,
    /// Failed, and waiting for its time to run again (`retry_delay`):
    /// pending, but not ready.
    Delayed,
    /// Succeeded (or done in an earlier run).
    Succeeded,
    /// Failed for good.
    Failed,
    /// Will not run.
    Cancelled,
    /// Left out by its `when`, or by what it waits for being left out.
    Skipped,
}

/// One group's instances and counters.
#[derive(Debug, Clone)]
pub(super) struct GroupState {
    /// Number of instances.
    count: u64,
    /// What it was given when built.
    settings: GroupSettings,
    /// Failed instances whose failure is ignored (`continue_on_failure`).
    ignored: u64,
    /// `All` sources not yet fully succeeded: instances are ready only at 0.
    blocked_by: u32,
    /// Whole group cancelled by a failure upstream of an `All` edge.
    doomed: bool,
    /// Whether what waits for this group to end, however, was released
    /// ([`super::Core::ended`]); true from the start when nothing waits so.
    settled: bool,
    /// Its instances are not known yet ([`crate::ir::Domain::Deferred`]):
    /// it counts as one pending placeholder until resolved or ended.
    deferred: bool,
    /// For a nested group (and its mirrors): where the part of each parent
    /// instance is. Empty otherwise.
    parts: Vec<PartState>,
    /// Parts neither known nor cancelled: each counts as one pending placeholder.
    parts_left: u64,
    /// For a nested group: the groups that share its instances (itself and
    /// its mirrors), which gain and lose parts together.
    members: Vec<usize>,
    /// Instances wait for per-instance dependencies (counted in `remaining`).
    counted: bool,
    /// Ready instances are first compared with an earlier run
    /// ([`super::Core::take_unchecked`]); only changed ones go to workers.
    precheck: bool,
    /// Compared and changed instances waiting for a worker; may hold stale entries.
    checked: VecDeque<u64>,
    /// How many instances are `Checked`.
    checked_ready: u64,
    /// How many of its instances may wait in line behind each running one
    /// on a prefetch worker: 0 until it is known to be short.
    line: u8,
    /// Counters by state.
    pending: u64,
    succeeded: u64,
    failed: u64,
    cancelled: u64,
    /// Instances skipped.
    skipped: u64,
    /// Instances that reached a final state (succeeded, failed, cancelled, skipped).
    terminal: u64,
    /// Parts, and the placeholder of a group known only at run time,
    /// never known because what they wait for was skipped.
    skipped_parts: u64,
    states: Vec<Instance>,
    /// Unfinished per-instance dependencies of each instance (empty when
    /// the group has none).
    remaining: Vec<u32>,
    /// Pending instances from here on are ready (groups without
    /// per-instance dependencies; `count` otherwise).
    cursor: u64,
    /// Ready instances outside the cursor range (released by dependencies,
    /// retried, or lost with a worker), taken first; may hold stale entries.
    queue: VecDeque<u64>,
    /// Pending instances whose per-instance dependencies are done.
    queued: u64,
}

impl GroupState {
    /// The state of `group` before anything ran.
    pub(super) fn new(
        group: &Group,
        variants: Vec<Request>,
        retry_variants: Vec<Vec<Request>>,
        remaining: Vec<u32>,
        blocked_by: u32,
        deferred: bool,
    ) -> Self {
        let count = if deferred { 0 } else { group.count };
        let counted = !remaining.is_empty();
        let (cursor, queue) = if !counted {
            (0, VecDeque::new())
        } else {
            (count, remaining.iter().enumerate().filter(|&(_, &r)| r == 0).map(|(i, _)| i as u64).collect())
        };
        let queued = if !counted { count } else { queue.len() as u64 };
        Self {
            count,
            settings: GroupSettings::new(group, variants, retry_variants),
            ignored: 0,
            blocked_by,
            doomed: false,
            settled: true,
            deferred,
            precheck: false,
            checked: VecDeque::new(),
            checked_ready: 0,
            line: 0,
            pending: count + u64::from(deferred),
            parts: Vec::new(),
            parts_left: 0,
            members: Vec::new(),
            counted,
            succeeded: 0,
            failed: 0,
            cancelled: 0,
            skipped: 0,
            terminal: 0,
            skipped_parts: 0,
            states: vec![Instance::Pending; count as usize],
            remaining,
            cursor,
            queue,
            queued,
        }
    }

    /// The state of this deferred group once `group` holds its instances
    /// (each waiting for its count in `remaining`): built afresh, keeping
    /// its settings, the `All` sources it still waits for, and what was
    /// said of it before (its line, its precheck, whether something waits
    /// for it to end).
    pub(super) fn resolved(&self, group: &Group, remaining: Vec<u32>) -> Self {
        let GroupSettings { variants, retry_variants, .. } = &self.settings;
        let mut state = Self::new(group, variants.clone(), retry_variants.clone(), remaining, self.blocked_by, false);
        state.line = self.line;
        state.precheck = self.precheck;
        state.settled = self.settled;
        state
    }

    /// What the group was given when built.
    #[inline]
    pub(super) fn settings(&self) -> &GroupSettings {
        &self.settings
    }

    /// Number of instances (0 while they are not known).
    #[inline]
    pub(super) fn count(&self) -> u64 {
        self.count
    }

    /// Instances and placeholders not ended and not running.
    #[inline]
    pub(super) fn pending(&self) -> u64 {
        self.pending
    }

    /// Pending instances that are known: not the placeholder of a group
    /// known only at run time, nor parts of a nested group.
    pub(super) fn known_pending(&self) -> u64 {
        self.pending - u64::from(self.deferred) - self.parts_left
    }

    /// Instances that succeeded.
    #[inline]
    pub(super) fn succeeded(&self) -> u64 {
        self.succeeded
    }

    /// Instances and parts cancelled.
    #[inline]
    pub(super) fn cancelled(&self) -> u64 {
        self.cancelled
    }

    /// Instances skipped.
    #[inline]
    pub(super) fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Whether its instances are not known yet ([`crate::ir::Domain::Deferred`]).
    #[inline]
    pub(super) fn is_deferred(&self) -> bool {
        self.deferred
    }

    /// The instance [`GroupState::take`] would take next, if any.
    pub(super) fn peek(&mut self) -> Option<u64> {
        if !self.is_active() {
            return None;
        }
        if self.precheck {
            while let Some(&i) = self.checked.front() {
                if self.states[i as usize] == Instance::Checked {
                    return Some(i);
                }
                self.checked.pop_front();
            }
            return None;
        }
        while let Some(&i) = self.queue.front() {
            if self.states[i as usize] == Instance::Pending {
                return Some(i);
            }
            self.queue.pop_front();
        }
        (self.cursor..self.count).find(|&i| self.states[i as usize] == Instance::Pending)
    }

    /// Whether the group has an instance ready to start on a worker.
    pub(super) fn is_active(&self) -> bool {
        self.blocked_by == 0 && if self.precheck { self.checked_ready > 0 } else { self.queued > 0 }
    }

    /// Whether the group has ready instances to compare with an earlier run.
    fn is_checkable(&self) -> bool {
        self.precheck && self.blocked_by == 0 && self.queued > 0
    }

    /// Ready instances (queued, and not blocked by an `All` source).
    pub(super) fn ready(&self) -> u64 {
        if self.blocked_by == 0 { self.queued + self.checked_ready } else { 0 }
    }

    /// Whether every instance succeeded, was skipped, or failed with its
    /// failure ignored.
    pub(super) fn is_complete(&self) -> bool {
        !self.deferred && self.parts_left == 0 && self.succeeded + self.ignored + self.skipped == self.count
    }

    /// Whether every instance and part of the group ended, however: its
    /// instances are known and none is waiting or running.
    fn is_ended(&self) -> bool {
        !self.deferred && self.parts_left == 0 && self.terminal == self.count
    }

    /// Whether the group is complete and nothing of it ran: every instance
    /// and part it had was skipped.
    pub(super) fn is_all_skipped(&self) -> bool {
        self.skipped + self.skipped_parts > 0 && self.succeeded + self.ignored == 0 && self.is_complete()
    }

    /// Adds `n` pending instances at the end, each waiting for `deps`
    /// per-instance dependencies.
    pub(super) fn add_instances(&mut self, n: u64, deps: u32) {
        self.states.extend(std::iter::repeat_n(Instance::Pending, n as usize));
        self.count += n;
        self.pending += n;
        if deps > 0 {
            self.counted = true;
            self.remaining.resize(self.count as usize, deps);
            self.cursor = self.count;
        } else if self.counted {
            self.remaining.resize(self.count as usize, 0);
            self.queue.extend(self.count - n..self.count);
            self.queued += n;
        } else {
            self.queued += n;
        }
    }

    /// Ends the placeholder of a group whose instances were never known
    /// (cancelled, or its expansion file could not be read); false if it
    /// has none.
    pub(super) fn end_deferred(&mut self, state: Instance) -> bool {
        if !self.deferred {
            return false;
        }
        self.deferred = false;
        self.pending -= 1;
        match state {
            Instance::Skipped => self.skipped_parts += 1,
            _ => self.count_state(state),
        }
        true
    }

    /// Where instance `i` is (`Cancelled` for ids out of range).
    pub(super) fn state(&self, i: u64) -> Instance {
        self.states.get(i as usize).copied().unwrap_or(Instance::Cancelled)
    }

    fn is_queued(&self, i: u64) -> bool {
        self.state(i) == Instance::Pending && self.remaining.get(i as usize).is_none_or(|&r| r == 0)
    }

    /// Takes the next ready instance and marks it running.
    pub(super) fn take(&mut self) -> Option<u64> {
        if !self.is_active() {
            return None;
        }
        let i = if self.precheck {
            loop {
                let i = self.checked.pop_front()?;
                if self.states[i as usize] == Instance::Checked {
                    self.checked_ready -= 1;
                    break i;
                }
            }
        } else {
            self.next_fresh()?
        };
        self.states[i as usize] = Instance::Running;
        self.pending -= 1;
        Some(i)
    }

    /// Takes the next ready instance to compare with an earlier run.
    pub(super) fn take_unchecked(&mut self) -> Option<u64> {
        if !self.is_checkable() {
            return None;
        }
        let i = self.next_fresh()?;
        self.states[i as usize] = Instance::Checking;
        Some(i)
    }

    /// Instance `i` was compared: unchanged, it succeeded; changed, it
    /// waits for a worker. False if it is no longer being compared.
    pub(super) fn checked(&mut self, i: u64, unchanged: bool) -> bool {
        if self.state(i) != Instance::Checking {
            return false;
        }
        if unchanged {
            self.states[i as usize] = Instance::Succeeded;
            self.pending -= 1;
            self.count_end(Instance::Succeeded);
        } else {
            self.mark_checked(i);
        }
        true
    }

    fn mark_checked(&mut self, i: u64) {
        self.states[i as usize] = Instance::Checked;
        self.checked.push_back(i);
        self.checked_ready += 1;
    }

    /// The next ready instance from the cursor or the queue, taken out of them.
    fn next_fresh(&mut self) -> Option<u64> {
        if self.blocked_by != 0 || self.queued == 0 {
            return None;
        }
        let i = loop {
            if let Some(i) = self.queue.pop_front() {
                if self.states[i as usize] == Instance::Pending {
                    break i;
                }
            } else if self.cursor < self.count {
                self.cursor += 1;
                if self.states[self.cursor as usize - 1] == Instance::Pending {
                    break self.cursor - 1;
                }
            } else {
                return None;
            }
        };
        self.unqueue();
        Some(i)
    }

    /// One queued instance fewer; drops stale entries once none is left.
    fn unqueue(&mut self) {
        self.queued -= 1;
        if self.queued == 0 {
            self.queue.clear();
            self.cursor = self.count;
        }
    }

    /// Puts running instance `i` back to run again, after other queued
    /// instances but before the cursor range.
    pub(super) fn requeue(&mut self, i: u64) {
        debug_assert_eq!(self.state(i), Instance::Running);
        self.pending += 1;
        if self.precheck {
            // Started in this run: compared already, and perhaps half done.
            self.mark_checked(i);
            return;
        }
        self.states[i as usize] = Instance::Pending;
        self.queued += 1;
        self.queue.push_back(i);
    }

    /// Running instance `i` failed and waits to run again until [`GroupState::wake`].
    pub(super) fn delay(&mut self, i: u64) {
        debug_assert_eq!(self.state(i), Instance::Running);
        self.pending += 1;
        self.states[i as usize] = Instance::Delayed;
    }

    /// Pending instance `i` (not started in this run) waits until
    /// [`GroupState::wake`]; false if it is not pending.
    pub(super) fn delay_pending(&mut self, i: u64) -> bool {
        match self.state(i) {
            Instance::Pending if self.is_queued(i) => self.unqueue(),
            Instance::Pending => {}
            _ => return false,
        }
        self.states[i as usize] = Instance::Delayed;
        true
    }

    /// Delayed instance `i` runs after all: a worker carried it over from
    /// an earlier run ([`super::Core::adopt`]); false unless it is delayed.
    pub(super) fn adopt(&mut self, i: u64) -> bool {
        if self.state(i) != Instance::Delayed {
            return false;
        }
        self.states[i as usize] = Instance::Running;
        self.pending -= 1;
        true
    }

    /// Delayed instance `i` is due: it is ready once its dependencies are
    /// done (a prechecked group's retry is not compared again); false if it
    /// is no longer delayed (cancelled meanwhile).
    pub(super) fn wake(&mut self, i: u64) -> bool {
        if self.state(i) != Instance::Delayed {
            return false;
        }
        if self.precheck {
            self.mark_checked(i);
            return true;
        }
        self.states[i as usize] = Instance::Pending;
        if self.remaining.get(i as usize).is_none_or(|&r| r == 0) {
            self.queued += 1;
            self.queue.push_back(i);
        }
        true
    }

    /// One per-instance dependency of instance `i` succeeded.
    pub(super) fn release(&mut self, i: u64) {
        let Some(r) = self.remaining.get_mut(i as usize) else { return };
        *r = r.saturating_sub(1);
        if *r == 0 && self.states[i as usize] == Instance::Pending {
            self.queued += 1;
            self.queue.push_back(i);
        }
    }

    /// Running instance `i` failed for good; true if its failure is
    /// ignored (`continue_on_failure`).
    pub(super) fn finish_failed(&mut self, i: u64) -> bool {
        self.finish(i, Instance::Failed);
        let ignored = self.settings.continue_on_failure;
        if ignored {
            self.ignored += 1;
        }
        ignored
    }

    /// Running instance `i` ended in `state` (succeeded, failed, cancelled).
    pub(super) fn finish(&mut self, i: u64, state: Instance) {
        debug_assert_eq!(self.state(i), Instance::Running);
        self.states[i as usize] = state;
        self.count_end(state);
    }

    /// An instance reached final `state`.
    fn count_end(&mut self, state: Instance) {
        self.terminal += 1;
        self.count_state(state);
    }

    fn count_state(&mut self, state: Instance) {
        match state {
            Instance::Succeeded => self.succeeded += 1,
            Instance::Failed => self.failed += 1,
            Instance::Cancelled => self.cancelled += 1,
            Instance::Skipped => self.skipped += 1,
            Instance::Pending | Instance::Checking | Instance::Checked | Instance::Running | Instance::Delayed => {}
        }
    }

    /// Ends pending instance `i` without running it (cancelled, or done in
    /// an earlier run); returns false if it was not pending.
    pub(super) fn end_pending(&mut self, i: u64, state: Instance) -> bool {
        match self.state(i) {
            Instance::Pending if self.is_queued(i) => self.unqueue(),
            Instance::Pending | Instance::Checking | Instance::Delayed => {}
            Instance::Checked => self.checked_ready -= 1,
            _ => return false,
        }
        self.states[i as usize] = state;
        self.pending -= 1;
        self.count_end(state);
        true
    }

    /// Bytes held per instance, for the memory test.
    #[cfg(test)]
    pub(super) fn heap_bytes(&self) -> usize {
        self.states.capacity() + self.remaining.capacity() * 4 + self.queue.capacity() * 8
    }
}

#[cfg(test)]
mod tests;
