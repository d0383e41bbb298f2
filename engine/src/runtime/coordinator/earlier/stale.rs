//! Outputs of vanished instances: what earlier runs recorded for instances
//! that no longer exist — a `range` got shorter, a list lost lines, a hit
//! list shrank — and that no instance of the task declares now is moved
//! into the run directory before anything that could read it runs, so a
//! glob such as `refined/*.txt` sees what a clean run would see.
//!
//! Whether an instance still exists is known when its group's instances
//! are: at the start for a static group, when a dynamic group is expanded,
//! part by part for a per-instance fan-out. [`StaleOutputs`] holds the
//! recorded instances not yet judged, keyed so each judgement is made once.
//! A task a false `when` dropped has no instance at all: what its earlier
//! successes left is moved aside at the start, like a vanished instance's.
//! A recorded output changed by hand since is moved too (nothing is lost,
//! and a clean run would not have it); [`Moved::changed`] names it.
//!
//! An instance that exists but does not succeed in this run — skipped or
//! cancelled — has what an earlier success of its task left at its
//! declared outputs moved aside the moment that is known, before what
//! waits for it is released ([`StaleOutputs::settle_unsucceeded`]); one
//! that failed, whatever is at its declared outputs, a failed command's
//! partial files too ([`StaleOutputs::settle_failed`]); and an instance about to run
//! has its declared outputs moved aside first, whoever wrote them, so a
//! command that appends starts from nothing ([`StaleOutputs::clear`]).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::resume::Previous;
use super::unfinished::Unfinished;
use crate::ir::{Domain, Graph, GroupId, TaskId};
use crate::log::{OutputStamp, StampCheck, Wrote};
use crate::runtime::coordinator::dispatch::job_factory::JobFactory;
use crate::runtime::event::MoveReason;
use crate::runtime::protocol::job::relative;

/// An earlier success and what it left.
#[derive(Debug, Clone)]
struct Recorded {
    label: String,
    wrote: Arc<Wrote>,
}

impl Recorded {
    /// The outputs it recorded.
    fn outputs(&self) -> &[OutputStamp] {
        self.wrote.outputs.as_deref().unwrap_or_default()
    }
}

/// The outputs moved out of the way for one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The task.
    pub task: String,
    /// Why they were moved.
    pub reason: MoveReason,
    /// The instances that left them (vanished ones by their labels then).
    pub labels: Vec<String>,
    /// The files, relative to the workflow directory.
    pub files: Vec<String>,
    /// Those of `files` changed since flow wrote them.
    pub changed: Vec<String>,
}

/// Recorded instances not judged yet, by group and, for a per-instance
/// fan-out, by the `index` of the parent instance of their part.
#[derive(Debug, Default)]
pub struct StaleOutputs {
    pending: HashMap<(GroupId, Option<i64>), Vec<Recorded>>,
    /// The earlier successes of each task dropped from the run, by name.
    dropped: Vec<(String, Vec<Recorded>)>,
    /// What the earlier successes of each task of the run left, by task name.
    left: HashMap<String, Vec<Arc<Wrote>>>,
    /// The same by path, made for a task the first time one of its
    /// instances does not succeed.
    by_path: HashMap<String, HashMap<String, Vec<OutputStamp>>>,
    /// The outputs of attempts earlier runs never finished.
    unfinished: Vec<Unfinished>,
}

impl StaleOutputs {
    /// Takes in every earlier success of `graph`'s tasks that recorded outputs.
    pub fn new(graph: &Graph, previous: &Previous) -> Self {
        let mut pending: HashMap<(GroupId, Option<i64>), Vec<Recorded>> = HashMap::new();
        let mut left: HashMap<String, Vec<Arc<Wrote>>> = HashMap::new();
        for g in (0..graph.groups.len() as u32).map(GroupId) {
            let name = &graph.group(g).name;
            let mut of_task = Vec::new();
            for (label, wrote) in previous.done_of(name) {
                let recorded = Recorded { label: label.to_owned(), wrote: wrote.clone() };
                if !recorded.outputs().is_empty() {
                    of_task.push(wrote.clone());
                    pending.entry((g, parent_index(graph, g, label))).or_default().push(recorded);
                }
            }
            if !of_task.is_empty() {
                left.insert(name.clone(), of_task);
            }
        }
        let dropped = graph
            .dropped
            .iter()
            .map(|d| {
                let recorded = previous
                    .done_of(&d.name)
                    .map(|(label, wrote)| Recorded { label: label.to_owned(), wrote: wrote.clone() });
                (d.name.clone(), recorded.filter(|r| !r.outputs().is_empty()).collect::<Vec<_>>())
            })
            .filter(|(_, recorded)| !recorded.is_empty())
            .collect();
        Self { pending, dropped, left, by_path: HashMap::new(), unfinished: Vec::new() }
    }

