//! [`Edge`]: a dependency between two groups and how their instances connect.

use serde::{Deserialize, Serialize};

use super::GroupId;

/// `to` instances wait for `from` instances, connected as `kind` says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    /// The group that runs first.
    pub from: GroupId,
    /// The group that waits.
    pub to: GroupId,
    /// Which instances wait for which.
    pub kind: EdgeKind,
    /// Whether the edge was written in `after` or inferred from files.
    pub origin: EdgeOrigin,
    /// Which outcome of the `from` instances lets the `to` instances run.
    #[serde(default, skip_serializing_if = "EdgeOn::is_success")]
    pub on: EdgeOn,
}

/// The outcome of the instances an edge waits for that lets the waiting
/// instances run (`after = [{ task = "dock", on = "failure" }]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeOn {
    /// They succeeded, were skipped, or failed with the failure ignored; a
    /// failure or cancellation cancels the waiting instances.
    #[default]
    Success,
    /// They ended, and one of them failed or was cancelled; otherwise the
    /// waiting instance is skipped.
    Failure,
    /// They ended, whatever the outcome.
    Always,
}

impl EdgeOn {
    /// Whether this is the default, [`EdgeOn::Success`].
    pub fn is_success(&self) -> bool {
        *self == EdgeOn::Success
    }

    /// How `flow plan` and `flow graph` add it to an edge's kind:
    /// `", on failure"`, `", always"`, or nothing for the default.
    pub fn suffix(self) -> &'static str {
        match self {
            EdgeOn::Success => "",
            EdgeOn::Failure => ", on failure",
            EdgeOn::Always => ", always",
        }
    }
}

/// How instances of two groups connect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EdgeKind {
    /// Every `to` instance waits for every `from` instance.
    All,
    /// Instance `i` of `to` waits for instance `i` of `from`.
    ElementWise,
    /// Instance `i` of `to` waits for `from` instances
    /// `sources[offsets[i]..offsets[i + 1]]` (compressed sparse rows).
    Explicit {
        /// Row starts, one per `to` instance plus one.
        offsets: Vec<u64>,
        /// `from` instance positions.
        sources: Vec<u64>,
    },
}

impl EdgeKind {
    /// The `from` instances that instance `to` of the waiting group depends on,
    /// given the size of the `from` group. A row missing from an explicit
    /// edge is empty and positions past `from_count` are left out, so a
    /// hand-written graph cannot make this panic.
    pub fn sources(&self, to: u64, from_count: u64) -> Box<dyn Iterator<Item = u64> + '_> {
        match self {
            EdgeKind::All => Box::new(0..from_count),
            EdgeKind::ElementWise => Box::new(std::iter::once(to).filter(move |&i| i < from_count)),
            EdgeKind::Explicit { offsets, sources } => {
                let i = usize::try_from(to).unwrap_or(usize::MAX);
                let row = match (offsets.get(i), i.checked_add(1).and_then(|next| offsets.get(next))) {
                    (Some(&start), Some(&end)) => sources.get(start as usize..end as usize).unwrap_or_default(),
                    _ => &[],
                };
                Box::new(row.iter().copied().filter(move |&s| s < from_count))
            }
        }
    }
}

/// Where an edge came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeOrigin {
    /// Written in `after`.
    After,
    /// Inferred from `inputs` matching `outputs`.
    Files,
    /// The waiting group expands over a file the other writes
    /// ([`super::Domain::Deferred`]): its instances are known once it ran.
    Expansion,
}
