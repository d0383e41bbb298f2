//! Runs a generated sequence: the real directory, edited between runs, and
//! for every state a clean run in a fresh directory, which gives what the
//! outputs must be and every instance's key. The oracle (`Model`) says
//! which instances a rerun must execute; `flow plan --why` and `flow run
//! --dry-exec` must predict them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use super::edits::{Edit, Policy, RENAMED};
use super::failures::{Fate, upstream};
use super::runs::{flow, killed, on_a_remote_worker};
use super::sources::{Sources, WORDS, WORKFLOW_FILES};
use super::workflows::{Draw, Shape, left_out};
use super::{included, trees};
use crate::examples::copy_dir;

/// One line of the execution log: the instance, its outputs and its key;
/// a command that failed logs `!` for its outputs.
#[derive(Clone, Debug)]
pub struct Done {
    pub label: String,
    pub outputs: Vec<String>,
    pub key: String,
    pub failed: bool,
}

/// The task of an instance's label, as flow names it (`lib.x`, `c_r`).
pub fn task_of(label: &str) -> &str {
    label.split('[').next().unwrap_or(label)
}

/// The task of a label (or a task name) as `Shape::tasks` names it:
/// without its namespace, and renamed back.
pub fn base_task(label: &str) -> &str {
    let task = task_of(label);
    let task = task.rsplit_once('.').map_or(task, |(_, t)| t);
    task.strip_suffix("_r").unwrap_or(task)
}

/// flow's label with an index always written: `c` is `c[0]`.
fn normal(label: &str) -> String {
    if label.contains('[') { label.to_owned() } else { format!("{label}[0]") }
}

/// `cmd` with `-v aux=…` and the variables of `src`.
fn run_args(cmd: &[&str], aux: &Path, src: &Sources, shape: &Shape) -> Vec<String> {
    let mut args: Vec<String> = cmd.iter().map(|s| (*s).to_owned()).collect();
    args.extend(["-v".to_owned(), format!("aux={}", aux.display())]);
    if shape.include.is_some() {
        args.extend(["-v".to_owned(), format!("{}.aux={}", included::namespace(shape, src), aux.display())]);
    }
    args.extend(src.vars(shape));
    args
}

/// Reads and empties the execution log.
fn take_log(aux: &Path) -> Vec<Done> {
    let path = aux.join("exec.log");
    let text = fs_err::read_to_string(&path).unwrap_or_default();
    let _ = fs_err::write(&path, "");
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, '|');
            let (label, outputs, key) = (parts.next()?, parts.next()?, parts.next()?);
            Some(Done {
                label: label.to_owned(),
                outputs: outputs.split(',').filter(|o| !o.is_empty() && *o != "!").map(str::to_owned).collect(),
                key: format!("{outputs}|{key}"),
                failed: outputs == "!",
            })
        })
        .collect()
}

fn labels(done: &[Done]) -> BTreeSet<String> {
    done.iter().map(|d| d.label.clone()).collect()
}

/// Every file of `dir` except `.flow` and the sources: path → bytes.
pub fn outputs(dir: &Path, sources: &BTreeSet<&str>) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, sources: &BTreeSet<&str>, found: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = fs_err::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).expect("inside").to_string_lossy().into_owned();
            if rel == ".flow" || sources.contains(rel.as_str()) {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, sources, found);
            } else {
                found.insert(rel, fs_err::read(&path).unwrap_or_default());
            }
        }
    }
    let mut found = BTreeMap::new();
    walk(dir, dir, sources, &mut found);
    found
}

/// Writes the source files and symlinks (`links`: path → target), and
/// removes the sources that come and go when they are not listed.
fn write_sources(dir: &Path, files: &BTreeMap<&str, String>, links: &BTreeMap<&str, String>) {
    // One workflow file, in the syntax of the moment.
    for name in WORKFLOW_FILES.iter().chain([&trees::EXTRA]).filter(|n| !files.contains_key(*n)) {
        let _ = fs_err::remove_file(dir.join(name));
    }
    for (path, text) in files {
        let full = dir.join(path);
        fs_err::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        fs_err::write(full, text).expect("write source");
    }
    for (path, target) in links {
        let full = dir.join(path);
        fs_err::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        let _ = fs_err::remove_file(&full);
        fs_err::os::unix::fs::symlink(target, &full).expect("symlink");
    }
}