    /// Takes in the outputs of attempts earlier runs never finished.
    pub fn add_unfinished(&mut self, unfinished: Vec<Unfinished>) {
        self.unfinished = unfinished;
    }

    /// Moves whatever is at the declared outputs of the attempts earlier
    /// runs never finished into `into` (unless `dry`), once: a file there
    /// is what such an attempt wrote, or what an earlier success left
    /// before it, and neither is a result now.
    pub fn settle_unfinished(&mut self, base: &Path, into: &Path, dry: bool) -> Vec<Moved> {
        let mut all: Vec<Moved> = Vec::new();
        for u in std::mem::take(&mut self.unfinished) {
            let mut files = Vec::new();
            for path in u.outputs {
                let file = base.join(&path);
                if move_if_there(&file, &path, into, dry) {
                    files.push(path);
                }
            }
            if files.is_empty() {
                continue;
            }
            match all.last_mut().filter(|m| m.task == u.task) {
                Some(m) => {
                    m.labels.push(u.label);
                    m.files.extend(files);
                }
                None => all.push(Moved {
                    task: u.task,
                    reason: MoveReason::Unfinished,
                    labels: vec![u.label],
                    files,
                    changed: Vec::new(),
                }),
            }
        }
        all
    }

    /// Moves the declared outputs of `task`, which did not succeed in this
    /// run (`reason`), into `into` (unless `dry`): those an earlier success
    /// of its task recorded, whatever they hold now.
    pub fn settle_unsucceeded(
        &mut self,
        factory: &JobFactory,
        task: TaskId,
        reason: MoveReason,
        into: &Path,
        dry: bool,
    ) -> Option<Moved> {
        let name = &factory.graph().group(task.group).name;
        let left = self.left.get(name)?;
        let by_path = self.by_path.entry(name.clone()).or_insert_with(|| {
            let mut by_path: HashMap<String, Vec<OutputStamp>> = HashMap::new();
            for stamp in left.iter().flat_map(|w| w.outputs.as_deref().unwrap_or_default()) {
                by_path.entry(stamp.path.clone()).or_default().push(stamp.clone());
            }
            by_path
        });
        let mut moved = Moved {
            task: name.clone(),
            reason,
            labels: vec![factory.label(task)],
            files: Vec::new(),
            changed: Vec::new(),
        };
        for file in factory.outputs(task).ok()? {
            let path = relative(&file, factory.base_dir()).to_string_lossy().into_owned();
            let Some(stamps) = by_path.get(&path) else { continue };
            moved.take(&file, path, stamps, into, dry);
        }
        (!moved.files.is_empty()).then_some(moved)
    }

    /// Moves what the earlier instances of group `g` left into `into`
    /// (unless `dry`), now that no instance of it will be known in this
    /// run — of the part of the parent instance whose `index` is `part`,
    /// or of the whole group — as it was skipped, cancelled or failed as one.
    pub fn settle_never_known(
        &mut self,
        factory: &JobFactory,
        g: GroupId,
        part: Option<i64>,
        reason: MoveReason,
        into: &Path,
        dry: bool,
    ) -> Option<Moved> {
        let keys: Vec<_> =
            self.pending.keys().filter(|(group, p)| *group == g && (part.is_none() || *p == part)).copied().collect();
        let recorded: Vec<Recorded> = keys.iter().filter_map(|key| self.pending.remove(key)).flatten().collect();
        let name = &factory.graph().group(g).name;
        let moved = move_aside(factory.base_dir(), name, recorded, &HashSet::new(), into, dry)?;
        Some(Moved { reason, ..moved })
    }

