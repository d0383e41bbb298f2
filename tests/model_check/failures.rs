//! The oracle's rules for failures, applied to what the commands of a
//! clean run logged: only `b` fails (its command decides, from what it
//! reads); what waits for all of `b` to succeed is cancelled unless `b`
//! has `continue_on_failure`; `h` runs with `on = "failure"` iff an
//! instance it waits for failed, with `on = "always"` whatever happened,
//! and is told which failed; the run exits 1 iff a failure is not ignored.

use std::collections::{BTreeMap, BTreeSet};

use super::harness::{Done, base_task};
use super::workflows::{Handler, Shape};

/// What the failures of a run make of it.
#[derive(Clone, Debug, Default)]
pub struct Fate {
    /// Tasks cancelled as a whole: they wait for all of `b` to succeed.
    pub cancelled: BTreeSet<&'static str>,
    /// Instances of `h` that run because something they wait for failed:
    /// never taken from an earlier run.
    pub reacting: BTreeSet<String>,
    /// The run's exit code.
    pub code: i32,
}

impl Fate {
    /// The fate of the clean run that logged `clean`; an error names an
    /// instance that ran or did not against these rules.
    pub fn of(shape: &Shape, clean: &[Done]) -> Result<Self, String> {
        let failed: BTreeSet<String> = clean.iter().filter(|d| d.failed).map(|d| d.label.clone()).collect();
        if let Some(other) = failed.iter().find(|l| base_task(l) != "b") {
            return Err(format!("{other} failed in the clean run, yet only `b` fails"));
        }
        let ignored = shape.fragile == Some(true);
        let tasks = shape.tasks();
        let cancelled: BTreeSet<&'static str> = if failed.is_empty() || ignored {
            BTreeSet::new()
        } else {
            tasks.iter().map(|(t, _)| *t).filter(|t| *t != "h" && upstream(&tasks, t).contains("b")).collect()
        };
        if let Some(ran) = clean.iter().find(|d| cancelled.contains(base_task(&d.label))) {
            return Err(format!("{} ran in the clean run, though {failed:?} failed before it", ran.label));
        }
        let code = i32::from(!failed.is_empty() && !ignored);
        let mut reacting = BTreeSet::new();
        if let Some(handler) = shape.handler {
            let expected = handled(handler, &ended(shape, clean), &failed);
            let got: BTreeMap<String, String> =
                clean.iter().filter(|d| base_task(&d.label) == "h").map(|d| (d.label.clone(), told(&d.key))).collect();
            if got != expected {
                return Err(format!(
                    "the handler ran as {got:?} (instance: what failed), the oracle says {expected:?}"
                ));
            }
            reacting = expected.into_iter().filter(|(_, f)| !f.is_empty()).map(|(l, _)| l).collect();
        }
        Ok(Self { cancelled, reacting, code })
    }
}

/// The instances of `b` that ended: those that ran and, with `skips`, those
/// its per-instance `when` skipped — one per instance of `a` — since a skip
/// releases an `on = "always"` edge as any end does.
fn ended(shape: &Shape, clean: &[Done]) -> BTreeSet<String> {
    // `gated` (a `when` over the whole of `b`) takes the place of `skips`.
    let task = if shape.skips && !shape.gated { "a" } else { "b" };
    clean.iter().filter(|d| base_task(&d.label) == task).map(|d| d.label.replacen('a', "b", 1)).collect()
}

/// The instances of `h` that run, each with the failures it is told of
/// (sorted, space-separated).
fn handled(handler: Handler, ended: &BTreeSet<String>, failed: &BTreeSet<String>) -> BTreeMap<String, String> {
    let ended: BTreeSet<&str> = ended.iter().map(String::as_str).collect();
    let runs = |failures: &[&str]| handler.always || !failures.is_empty();
    if handler.each {
        ended
            .into_iter()
            .map(|b| (b, if failed.contains(b) { vec![b] } else { vec![] }))
            .filter(|(_, f)| runs(f))
            .map(|(b, f)| (b.replacen('b', "h", 1), f.join(" ")))
            .collect()
    } else {
        let f: Vec<&str> = failed.iter().map(String::as_str).collect();
        if ended.is_empty() || !runs(&f) { BTreeMap::new() } else { BTreeMap::from([("h[0]".to_owned(), f.join(" "))]) }
    }
}

/// What `h` logged it was told failed (`FLOW_FAILED_TASKS`), sorted.
fn told(key: &str) -> String {
    let list = key.rsplit_once("failed=").map_or("", |(_, f)| f);
    let mut names: Vec<&str> = list.split_whitespace().collect();
    names.sort_unstable();
    names.join(" ")
}

/// The tasks `task` reads from, directly or not.
pub fn upstream(tasks: &[(&'static str, Vec<&'static str>)], task: &str) -> BTreeSet<&'static str> {
    let mut found = BTreeSet::new();
    let mut todo = vec![task.to_owned()];
    while let Some(t) = todo.pop() {
        for (name, reads) in tasks {
            if *name == t {
                for r in reads {
                    if found.insert(*r) {
                        todo.push((*r).to_owned());
                    }
                }
            }
        }
    }
    found
}
