//! Looking an instance up in the cache, the one rule `flow run` (before
//! dispatch, in `cache_checks.rs`) and `flow plan --why`
//! (in `preview.rs`) both apply: an instance is unchanged when an
//! earlier success of its task did the same work — the same fingerprint,
//! with the instance rendered in the variant that success ran in — and
//! every declared output is still as that success left it.
//!
//! The lookup is by fingerprint, not by position, so an instance that moved
//! in its list (a line inserted above it) finds the success it had before
//! when its outputs are named by its item.

use std::collections::HashSet;
use std::path::PathBuf;

use super::resume::Previous;
use crate::ir::TaskId;
use crate::log::{StampCheck, Wrote};
use crate::runtime::coordinator::dispatch::job_factory::JobFactory;
use crate::runtime::core::Allocation;
use crate::runtime::protocol::fingerprint::{Fingerprint, input_digest, with_inputs};
use crate::runtime::protocol::job::{Job, relative};

/// What the cache has for an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// An earlier success did the same work and left its outputs as they are.
    Unchanged {
        /// The fingerprint of that work.
        fingerprint: Fingerprint,
        /// What it left, stamped afresh where a file was only touched.
        wrote: Wrote,
    },
    /// An earlier success did the same work, but this output is gone.
    OutputMissing(String),
    /// An earlier success did the same work, but this output has other bytes now.
    OutputChanged(String),
    /// No earlier success did this work.
    Differs,
}

/// `task` rendered in each variant, as each attempt, an earlier success
/// of its task ran in, its own last one first; empty when it must run
/// whatever it finds.
pub(crate) fn candidates(factory: &JobFactory, previous: &Previous, task: TaskId) -> Vec<Job> {
    let label = factory.label(task);
    previous
        .renderings_to_try(task, &label)
        .into_iter()
        .filter_map(|r| {
            let alloc = Allocation { variant: r.variant as usize, ..Allocation::default() };
            factory.job(task, r.attempt, &alloc).ok()
        })
        .collect()
}

/// Compares `jobs` (from [`candidates`]) with the earlier successes of
/// task `name`, as if the files in `hidden` were gone. Reads files: call it
/// off the event loop when they have inputs.
pub(crate) fn lookup(jobs: &[Job], previous: &Previous, name: &str, hidden: &HashSet<PathBuf>) -> Lookup {
    let mut digests: Vec<(&Job, Fingerprint)> = Vec::new();
    let mut broken = None;
    for job in jobs {
        let same = |(j, _): &&(&Job, Fingerprint)| {
            j.inputs == job.inputs && j.implicit == job.implicit && j.stdin == job.stdin && j.outputs == job.outputs
        };
        let digest = match digests.iter().find(same) {
            Some((_, digest)) => *digest,
            None => {
                let digest = input_digest(job, hidden);
                digests.push((job, digest));
                digest
            }
        };
        let fingerprint = with_inputs(&job.definition, &digest);
        let Some(wrote) = previous.success(name, &fingerprint) else { continue };
        match verify(job, wrote) {
            Ok(wrote) => return Lookup::Unchanged { fingerprint, wrote },
            Err(why) => {
                broken.get_or_insert(why);
            }
        }
    }
    broken.unwrap_or(Lookup::Differs)
}

/// `wrote` with fresh stamps if every declared output of `job` is as it
/// left it; otherwise the first that is not.
fn verify(job: &Job, wrote: &Wrote) -> Result<Wrote, Lookup> {
    let mut fresh = wrote.clone();
    for file in &job.outputs {
        let shown = relative(file, &job.base_dir).to_string_lossy().into_owned();
        let stamp = fresh.outputs.as_mut().and_then(|stamps| stamps.iter_mut().find(|s| s.path == shown));
        let Some(stamp) = stamp else {
            // Recorded before outputs were stamped: it must exist.
            if !file.exists() {
                return Err(Lookup::OutputMissing(shown));
            }
            continue;
        };
        match stamp.check(file) {
            StampCheck::Same => {}
            StampCheck::Restamped(new) => *stamp = new,
            StampCheck::Changed => return Err(Lookup::OutputChanged(shown)),
            StampCheck::Missing => return Err(Lookup::OutputMissing(shown)),
        }
    }
    Ok(fresh)
}
