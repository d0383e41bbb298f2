//! [`Draft`]: one task compiled on its own (templates, domain, resources,
//! numbers), before dependencies are known, and what the later passes ask
//! of the drafts of a workflow: where a group's instances live and how an
//! instance is named.

use std::sync::Arc;

use super::output_index::Producer;
use crate::ir::{Domain, Group};
use crate::spec::Sp;
use crate::template::GroupScope;

/// A group being compiled.
pub struct Draft {
    /// The group as it will appear in the IR (`domain` may still be a `for_each` placeholder).
    pub group: Group,
    /// What all instances share in their template context.
    pub scope: Arc<GroupScope>,
    /// Index of the resolved task named by `for_each`, until resolved.
    pub for_each: Option<Sp<String>>,
    /// The tasks that write the file a deferred expansion reads.
    pub waits_for: Vec<usize>,
}

/// The domain holding a group's instances, following `for_each`.
pub fn base_domain(drafts: &[Option<Draft>], g: usize) -> &Domain {
    let mut d = drafts[g].as_ref().map_or(&Domain::Single, |d| &d.group.domain);
    while let Domain::Same { group } = d {
        match drafts.get(group.index()).and_then(Option::as_ref) {
            Some(target) => d = &target.group.domain,
            None => break,
        }
    }
    d
}

/// Whether group `g`'s instances are known only at run time: deferred, or
/// nested (a part per instance of its parent).
pub fn is_deferred(drafts: &[Option<Draft>], g: usize) -> bool {
    matches!(base_domain(drafts, g), Domain::Deferred { .. } | Domain::Nested { .. })
}

/// `name` or `name[i]` for an instance, as users select it.
pub fn instance_name(drafts: &[Option<Draft>], (g, i): Producer) -> String {
    match drafts[g as usize].as_ref() {
        Some(d) if d.group.count > 1 || !matches!(d.group.domain, Domain::Single) => {
            format!("`{}[{}]`", d.group.name, base_domain(drafts, g as usize).index(i))
        }
        Some(d) => format!("`{}`", d.group.name),
        None => "another task".to_owned(),
    }
}
