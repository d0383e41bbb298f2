//! What a run would do, and why (`flow plan --why`): every instance is
//! compared with the earlier runs exactly as `flow run` compares it before
//! dispatch — the same fingerprints, the same rules ([`Previous`]) — without
//! running anything.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use super::dispatch::images::check_images;
use super::dispatch::job_factory::JobFactory;
use super::dispatch::upstream_failures::failure_names;
use super::earlier::cache_lookup::{Lookup, candidates, lookup};
use super::earlier::resume::{Previous, Rendering, Standing};
use super::earlier::stale::StaleOutputs;
use crate::expansion;
use crate::ir::{Domain, Graph, GroupId, TaskId};
use crate::rundir::{RunDir, STATE_DIR};
use crate::runtime::core::Allocation;
use crate::runtime::event::MoveReason;
use crate::runtime::protocol::job::{Job, relative};
use crate::scripts::{self, Untracked};
use foreseen_skips::ForeseenSkips;
use job_difference::why_differs;

mod foreseen_skips;
mod job_difference;
mod why;

pub use why::Why;

/// One task's part of the plan.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct TaskPreview {
    /// The task's name.
    pub task: String,
    /// Its instances; `None` for a task whose instances are known only at run time.
    pub instances: Option<u64>,
    /// How many would run.
    pub run: u64,
    /// How many would be skipped as unchanged.
    pub unchanged: u64,
    /// How many its per-instance `when` would skip (1 for a task known
    /// only at run time skipped as a whole: nothing it waits for runs).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: u64,
    /// Each reason, how many instances it applies to, and the first few of them.
    pub reasons: Vec<ReasonCount>,
    /// For a task known only at run time: the tasks whose end makes it
    /// known (none when it is skipped as a whole).
    pub known_after: Vec<String>,
    /// For a per-instance fan-out: the parts not known yet, whose producer
    /// instance runs first (`instances` counts the known ones).
    pub later_parts: u64,
    /// Scripts and programs its commands name that count as inputs (the first few).
    pub implicit_inputs: Vec<String>,
    /// How many outputs of its instances that no longer exist the run
    /// would move out of the way.
    pub stale_outputs: u64,
    /// The first few of them.
    pub stale_examples: Vec<String>,
    /// How many outputs earlier runs left for its instances that would be
    /// skipped the run would move out of the way.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_outputs: u64,
    /// The first few of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_examples: Vec<String>,
    /// Asked for: every instance that would run or be skipped, with its reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances_run: Vec<InstanceWhy>,
    /// When its commands name scripts flow cannot track (`sh $PWD/x.sh`, a
    /// file that is not there): a note naming them and how to track them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untracked_scripts: Option<String>,
    /// For a task dropped from the run (its `when` was false, or it needs
    /// a dropped task): why, in words. It has no instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<String>,
}

/// One instance that would run, and why.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InstanceWhy {
    /// `name[index]`.
    pub label: String,
    /// The reason.
    #[serde(flatten)]
    pub why: Why,
    /// The reason in words.
    pub text: String,
}

/// How many instances would run for one reason.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReasonCount {
    /// The reason.
    #[serde(flatten)]
    pub why: Why,
    /// The reason in words.
    pub text: String,
    /// How many instances.
    pub count: u64,
    /// The first few, as `name[index]`.
    pub examples: Vec<String>,
}

/// Instances named per reason, and implicit inputs listed per task.
const EXAMPLES: usize = 3;