    /// Moves every declared output of `task`, which failed in this run,
    /// into `into` (unless `dry`), whoever wrote it: its command may have
    /// left part of an output, and what an earlier success left is not
    /// this run's result either. A clean run leaves nothing there.
    pub fn settle_failed(factory: &JobFactory, task: TaskId, into: &Path, dry: bool) -> Option<Moved> {
        let mut files = Vec::new();
        for file in factory.outputs(task).ok()? {
            let path = relative(&file, factory.base_dir()).to_string_lossy().into_owned();
            if move_if_there(&file, &path, into, dry) {
                files.push(path);
            }
        }
        let (task, labels) = (factory.graph().group(task.group).name.clone(), vec![factory.label(task)]);
        (!files.is_empty()).then(|| Moved { task, reason: MoveReason::Failed, labels, files, changed: Vec::new() })
    }

    /// Moves what `outputs` (the declared outputs of an instance about to
    /// run) name on disk into `into`, whoever wrote it: the instance
    /// starts from what a clean run would give it.
    pub fn clear(outputs: &[PathBuf], base: &Path, into: &Path) {
        for file in outputs {
            move_if_there(file, &relative(file, base).to_string_lossy(), into, false);
        }
    }

    /// Moves what the earlier successes of the tasks dropped from the run
    /// left into `into` (unless `dry`), once — except files an instance
    /// of a task whose instances are known declares now.
    pub fn settle_dropped(&mut self, factory: &JobFactory, into: &Path, dry: bool) -> Vec<Moved> {
        let dropped = std::mem::take(&mut self.dropped);
        if dropped.is_empty() {
            return Vec::new();
        }
        let graph = factory.graph();
        let mut declared = HashSet::new();
        for g in (0..graph.groups.len() as u32).map(GroupId).filter(|&g| !graph.is_dynamic(g)) {
            declared.extend(declared_outputs(factory, g, 0..graph.group(g).count));
        }
        dropped
            .into_iter()
            .filter_map(|(task, recorded)| move_aside(factory.base_dir(), &task, recorded, &declared, into, dry))
            .collect()
    }

    /// Judges the recorded instances of `groups` (or, with `part`, of the
    /// part of the parent instance whose `index` is `part`) now that their
    /// instances are known, and moves the outputs of those that vanished
    /// into `into` (unless `dry`) — except files an instance of the same
    /// group still declares.
    pub fn settle(
        &mut self,
        factory: &JobFactory,
        groups: &[GroupId],
        part: Option<i64>,
        into: &Path,
        dry: bool,
    ) -> Vec<Moved> {
        let graph = factory.graph().clone();
        let mut moved = Vec::new();
        for &g in groups {
            let keys: Vec<_> = match part {
                Some(index) => vec![(g, Some(index))],
                None => self.pending.keys().filter(|(group, _)| *group == g).copied().collect(),
            };
            // Every recorded instance whose existence is known: one that
            // vanished, and one that exists now with another item (a line
            // moved) whose old outputs no instance may declare any more.
            let mut judged = Vec::new();
            for key in keys {
                let Some(recorded) = self.pending.remove(&key) else { continue };
                let (known, undecided): (Vec<_>, Vec<_>) =
                    recorded.into_iter().partition(|r| is_current(&graph, g, &r.label).is_some());
                judged.extend(known);
                if !undecided.is_empty() {
                    self.pending.insert(key, undecided);
                }
            }
            if judged.is_empty() || all_in_place(factory, g, &judged) {
                continue;
            }
            let positions = match part.and_then(|index| part_positions(&graph, g, index)) {
                Some(range) => range,
                None => 0..graph.group(g).count,
            };
            let declared = declared_outputs(factory, g, positions);
            if let Some(m) = move_aside(factory.base_dir(), &graph.group(g).name, judged, &declared, into, dry) {
                moved.push(m);
            }
        }
        moved
    }
}

/// For an instance of a per-instance fan-out, the `index` of its parent instance.
fn parent_index(graph: &Graph, g: GroupId, label: &str) -> Option<i64> {
    let Domain::Nested { .. } = graph.base_domain(g) else { return None };
    let (outer, _) = inner(label)?.split_once('.')?;
    outer.parse().ok()
}

/// The text between the brackets of `name[…]`.
fn inner(label: &str) -> Option<&str> {
    label.split_once('[')?.1.strip_suffix(']')
}