/// A success the oracle remembers: the key and the outputs' bytes.
struct Success {
    key: String,
    outputs: BTreeMap<String, Option<Vec<u8>>>,
}

/// The oracle: every recorded success per task; the instances (labels)
/// that ever finished, and those an attempt tainted: one that started
/// after the instance had finished and did not succeed, whatever its key
/// (a killed handler, a failed retry), until the instance succeeds again.
#[derive(Default)]
struct Model {
    history: BTreeMap<String, Vec<Success>>,
    finished: BTreeSet<String>,
    tainted: BTreeSet<String>,
}

impl Model {
    /// The instances of `clean` a run of the directory `dir` must execute:
    /// a failing or reacting one always does.
    fn expected(&self, clean: &[Done], fate: &Fate, dir: &Path) -> BTreeSet<String> {
        clean
            .iter()
            .filter(|d| {
                let task = task_of(&d.label).to_owned();
                let skip = !d.failed
                    && !fate.reacting.contains(&d.label)
                    && !self.tainted.contains(&d.label)
                    && self.history.get(&task).is_some_and(|all| {
                        all.iter().any(|s| {
                            s.key == d.key && s.outputs.iter().all(|(p, b)| fs_err::read(dir.join(p)).ok() == *b)
                        })
                    });
                !skip
            })
            .map(|d| d.label.clone())
            .collect()
    }

    /// An attempt of `label` started and did not succeed: an instance that
    /// had finished is tainted.
    fn failed(&mut self, label: &str) {
        if self.finished.contains(label) {
            self.tainted.insert(label.to_owned());
        }
    }

    /// `label` finished without running (unchanged).
    fn unchanged(&mut self, label: &str) {
        self.tainted.remove(label);
        self.finished.insert(label.to_owned());
    }

    fn succeeded(&mut self, done: &Done, dir: &Path) {
        self.unchanged(&done.label);
        let outputs = done.outputs.iter().map(|p| (p.clone(), fs_err::read(dir.join(p)).ok())).collect();
        self.history
            .entry(task_of(&done.label).to_owned())
            .or_default()
            .push(Success { key: done.key.clone(), outputs });
    }
}

/// Which checks to make; `FLOW_MODEL_SKIP` lists the ones to leave out
/// (`stale`, `plan`, `dry`, `why` — the reasons of `flow plan --why` name
/// the file an edit changed), to look past a known defect.
struct Checks {
    stale: bool,
    plan: bool,
    dry: bool,
    why: bool,
}

impl Checks {
    fn from_env() -> Self {
        let why = Draw::from_env().has("why");
        Self { stale: !left_out("stale"), plan: !left_out("plan"), dry: !left_out("dry"), why }
    }
}

/// The file whose bytes the edit `parts` changed, when it is the one
/// thing that changed for task `a`: the cause `flow plan --why` must name
/// for `a`'s instances that run because an input changed. Every source
/// file is written again at each step: the others are touched.
fn known_cause(shape: &Shape, parts: &[Edit], before: &Sources, now: &Sources) -> Option<&'static str> {
    match parts {
        [Edit::Stdin(_)] if shape.stdin && before.stdin != now.stdin => Some("in/stdin.txt"),
        [Edit::Setup(_)] if shape.setup && !shape.untracked && before.setup != now.setup => Some("env.sh"),
        [Edit::Common(_)] if shape.common && before.common != now.common => Some("in/common.txt"),
        [Edit::Script(false, _)] if shape.script.is_some() && !shape.cwd && before.script != now.script => Some("s.sh"),
        [Edit::Script(true, _)] if shape.script.is_some() && shape.cwd && before.sub_script != now.sub_script => {
            Some("sub/s.sh")
        }
        _ => None,
    }
}

fn diff(what: &str, expected: &BTreeSet<String>, got: &BTreeSet<String>) -> String {
    let more: Vec<_> = got.difference(expected).collect();
    let fewer: Vec<_> = expected.difference(got).collect();
    format!("{what}: expected {expected:?}, got {got:?} (extra {more:?}, missing {fewer:?})")
}

