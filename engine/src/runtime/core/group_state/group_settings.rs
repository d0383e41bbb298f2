//! [`GroupSettings`]: what a group is given when its state is built, and keeps
//! unchanged for the run.

use crate::ir::{BackOff, Group, MaxFails};
use crate::resources::Request;

/// One group's fixed settings, read through [`super::GroupState::settings`].
#[derive(Debug, Clone)]
pub(in crate::runtime::core) struct GroupSettings {
    /// Resource variants, in order of preference.
    pub(in crate::runtime::core) variants: Vec<Request>,
    /// The variants of attempt 1, 2, … when they grow with the attempt
    /// ([`crate::ir::Group::retry_variants`]); empty otherwise.
    pub(super) retry_variants: Vec<Vec<Request>>,
    /// Whole workers per instance.
    pub(in crate::runtime::core) nodes: u32,
    /// Reruns of a failed instance.
    pub(in crate::runtime::core) retries: u32,
    /// Lost workers that fail an instance.
    pub(in crate::runtime::core) crash_limit: u32,
    /// The wait before each retry, if any.
    pub(in crate::runtime::core) retry_delay: Option<BackOff>,
    /// Failures of its instances that cancel those not started yet.
    pub(in crate::runtime::core) max_fails: Option<MaxFails>,
    /// A failed instance counts as ended: its dependents run.
    pub(in crate::runtime::core) continue_on_failure: bool,
}

impl GroupSettings {
    /// The settings of `group`, with its variants resolved to requests.
    pub(super) fn new(group: &Group, variants: Vec<Request>, retry_variants: Vec<Vec<Request>>) -> Self {
        Self {
            variants,
            retry_variants,
            nodes: group.nodes,
            retries: group.retries,
            crash_limit: group.crash_limit,
            retry_delay: group.retry_delay,
            max_fails: group.max_fails,
            continue_on_failure: group.continue_on_failure,
        }
    }

    /// Whether the variants grow with the attempt.
    #[inline]
    pub(in crate::runtime::core) fn grows_with_attempt(&self) -> bool {
        !self.retry_variants.is_empty()
    }

    /// The variants of attempt `attempt` (0 first).
    pub(in crate::runtime::core) fn requests(&self, attempt: u32) -> &[Request] {
        match attempt.checked_sub(1) {
            Some(k) if !self.retry_variants.is_empty() => {
                &self.retry_variants[(k as usize).min(self.retry_variants.len() - 1)]
            }
            _ => &self.variants,
        }
    }
}