/// Whether the instance labelled `label` exists in group `g`; `None` while
/// that is not known yet.
fn is_current(graph: &Graph, g: GroupId, label: &str) -> Option<bool> {
    locate(graph, g, label).map(|position| position.is_some())
}

/// The position of the instance labelled `label` in group `g`: `Some(None)`
/// when it no longer exists, `None` while that is not known yet.
fn locate(graph: &Graph, g: GroupId, label: &str) -> Option<Option<u64>> {
    let Some(inside) = inner(label) else {
        return Some(matches!(graph.base_domain(g), Domain::Single).then_some(0));
    };
    match graph.base_domain(g) {
        Domain::Single => Some(None),
        Domain::Deferred { .. } => None,
        Domain::Nested { parent, parts, .. } => {
            let (outer, sub) = inside.split_once('.')?;
            let (outer, sub) = (outer.parse::<i64>().ok()?, sub.parse::<u64>().ok()?);
            if graph.is_deferred(*parent) {
                return None;
            }
            if graph.position(*parent, outer).is_none() {
                return Some(None);
            }
            let range = parts.positions(outer)?;
            Some((sub < range.end - range.start).then_some(range.start + sub))
        }
        _ => Some(inside.parse::<i64>().ok().and_then(|index| graph.position(g, index))),
    }
}

/// Whether every recorded instance still exists and declares just what it
/// recorded: the usual rerun, where nothing can be stale, found without
/// collecting the outputs of the whole group.
fn all_in_place(factory: &JobFactory, g: GroupId, recorded: &[Recorded]) -> bool {
    let graph = factory.graph();
    recorded.iter().all(|r| {
        let Some(Some(position)) = locate(graph, g, &r.label) else { return false };
        let Ok(now) = factory.outputs(TaskId::new(g, position)) else { return false };
        now.len() == r.outputs().len()
            && now
                .iter()
                .zip(r.outputs())
                .all(|(file, stamp)| relative(file, factory.base_dir()) == Path::new(&stamp.path))
    })
}

/// The positions of the part of parent instance `index` in nested group `g`.
fn part_positions(graph: &Graph, g: GroupId, index: i64) -> Option<Range<u64>> {
    match graph.base_domain(g) {
        Domain::Nested { parts, .. } => parts.positions(index),
        _ => None,
    }
}

/// The outputs the instances at `positions` of group `g` declare now.
fn declared_outputs(factory: &JobFactory, g: GroupId, positions: Range<u64>) -> HashSet<String> {
    let mut declared = HashSet::new();
    for i in positions {
        for file in factory.outputs(TaskId::new(g, i)).unwrap_or_default() {
            declared.insert(relative(&file, factory.base_dir()).to_string_lossy().into_owned());
        }
    }
    declared
}

/// Moves the recorded outputs of `vanished` that no instance of their
/// task declares now into `into`, keeping their paths below it.
fn move_aside(
    base: &Path,
    task: &str,
    mut vanished: Vec<Recorded>,
    declared: &HashSet<String>,
    into: &Path,
    dry: bool,
) -> Option<Moved> {
    vanished.sort_by(|a, b| a.label.cmp(&b.label));
    let mut moved = Moved {
        task: task.to_owned(),
        reason: MoveReason::Vanished,
        labels: Vec::new(),
        files: Vec::new(),
        changed: Vec::new(),
    };
    for r in vanished {
        let mut any = false;
        for stamp in r.outputs().iter().filter(|s| !declared.contains(&s.path)) {
            if !moved.files.contains(&stamp.path) {
                any |= moved.take(&base.join(&stamp.path), stamp.path.clone(), std::slice::from_ref(stamp), into, dry);
            }
        }
        if any {
            moved.labels.push(r.label);
        }
    }
    (!moved.files.is_empty()).then_some(moved)
}

impl Moved {
    /// Moves `file` (at `path`, relative to the workflow directory) into
    /// `into` (unless `dry`) if it is there, noting it as changed by hand
    /// when it is not as any of the `stamps` flow recorded for it left
    /// it; whether it was taken.
    fn take(&mut self, file: &Path, path: String, stamps: &[OutputStamp], into: &Path, dry: bool) -> bool {
        if fs_err::symlink_metadata(file).is_err() {
            return false;
        }
        let left = stamps.iter().any(|s| matches!(s.check(file), StampCheck::Same | StampCheck::Restamped(_)));
        if !dry && !move_file(file, &inside(into, &path)) {
            return false;
        }
        if !left {
            self.changed.push(path.clone());
        }
        self.files.push(path);
        true
    }
}