/// Runs `shape` and then each edit followed by a rerun; the first broken
/// promise is the error.
pub fn check_sequence(shape: &Shape, edits: &[Edit]) -> Result<(), String> {
    let root = tempfile::tempdir().expect("temp dir");
    let checks = Checks::from_env();
    let aux = root.path().join("aux");
    fs_err::create_dir_all(aux.join("fail")).expect("aux");
    let mut dir = root.path().join("w0");
    let mut src = Sources::new();
    write_sources(&dir, &src.files(shape), &src.links(shape));
    let source_names: BTreeSet<&str> = src
        .files(shape)
        .into_keys()
        .chain(src.links(shape).into_keys())
        .chain(WORKFLOW_FILES)
        .chain([trees::EXTRA])
        .collect();
    let tasks = shape.tasks();
    let mut model = Model::default();
    let mut memo = None;
    let steps = std::iter::once(Edit::Nothing).chain(edits.iter().cloned());
    for (step, edit) in steps.enumerate() {
        let at = |msg: String| format!("after edit {step} ({edit:?}): {msg}");
        for marker in crate::support::process::entries(&aux.join("fail")) {
            let _ = fs_err::remove_file(aux.join("fail").join(marker));
        }
        let before_edit = src.clone();
        let mut kill = None;
        let mut fail = None;
        let mut remote = None;
        let mut policy = None;
        // `--force`, or `--only` a task of the clean run (picked by number).
        let mut forced: Option<Option<usize>> = None;
        for part in edit.parts() {
            match part {
                Edit::Nothing => {}
                Edit::InsertTop(w) if !src.list.contains(&WORDS[w]) && src.list.len() < 6 => {
                    src.list.insert(0, WORDS[w])
                }
                Edit::Append(w) if !src.list.contains(&WORDS[w]) && src.list.len() < 6 => src.list.push(WORDS[w]),
                Edit::Remove(i) if src.list.len() > 1 => {
                    src.list.remove(i % src.list.len());
                }
                Edit::Swap(i) if src.list.len() > 1 => {
                    let i = i % (src.list.len() - 1);
                    src.list.swap(i, i + 1);
                }
                Edit::Replace(i, w) if !src.list.contains(&WORDS[w]) => {
                    let i = i % src.list.len();
                    src.list[i] = WORDS[w];
                }
                Edit::SetN(n) => src.n = n,
                Edit::SetTag(t) => src.tag = t,
                Edit::SetBOn(on) => src.b_on = on,
                Edit::Cut(i) => src.cut = i,
                Edit::Force => forced = Some(None),
                Edit::Only(i) => forced = Some(Some(i)),
                Edit::Poison(i) => {
                    let _toggled = src.poison.remove(&i) || src.poison.insert(i);
                }
                Edit::Common(c) => src.common = c,
                Edit::Script(false, v) => src.script = v,
                Edit::Script(true, v) => src.sub_script = v,
                Edit::Touch => std::thread::sleep(Duration::from_millis(5)),
                Edit::DeleteOutput(i) | Edit::CorruptOutput(i) => {
                    let all: Vec<String> = outputs(&dir, &source_names).into_keys().collect();
                    if !all.is_empty() {
                        let path = dir.join(&all[i % all.len()]);
                        if matches!(part, Edit::DeleteOutput(_)) {
                            fs_err::remove_file(path).expect("delete output");
                        } else {
                            fs_err::write(path, "99\n").expect("corrupt output");
                        }
                    }
                }
                Edit::Fail(i) => fail = Some(i),
                Edit::Move => {
                    let to = root.path().join(format!("w{step}"));
                    fs_err::rename(&dir, &to).expect("move the directory");
                    dir = to;
                }
                Edit::Kill(ms) => kill = Some((ms, "-KILL")),
                Edit::Interrupt(ms) => kill = Some((ms, "-INT")),
                Edit::Syntax => src.yaml = !src.yaml,
                Edit::Stdin(v) => src.stdin = v,
                Edit::Setup(v) => src.setup = v,
                Edit::Namespace => src.renamed_namespace = !src.renamed_namespace,
                Edit::IncludeVar(v) => src.lib_word = v,
                Edit::Included(part, v) => src.lib[part % 3] = v,
                Edit::Rename(i) => {
                    let task = RENAMED[i % RENAMED.len()];
                    let _toggled = src.renamed.remove(task) || src.renamed.insert(task);
                }
                Edit::Reorder => src.reversed = !src.reversed,
                Edit::Remote(profile) => remote = Some(profile),
                Edit::Licence(n) => src.licence = n,
                Edit::Memory(m) => src.memory = m,
                Edit::Policy(p) => policy = Some(p),
                Edit::Retarget(i) => src.links[i % 2] ^= 1,
                Edit::Target(i, v) => src.targets[i % 2] = v,
                Edit::DataFile(v) => src.data = v,
                Edit::DataExtra => src.extra = !src.extra,
                _ => {}
            }
        }
        let files = src.files(shape);
        let links = src.links(shape);
        write_sources(&dir, &files, &links);
        let worker = src.worker(shape);
        if src.refused(shape) {
            let args = [run_args(&["run", "--cpus", "2"], &aux, &src, shape), worker].concat();
            refused(&dir, &aux, &args, &source_names).map_err(at)?;
            continue;
        }

        // The clean run: all outputs and every instance's key (again only
        // when the files or variables changed).
        let state = (files.clone(), links.clone(), src.vars(shape), worker.clone());
        if memo.as_ref().is_none_or(|(s, _, _, _)| *s != state) {
            let clean_dir = root.path().join(format!("clean{step}"));
            let clean_aux = root.path().join(format!("clean-aux{step}"));
            fs_err::create_dir_all(&clean_aux).expect("aux");
            write_sources(&clean_dir, &files, &links);
            let out = flow(
                &clean_dir,
                &[run_args(&["run", "--cpus", "2"], &clean_aux, &src, shape), worker.clone()].concat(),
            );
            let log = take_log(&clean_aux);
            let fate = Fate::of(shape, &log).map_err(|e| at(format!("{e}\n{}", out.stderr)))?;
            if out.code != fate.code {
                return Err(at(format!("the clean run exited with {}, not {}:\n{}", out.code, fate.code, out.stderr)));
            }
            let outputs = outputs(&clean_dir, &source_names);
            let _ = fs_err::remove_dir_all(&clean_dir);
            memo = Some((state, log, outputs, fate));
        }
        let (_, clean, clean_outputs, fate) = memo.as_ref().expect("a clean run");
        let mut expected = model.expected(clean, fate, &dir);
        let forced = forced.filter(|_| !clean.is_empty()).map(|o| o.map(|i| task_of(&clean[i % clean.len()].label)));
        if let Some(only) = forced {
            let hit = |t: &str| only.is_none_or(|o| t == o || upstream(&tasks, base_task(t)).contains(base_task(o)));
            expected.extend(clean.iter().filter(|d| hit(task_of(&d.label))).map(|d| d.label.clone()));
        }
        if let Some(i) = fail {
            let label = &clean[i % clean.len()].label;
            let marker = label.replace('[', ".").replace(']', "");
            fs_err::write(aux.join("fail").join(marker), "").expect("marker");
        }
        let normal_run = kill.is_none() && fail.is_none();
        let upstream_runs =
            |task: &str| upstream(&tasks, base_task(task)).iter().any(|u| expected.iter().any(|l| base_task(l) == *u));
        let always = shape.handler.is_some_and(|h| h.always);

        // `plan` and `--dry-exec` are not asked about a forced run.
        if normal_run && forced.is_none() && checks.plan && step > 0 {
            let plan = flow(&dir, &run_args(&["plan", "--why", "--instances", "--json"], &aux, &src, shape));
            if plan.code != 0 {
                return Err(at(format!("flow plan --why failed:\n{}", plan.stderr)));
            }
            let cause = known_cause(shape, &edit.parts(), &before_edit, &src).filter(|_| checks.why);
            for line in plan.stdout.lines() {
                let v: serde_json::Value = serde_json::from_str(line).map_err(|e| at(format!("{e}: {line}")))?;
                let task = v["task"].as_str().unwrap_or_default();
                // An input changed: the one the edit changed.
                let reasons = ["input_changed", "stdin_changed", "some_input_changed"];
                let input = |i: &&serde_json::Value| reasons.iter().any(|r| i["reason"] == *r);
                if let Some(cause) = cause.filter(|_| task == "a")
                    && let Some(i) =
                        v["instances_run"].as_array().into_iter().flatten().filter(input).find(|i| i["detail"] != cause)
                {
                    return Err(at(format!(
                        "flow plan --why gave {i} as the reason, not that `{cause}` changed\n{line}"
                    )));
                }
                if v["instances"].is_null() || (Shape::is_dynamic(base_task(task)) && upstream_runs(task)) {
                    continue;
                }
                // Every instance named, with its reason: exactly the
                // oracle's, except those waiting for an upstream that runs
                // (early cut-off is known only after it ran).
                let named = |waiting: bool| -> BTreeSet<String> {
                    v["instances_run"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|i| i["reason"] != "skipped" && (i["reason"] == "after_upstream") == waiting)
                        .filter_map(|i| i["label"].as_str().map(normal))
                        .collect()
                };
                let (sure, waiting) = (named(false), named(true));
                let exec: BTreeSet<String> = expected.iter().filter(|l| task_of(l) == task).cloned().collect();
                let all: BTreeSet<String> = sure.union(&waiting).cloned().collect();
                // The plan foresees no failure: what a failure cancels it
                // counts (an upper bound), a failure handler never (a lower one).
                let wrong = if fate.cancelled.contains(base_task(task)) {
                    false
                } else if base_task(task) == "h" && !always {
                    !all.is_empty()
                } else {
                    !sure.is_subset(&exec) || !exec.is_subset(&all) || (!upstream_runs(task) && all != exec)
                };
                if wrong || v["run"].as_u64() != Some(all.len() as u64) {
                    return Err(at(format!(
                        "flow plan --why named {sure:?} (and {waiting:?} waiting) of `{task}`, the oracle {exec:?}\n{line}"
                    )));
                }
            }
        }
        if normal_run && forced.is_none() && checks.dry && step > 0 {
            let copy = root.path().join(format!("dry{step}"));
            fs_err::create_dir_all(&copy).expect("mkdir");
            copy_dir(&dir, &copy);
            let dry_args = run_args(&["run", "--cpus", "2", "--dry-exec", "--json"], &aux, &src, shape);
            let dry = flow(&copy, &[dry_args, worker.clone()].concat());
            let _ = fs_err::remove_dir_all(&copy);
            let would: BTreeSet<String> = dry
                .stdout
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|v| v["event"] == "task_finished" && v["state"] == "succeeded")
                .filter_map(|v| v["label"].as_str().map(normal))
                .collect();
            for (task, _) in &tasks {
                let of = |set: &BTreeSet<String>| {
                    set.iter().filter(|l| base_task(l) == *task).cloned().collect::<BTreeSet<_>>()
                };
                let (e, w) = (of(&expected), of(&would));
                // A dry run foresees no failure either: it runs no failure
                // handler (a lower bound), and what a failure cancels would
                // run (an upper bound, as for what waits on a change).
                let wrong = if *task == "h" && !always {
                    !w.is_empty()
                } else if !upstream_runs(task) {
                    e != w
                } else {
                    !Shape::is_dynamic(task) && !e.is_subset(&w)
                };
                if wrong {
                    return Err(at(diff(&format!("flow run --dry-exec of `{task}`"), &e, &w)));
                }
            }
        }

        // The run.
        let mut args = run_args(&["run", "--cpus", "2"], &aux, &src, shape);
        args.extend(policy.map(Policy::args).unwrap_or_default());
        match forced {
            Some(None) => args.push("--force".to_owned()),
            Some(Some(task)) => args.extend(["--only".to_owned(), task.to_owned()]),
            None => {}
        }
        let before = crate::run::run_ids(&dir).len();
        let out = match (kill, remote) {
            (Some((ms, signal)), _) => killed(&dir, &[args, worker].concat(), ms, signal),
            (None, Some(profile)) => on_a_remote_worker(&dir, &args, &worker, profile),
            (None, None) => flow(&dir, &[args, worker].concat()),
        };
        let done = take_log(&aux);
        let executed = labels(&done);
        // Outputs left on purpose make globs read more than a clean run
        // does: what ran is recorded, the next run must clear them away.
        if policy == Some(Policy::KeepStale) {
            record_from_journal(&mut model, &dir, before, &done).map_err(at)?;
            continue;
        }
        // `--max-fails 1` stops the run at the first failure: what else
        // ran depends on timing.
        let stopped = policy == Some(Policy::MaxFails(1)) && clean.iter().any(|d| d.failed);
        if !normal_run || stopped {
            // The oracle does not know the failure made here: `h` may react to it.
            let executed: BTreeSet<String> = executed.into_iter().filter(|l| base_task(l) != "h").collect();
            if !executed.is_subset(&expected) {
                return Err(at(diff("executed (a subset, in a failing or killed run)", &expected, &executed)));
            }
            record_from_journal(&mut model, &dir, before, &done)?;
            continue;
        }
        if out.code != fate.code {
            return Err(at(format!("flow run exited with {}, not {}:\n{}", out.code, fate.code, out.stderr)));
        }
        if executed != expected {
            return Err(at(diff("executed instances", &expected, &executed)));
        }
        // A run with nothing to execute may end before its worker joins.
        if remote.is_some() && !executed.is_empty() && !out.stderr.contains("+ worker 0 joined") {
            return Err(at(format!("no remote worker joined the run:\n{}", out.stderr)));
        }
        for d in &done {
            if d.failed { model.failed(&d.label) } else { model.succeeded(d, &dir) }
        }
        for c in clean.iter().filter(|c| !executed.contains(&c.label)) {
            model.unchanged(&c.label);
        }
        let real = outputs(&dir, &source_names);
        for (path, bytes) in clean_outputs {
            if real.get(path) != Some(bytes) {
                let got = real.get(path).map(|b| String::from_utf8_lossy(b).into_owned());
                return Err(at(format!("{path} is {got:?}, a clean run writes {:?}", String::from_utf8_lossy(bytes))));
            }
        }
        // No other file: not of an instance that vanished, was skipped,
        // failed or was cancelled by a failure (its files are moved aside).
        let extra: Vec<_> = real.keys().filter(|p| !clean_outputs.contains_key(*p)).collect();
        if checks.stale && !extra.is_empty() {
            return Err(at(format!(
                "outputs of instances that did not succeed are still visible: {extra:?} ({fate:?})"
            )));
        }
    }
    Ok(())
}