/// What `flow run` would do with the instances of `graph` (compiled from
/// `workflow` in `base_dir`), and why, task by task; with `every`, each
/// instance that would run is named with its reason.
pub fn preview(graph: &Graph, base_dir: &Path, workflow: &Path, every: bool) -> Result<Vec<TaskPreview>, String> {
    let state = base_dir.join(STATE_DIR);
    let previous = Previous::load_with_reads(&state, workflow);
    // The images as a run would check them; one that cannot run leaves its tasks unjudged.
    let mut graph = graph.clone();
    let _ = check_images(&mut graph, None, base_dir, std::env::var_os("PATH").as_deref());
    let graph = &graph;
    let mut factory = JobFactory::new(Arc::new(graph.clone()), base_dir, &state)?;
    let mut stale = StaleOutputs::new(graph, &previous);
    // The outputs the run would move aside, as absolute paths.
    let mut hidden: HashSet<PathBuf> = HashSet::new();
    let mut old = OldRuns { state: &state, base_dir, factories: HashMap::new() };
    let mut runs: Vec<Vec<bool>> = graph.groups.iter().map(|g| vec![false; g.count as usize]).collect();
    let mut skips = ForeseenSkips::new(graph.groups.len());
    let mut tasks = Vec::new();
    // A run moves aside what dropped tasks left before anything else.
    let dropped_moved = stale.settle_dropped(&factory, &state, true);
    hidden.extend(dropped_moved.iter().flat_map(|m| &m.files).map(|f| base_dir.join(f)));
    for g in 0..graph.groups.len() {
        let id = GroupId(g as u32);
        if let Domain::Deferred { expansion } = &factory.graph().group(id).domain {
            // Writers that would not run leave the file as it is now: the
            // run would read it, and so does the plan.
            let writers = factory.graph().waits_for(id).unwrap_or_default();
            let file = base_dir.join(expansion.file());
            let settled = writers.iter().all(|w| !runs[w.index()].contains(&true)) && file.is_file();
            let read = fs_err::read_to_string(&file).ok().filter(|_| settled);
            if let Some(Ok((domain, count))) = read.map(|text| expansion::resolve(expansion, &text)) {
                for member in factory.resolve(id, domain, count) {
                    runs[member.index()] = vec![false; count as usize];
                }
            }
        }
        if let Domain::Nested { .. } = &factory.graph().group(id).domain {
            settle_parts(&mut factory, id, &runs);
            let count = factory.graph().group(id).count;
            for member in (0..graph.groups.len() as u32).map(GroupId) {
                if factory.graph().base_group(member) == id {
                    runs[member.index()] = vec![false; count as usize];
                }
            }
        }
        let graph = factory.graph().clone();
        let group = graph.group(id);
        let mut preview =
            TaskPreview { task: group.name.clone(), instances: Some(group.count), ..TaskPreview::default() };
        for moved in stale.settle(&factory, &[id], None, &state, true) {
            preview.stale_outputs += moved.files.len() as u64;
            hidden.extend(moved.files.iter().map(|f| base_dir.join(f)));
            preview.stale_examples.extend(moved.files.into_iter().take(EXAMPLES));
        }
        if let Domain::Nested { parent, parts, .. } = graph.base_domain(id) {
            // A skipped parent instance gives no part: it is not awaited.
            let skipped = |outer: u64| skips.is_marked(*parent, outer);
            let awaited = |outer: &u64| parts.part(*outer).is_none() && !skipped(*outer);
            preview.later_parts = (0..graph.group(*parent).count).filter(awaited).count() as u64;
            if preview.later_parts > 0 {
                preview.known_after = vec![graph.group(*parent).name.clone()];
            }
        } else if let Some(writers) = graph.waits_for(id) {
            preview.instances = None;
            match skips.skip_whole(&graph, id) {
                // What it waits for would all be skipped: so is it, whole, as a run skips it.
                Some(reason) => {
                    let why = Why::Skipped(reason);
                    if every {
                        preview.instances_run.push(InstanceWhy {
                            label: group.name.clone(),
                            text: why.text(),
                            why: why.clone(),
                        });
                    }
                    let examples = vec![group.name.clone()];
                    preview.skipped = 1;
                    preview.reasons = vec![ReasonCount { text: why.text(), why, count: 1, examples }];
                }
                None => preview.known_after = writers.iter().map(|&w| graph.group(w).name.clone()).collect(),
            }
            tasks.push(preview);
            continue;
        }
        let mut reasons: BTreeMap<Why, ReasonCount> = BTreeMap::new();
        let mut untracked = Vec::new();
        // The plan foresees no failure: what runs only on one would be skipped.
        let on_failure = failure_names(&graph, id).map(|names| format!("it runs only on a failure of {names}"));
        // A `when` reading a file per instance gives one reason for them all.
        let first_reads = |i: u64| factory.when_reads(TaskId::new(id, i));
        let reads_per_instance = group.count > 1 && first_reads(0) != first_reads(1);
        for i in 0..group.count {
            let task = TaskId::new(id, i);
            if i < EXAMPLES as u64 {
                note_implicit(&factory, task, &mut preview.implicit_inputs, &mut untracked);
            }
            let up = upstream(&graph, &runs, &skips, task);
            // A file a task that runs first writes is not final yet.
            let pending = if up.is_some() { factory.when_reads(task) } else { Vec::new() };
            let decided = if pending.is_empty() { factory.skip_reason(task).ok().flatten() } else { None };
            let skip = match decided {
                Some(reason) => Some(reason.to_string()),
                None => on_failure.clone().or_else(|| skips.skipped_upstream(&graph, task)),
            };
            let why = match (skip, up) {
                (Some(reason), _) => {
                    skips.mark(id, group.count, i);
                    // What an earlier success left for it is moved aside when it is skipped.
                    if let Some(moved) = stale.settle_unsucceeded(&factory, task, MoveReason::Skipped, &state, true) {
                        preview.skipped_outputs += moved.files.len() as u64;
                        hidden.extend(moved.files.iter().map(|f| base_dir.join(f)));
                        let room = EXAMPLES.saturating_sub(preview.skipped_examples.len());
                        preview.skipped_examples.extend(moved.files.into_iter().take(room));
                    }
                    Why::Skipped(reason)
                }
                (None, Some(name)) if reads_per_instance && !pending.is_empty() => Why::DecidedAfterWriter(name),
                (None, Some(_)) if !pending.is_empty() => Why::DecidedLater(pending.join("`, `")),
                (None, Some(name)) => Why::AfterUpstream(name),
                (None, None) => judge(&factory, &previous, &mut old, &hidden, task),
            };
            runs[g][i as usize] = why.runs();
            let shown = why.runs() || matches!(why, Why::Skipped(_));
            if every && shown {
                preview.instances_run.push(InstanceWhy {
                    label: graph.label(task),
                    text: why.text(),
                    why: why.clone(),
                });
            }
            match &why {
                Why::Skipped(_) => preview.skipped += 1,
                _ if why.runs() => preview.run += 1,
                _ => preview.unchanged += 1,
            }
            let entry = reasons.entry(why.clone()).or_insert_with(|| ReasonCount {
                text: why.text(),
                why: why.clone(),
                count: 0,
                examples: Vec::new(),
            });
            entry.count += 1;
            if entry.examples.len() < EXAMPLES {
                entry.examples.push(graph.label(task));
            }
        }
        preview.reasons = reasons.into_values().filter(|r| r.why.runs() || matches!(r.why, Why::Skipped(_))).collect();
        if !untracked.is_empty() {
            preview.untracked_scripts = Some(scripts::untracked_note(&group.name, &untracked));
        }
        tasks.push(preview);
    }
    tasks.extend(graph.dropped.iter().map(|d| {
        let moved = dropped_moved.iter().find(|m| m.task == d.name).map_or(&[][..], |m| &m.files[..]);
        TaskPreview {
            task: d.name.clone(),
            instances: Some(0),
            stale_outputs: moved.len() as u64,
            stale_examples: moved.iter().take(EXAMPLES).cloned().collect(),
            dropped: Some(d.reason.to_string()),
            ..TaskPreview::default()
        }
    }));
    Ok(tasks)
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Gives nested group `id` the parts whose files are final already: their
/// parent instance and the other writers would not run, and the file exists.
fn settle_parts(factory: &mut JobFactory, id: GroupId, runs: &[Vec<bool>]) {
    let graph = factory.graph().clone();
    let Domain::Nested { parent, expansion, .. } = &graph.group(id).domain else { return };
    let writers = graph.waits_for(id).unwrap_or_default();
    if writers.iter().any(|w| w != parent && runs[w.index()].contains(&true)) {
        return;
    }
    let mut expansion = expansion.clone();
    for outer in 0..graph.group(*parent).count {
        if runs[parent.index()].get(outer as usize).copied().unwrap_or(true) {
            continue;
        }
        let Ok(file) = factory.part_file(id, outer) else { continue };
        let Ok(text) = fs_err::read_to_string(factory.base_dir().join(&file)) else { continue };
        expansion.set_file(file);
        if let Ok(items) = expansion::items(&expansion, &text) {
            factory.add_part(id, outer, &items);
        }
    }
}

/// Whether every part of a nested group is known (never for a deferred one).
fn settled(graph: &Graph, id: GroupId) -> bool {
    match graph.base_domain(id) {
        Domain::Nested { parent, parts, .. } => parts.list().len() as u64 == graph.group(*parent).count,
        _ => false,
    }
}

/// The first task `task` waits for of which an instance it needs runs, or
/// that is known only at run time (and not skipped as a whole).
fn upstream(graph: &Graph, runs: &[Vec<bool>], skips: &ForeseenSkips, task: TaskId) -> Option<String> {
    for e in graph.edges.iter().filter(|e| e.to == task.group) {
        let from = e.from;
        // The writers of a known part's file do not run (`settle_parts`).
        if graph.is_nested(task.group) && e.origin == crate::ir::EdgeOrigin::Expansion {
            continue;
        }
        // A mirror follows its known instances one by one; a task that waits
        // for the whole of a stage not fully known waits for what runs first.
        let mirror =
            e.kind == crate::ir::EdgeKind::ElementWise && graph.base_group(from) == graph.base_group(task.group);
        let runs_first = !mirror && graph.is_dynamic(from) && !settled(graph, from) && !skips.is_whole(from)
            || e.kind
                .sources(task.instance, graph.group(from).count)
                .any(|s| TaskId::new(from, s) != task && runs[from.index()].get(s as usize).copied().unwrap_or(false));
        if runs_first {
            return Some(graph.group(from).name.clone());
        }
    }
    None
}

/// Adds the scripts `task`'s command names to `implicit` (at most a few),
/// and those that look like scripts but are not tracked to `untracked`.
fn note_implicit(factory: &JobFactory, task: TaskId, implicit: &mut Vec<String>, untracked: &mut Vec<Untracked>) {
    let Ok(job) = factory.job(task, 0, &Allocation::default()) else { return };
    for file in &job.implicit {
        let shown = relative(file, &job.base_dir).display().to_string();
        if implicit.len() < EXAMPLES && !implicit.contains(&shown) {
            implicit.push(shown);
        }
    }
    if factory.graph().group(task.group).implicit_inputs {
        let mut declared = scripts::declared_outputs(factory.graph(), &job.base_dir);
        declared.extend(job.inputs.iter().chain(&job.outputs).cloned());
        let setup = job.setup.as_ref().map_or(&[][..], |s| &s.lines[..]);
        for word in scripts::scripts(job.command.text(), setup, &job.cwd, &job.base_dir, &declared).untracked {
            if untracked.len() < EXAMPLES && !untracked.contains(&word) {
                untracked.push(word);
            }
        }
    }
}

/// Whether `task`, whose inputs are final, would run, and why.
fn judge(factory: &JobFactory, previous: &Previous, old: &mut OldRuns, hidden: &HashSet<PathBuf>, task: TaskId) -> Why {
    let graph = factory.graph();
    let label = graph.label(task);
    let standing = previous.standing(&label);
    match standing {
        Some(Standing::Tainted) => return Why::Tainted,
        Some(Standing::Untrusted(file)) => return Why::Untrusted(file.clone()),
        _ => {}
    }
    let jobs = candidates(factory, previous, task);
    match lookup(&jobs, previous, &graph.group(task.group).name, hidden) {
        Lookup::Unchanged { .. } => return Why::Unchanged,
        Lookup::OutputMissing(file) => return Why::OutputMissing(file),
        Lookup::OutputChanged(file) => return Why::OutputChanged(file),
        Lookup::Differs => {}
    }
    let (run, ended_us, reads, rendering) = match standing {
        Some(Standing::Done { run, ended_us, wrote, attempt, reads, .. }) => {
            (*run, *ended_us, reads.as_ref(), Rendering { variant: wrote.variant, attempt: *attempt })
        }
        Some(Standing::Failed) => return Why::FailedLastTime,
        _ => return Why::New,
    };
    let Some(now) = jobs.first() else { return Why::New };
    match previous.run_id(run).and_then(|id| old.job(id, &label, rendering)) {
        // The scripts it tracks changed with `implicit_inputs`, not with their bytes.
        Some((before, tracked))
            if tracked != graph.group(task.group).implicit_inputs && before.implicit != now.implicit =>
        {
            Why::SettingsChanged("implicit_inputs".to_owned())
        }
        Some((before, _)) => why_differs(&before, now, reads, ended_us, hidden),
        None => Why::InputChanged("?".to_owned()),
    }
}

/// The jobs earlier runs did, rendered from their own `graph.json`.
struct OldRuns<'a> {
    state: &'a Path,
    base_dir: &'a Path,
    factories: HashMap<String, Option<JobFactory>>,
}

impl OldRuns<'_> {
    /// The job run `run` did for the instance labelled `label`, rendered
    /// as `rendering`, and whether its task tracked the scripts its
    /// command names (`implicit_inputs`).
    fn job(&mut self, run: &str, label: &str, rendering: Rendering) -> Option<(Job, bool)> {
        let (state, base_dir) = (self.state, self.base_dir);
        let factory = self
            .factories
            .entry(run.to_owned())
            .or_insert_with(|| {
                let dir = RunDir { id: run.to_owned(), path: state.join("runs").join(run) };
                JobFactory::new(Arc::new(dir.read_graph().ok()?), base_dir, &dir.path).ok()
            })
            .as_ref()?;
        let graph = factory.graph();
        let (name, index) = match label.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse::<i64>().ok()?),
            None => (label, 0),
        };
        let group = graph.find(name)?;
        let position = if label.contains('[') { graph.position(group, index)? } else { 0 };
        let alloc = Allocation { variant: rendering.variant as usize, ..Allocation::default() };
        let job = factory.job(TaskId::new(group, position), rendering.attempt, &alloc).ok()?;
        Some((job, graph.group(group).implicit_inputs))
    }
}