/// `path` (relative, or absolute outside the workflow directory) below
/// `dir`: a `..` becomes `up`, so nothing lands outside `dir`.
fn inside(dir: &Path, path: &str) -> PathBuf {
    use std::path::Component;
    let mut to = dir.to_path_buf();
    for part in Path::new(path).components() {
        match part {
            Component::Normal(name) => to.push(name),
            Component::ParentDir => to.push("up"),
            _ => {}
        }
    }
    to
}

/// Moves `file` (at `path`, relative to the workflow directory) into
/// `into` if it is there — with `dry`, only says whether it is; whether
/// it was (or would be) taken.
fn move_if_there(file: &Path, path: &str, into: &Path, dry: bool) -> bool {
    fs_err::symlink_metadata(file).is_ok() && (dry || move_file(file, &inside(into, path)))
}

/// Renames `from` to `to` (copying across file systems); whether it
/// moved. Nothing moved there before is overwritten: a later file gets
/// `~1~`, `~2~`, … after its name.
fn move_file(from: &Path, to: &Path) -> bool {
    if let Some(parent) = to.parent()
        && fs_err::create_dir_all(parent).is_err()
    {
        return false;
    }
    let to = free_name(to);
    if fs_err::rename(from, &to).is_ok() {
        return true;
    }
    fs_err::copy(from, &to).is_ok() && fs_err::remove_file(from).is_ok()
}

/// `to`, or the first of `to~1~`, `to~2~`, … that does not exist.
fn free_name(to: &Path) -> PathBuf {
    let mut name = to.to_path_buf();
    let mut n = 0;
    while fs_err::symlink_metadata(&name).is_ok() {
        n += 1;
        let mut os = to.as_os_str().to_owned();
        os.push(format!("~{n}~"));
        name = PathBuf::from(os);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::compile::compile_toml as graph;

    #[test]
    fn whether_an_instance_still_exists_is_known_when_its_group_is() {
        let g = graph(
            "[[tasks]]\nname = \"one\"\ncommand = \"true\"\n\n\
             [[tasks]]\nname = \"gen\"\nrange = \"1-3\"\ncommand = \"echo > l{{ index }}.txt\"\noutputs = [\"l{{ index }}.txt\"]\n\n\
             [[tasks]]\nname = \"dyn\"\neach_line = \"l1.txt\"\ncommand = \"true\"\n",
        );
        let (one, range, dynamic) = (GroupId(0), GroupId(1), GroupId(2));
        assert_eq!(is_current(&g, one, "one"), Some(true));
        assert_eq!(is_current(&g, one, "one[0]"), Some(false));
        assert_eq!(is_current(&g, range, "gen[3]"), Some(true));
        assert_eq!(is_current(&g, range, "gen[4]"), Some(false));
        assert_eq!(is_current(&g, range, "gen"), Some(false));
        assert_eq!(is_current(&g, dynamic, "dyn[0]"), None, "not known before the run reads l1.txt");
    }

    #[test]
    fn a_file_moved_aside_twice_keeps_both_copies() {
        let dir = tempfile::tempdir().unwrap();
        let (out, into) = (dir.path().join("out.txt"), dir.path().join("stale"));
        for text in ["first", "second"] {
            fs_err::write(&out, text).unwrap();
            StaleOutputs::clear(std::slice::from_ref(&out), dir.path(), &into);
        }
        assert!(!out.exists());
        assert_eq!(fs_err::read_to_string(into.join("out.txt")).unwrap(), "first");
        assert_eq!(fs_err::read_to_string(into.join("out.txt~1~")).unwrap(), "second");
    }

    #[test]
    fn a_moved_output_keeps_its_path_below_the_run_directory() {
        let dir = Path::new("/r/stale");
        assert_eq!(inside(dir, "refined/a.txt"), dir.join("refined/a.txt"));
        assert_eq!(inside(dir, "../o1.txt"), dir.join("up/o1.txt"));
        assert_eq!(inside(dir, "/data/x.txt"), dir.join("data/x.txt"));
    }
}
