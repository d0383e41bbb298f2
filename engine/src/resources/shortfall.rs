//! [`Shortfall`]: what a resource request lacks on even the largest worker,
//! and how it is worded — the same for `flow check`, the scheduler's
//! unschedulable reasons, `flow explain` and an allocation queue's planner.

use std::fmt;
use std::ops::Range;

use schemars::JsonSchema;
use serde::Serialize;

use crate::ir::{Amount, KeySpans};
use crate::units::{BytesStyle, bytes};

/// What one resource variant lacks on even the largest worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "resource", rename_all = "snake_case")]
pub enum Shortfall {
    /// More CPUs than any worker has.
    Cpus {
        /// Requested.
        #[schemars(with = "f64")]
        needs: Amount,
        /// CPUs of the largest worker.
        #[schemars(with = "f64")]
        largest: Amount,
    },
    /// More GPUs than any worker has.
    Gpus {
        /// Requested.
        #[schemars(with = "f64")]
        needs: Amount,
        /// GPUs of the largest worker.
        #[schemars(with = "f64")]
        largest: Amount,
    },
    /// More memory than any worker has.
    Memory {
        /// Requested, in bytes.
        #[serde(rename = "needs_bytes")]
        needs: u64,
        /// Memory of the largest worker, in bytes.
        #[serde(rename = "largest_bytes")]
        largest: u64,
    },
    /// More of a custom resource than any worker has.
    Custom {
        /// The resource.
        name: String,
        /// Requested.
        #[schemars(with = "f64")]
        needs: Amount,
        /// The most any worker has.
        #[schemars(with = "f64")]
        largest: Amount,
    },
    /// Each resource fits some worker, but no worker has them all.
    Combination,
}

/// Whose resources a [`Shortfall`] is measured against, in the words
/// [`Shortfall::against`] takes: the largest of some workers.
pub const LARGEST: &str = "the largest worker has";

/// Whose resources a [`Shortfall`] is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// The largest of the workers there are ([`LARGEST`]).
    Largest,
    /// A worker of an allocation queue.
    Queue,
}

impl Holder {
    /// The words [`Shortfall::against`] takes for this holder.
    pub fn words(self) -> &'static str {
        match self {
            Holder::Largest => LARGEST,
            Holder::Queue => "the queue's workers have",
        }
    }
}

impl Shortfall {
    /// Where the key whose request is short is written, if `keys` knows:
    /// nowhere for [`Shortfall::Combination`], which no one key causes.
    pub fn key<'a>(&self, keys: &'a KeySpans) -> Option<&'a Range<usize>> {
        match self {
            Shortfall::Cpus { .. } => keys.cpus.as_ref(),
            Shortfall::Gpus { .. } => keys.gpus.as_ref(),
            Shortfall::Memory { .. } => keys.memory.as_ref(),
            Shortfall::Custom { name, .. } => keys.resources.get(name),
            Shortfall::Combination => None,
        }
    }

    /// "needs 8 cpus, {holder} 4", where `holder` says whose resources
    /// these are: [`LARGEST`], or "the queue's workers have".
    pub fn against(&self, holder: &str) -> String {
        match self {
            Shortfall::Cpus { needs, largest } => format!("needs {}, {holder} {largest}", units(*needs, "cpu")),
            Shortfall::Gpus { needs, largest } => format!("needs {}, {holder} {largest}", units(*needs, "gpu")),
            Shortfall::Memory { needs, largest } => {
                format!("needs {} of memory, {holder} {}", size(*needs), size(*largest))
            }
            Shortfall::Custom { name, needs, largest } => format!("needs {needs} `{name}`, {holder} {largest}"),
            Shortfall::Combination => "needs more than any one worker has of its resources together".to_owned(),
        }
    }
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.against(LARGEST))
    }
}

/// Why none of a task's variants fits, from each variant's shortfall: the
/// only variant's ("needs 8 cpus, the largest worker has 4"), or "no variant
/// fits: variant 1 needs …; variant 2 needs …".
pub fn no_variant_fits(shortfalls: &[Shortfall], holder: &str) -> String {
    if let [only] = shortfalls {
        return only.against(holder);
    }
    let each = shortfalls.iter().enumerate().map(|(v, s)| format!("variant {} {}", v + 1, s.against(holder)));
    format!("no variant fits: {}", each.collect::<Vec<_>>().join("; "))
}

/// `2 cpus`, `1 gpu`, `0.5 gpus`.
fn units(amount: Amount, unit: &str) -> String {
    let plural = if amount == Amount::whole(1) { "" } else { "s" };
    format!("{amount} {unit}{plural}")
}

/// A byte count as messages write it: `1.5 GiB`.
fn size(n: u64) -> String {
    bytes(n, BytesStyle::Trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_counts_read_naturally() {
        assert_eq!(units(Amount::whole(1), "gpu"), "1 gpu");
        assert_eq!(units(Amount(25_000), "gpu"), "2.5 gpus");
    }

    #[test]
    fn shortfalls_are_worded_for_people() {
        let cpus = Shortfall::Cpus { needs: Amount::whole(4), largest: Amount::whole(2) };
        assert_eq!(cpus.to_string(), "needs 4 cpus, the largest worker has 2");
        let gpus = Shortfall::Gpus { needs: Amount::whole(1), largest: Amount::ZERO };
        assert_eq!(gpus.to_string(), "needs 1 gpu, the largest worker has 0");
        assert_eq!(gpus.against("the queue's workers have"), "needs 1 gpu, the queue's workers have 0");
        let memory = Shortfall::Memory { needs: 3 << 29, largest: 1 << 30 };
        assert_eq!(memory.to_string(), "needs 1.5 GiB of memory, the largest worker has 1 GiB");
        let fpga = Shortfall::Custom { name: "fpga".into(), needs: Amount::whole(2), largest: Amount::ZERO };
        assert_eq!(fpga.to_string(), "needs 2 `fpga`, the largest worker has 0");
        assert_eq!(no_variant_fits(std::slice::from_ref(&cpus), LARGEST), "needs 4 cpus, the largest worker has 2");
        assert_eq!(
            no_variant_fits(&[cpus, gpus], LARGEST),
            "no variant fits: variant 1 needs 4 cpus, the largest worker has 2; \
             variant 2 needs 1 gpu, the largest worker has 0"
        );
    }
}