/// A run of a workflow with a task no worker can hold: refused with
/// status 2 before anything runs or moves.
fn refused(dir: &Path, aux: &Path, args: &[String], sources: &BTreeSet<&str>) -> Result<(), String> {
    let before = outputs(dir, sources);
    let out = flow(dir, args);
    let done = take_log(aux);
    if out.code != 2 || !done.is_empty() {
        return Err(format!("a task no worker can hold: status {}, ran {:?}\n{}", out.code, labels(&done), out.stderr));
    }
    if outputs(dir, sources) != before {
        return Err(format!("a refused run changed the outputs:\n{}", out.stderr));
    }
    Ok(())
}

/// After a failing or killed run: what its journal says succeeded is a
/// success, what it skipped as unchanged is finished, and an attempt that
/// started and did not succeed taints its instance.
fn record_from_journal(model: &mut Model, dir: &Path, before: usize, done: &[Done]) -> Result<(), String> {
    let ids = crate::run::run_ids(dir);
    if ids.len() <= before {
        return Ok(());
    }
    let id = ids.last().expect("a run");
    let list = flow(dir, &["log".into(), "--run".into(), id.clone(), "list".into(), "--json".into()]);
    // Per instance: whether an attempt started, and how the last one ended.
    let mut last: BTreeMap<String, (bool, &str)> = BTreeMap::new();
    let lines: Vec<serde_json::Value> = list.stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    for v in &lines {
        let label = normal(v["label"].as_str().unwrap_or_default());
        let started = !v["started_us"].is_null() && v["state"] != "cached";
        let entry = last.entry(label).or_default();
        entry.0 |= started;
        entry.1 = v["state"].as_str().unwrap_or_default();
    }
    for d in done {
        last.entry(d.label.clone()).or_default().0 = true;
    }
    for (label, (started, state)) in last {
        if state == "succeeded" {
            let Some(d) = done.iter().find(|d| d.label == label && !d.failed) else {
                return Err(format!("run {id} recorded {label} as succeeded, but its command did not finish"));
            };
            model.succeeded(d, dir);
        } else if state == "cached" {
            model.unchanged(&label);
        } else if started {
            model.failed(&label);
        }
    }
    Ok(())
}
