//! `flow explain`: why a task instance is still waiting, or what happened
//! to it — one instance in detail, or every instance of a task summarised.

use std::path::{Path, PathBuf};

use clap::Args;
use flow_engine::explain::Explainer;
use flow_engine::ir::Selector;
use flow_engine::ir::{Domain, Graph, TaskId};
use flow_engine::log::State;
use flow_engine::rundir::{RunDir, RunJournal, RunView, locate};
use flow_engine::runtime::origin;

use crate::explain_display::{self, Text};
use crate::failure::Failure;
use crate::stdout::say;
use crate::stdout::to_stdout;

/// `flow explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The task instance, `score[3]`, or a whole task, `score`.
    #[arg(value_name = "SELECTOR")]
    pub selector: String,
    /// The workflow whose runs to read [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
    /// The run: its id or a unique prefix of it [default: the latest].
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// One JSON object per instance, one per line: the reason's kind and details.
    #[arg(long)]
    pub json: bool,
}

/// Runs `flow explain`.
pub fn run(args: &ExplainArgs) -> Result<(), Failure> {
    let cwd = std::env::current_dir().map_err(|e| Failure::Io(format!("cannot read the current directory: {e}")))?;
    let dir = locate(args.workflow.as_deref(), args.run.as_deref(), &cwd)?;
    let now_us = flow_engine::host::now_us();
    let run = RunView::read(&dir)?;
    let journal = run.journal()?;
    if let Some(text) =
        never_known(&run, &journal, &args.selector).or_else(|| part_never_known(&run, &journal, &args.selector))
    {
        return crate::stdout::print(format_args!("{text}\n"));
    }
    let tasks = select(&run.graph, &args.selector, &format!("run {}", dir.id))?;
    if let Some(torn) = journal.health.torn {
        say!("warning: the journal ends with {} bytes of an incomplete record; ignored", torn.bytes);
    }
    for damage in &journal.health.damage {
        say!("warning: the journal is damaged: {damage}; what it recorded there is not known");
    }
    let explainer = Explainer::new(&run, &journal, now_us);
    let origin = match tasks[..] {
        [task] => journal.state.get(task).filter(|e| e.status == State::Cached).and_then(|e| {
            let state = dir.path.parent().and_then(Path::parent)?;
            let (from, _) = origin(state, &dir.id, &run.graph.label(task), e.fingerprint.as_ref()?)?;
            Some(from.id)
        }),
        _ => None,
    };
    let text = Text { now_us, access: access_hint(&dir, &cwd), origin };
    to_stdout(|out| {
        if args.json {
            tasks.iter().try_for_each(|&task| {
                let ex = explainer.explain(task);
                crate::json::write_line(out, &crate::json::Explained::new(&ex, text.headline(&ex)))
            })
        } else if let [task] = tasks[..] {
            explain_display::instance(out, &text, &explainer.explain(task))
        } else {
            let state = if run.live {
                "running"
            } else if run.is_finished() {
                "finished"
            } else {
                "stopped"
            };
            let name = &run.graph.group(tasks[0].group).name;
            let instances = flow_engine::units::plural(tasks.len() as u64, "instance");
            let header = format!("{name}: {instances} in run {} ({state})", dir.id);
            explain_display::summary(out, tasks.iter().map(|&task| explainer.explain(task)), &text, &header)
        }
    })
}

/// For a dynamic stage whose instances this run never learned: why, from
/// where its writers got to.
fn never_known(run: &RunView, journal: &RunJournal, selector: &str) -> Option<String> {
    let graph = &run.graph;
    let group = graph.find(Selector::parse(selector).ok()?.name.as_str())?;
    let writers = graph.waits_for(group)?;
    let Domain::Deferred { expansion } = graph.base_domain(group) else { return None };
    let mut states = Vec::new();
    for w in writers {
        let count = graph.group(w).count;
        let of = |status: State| {
            (0..count).filter(|&i| journal.state.get(TaskId::new(w, i)).is_some_and(|e| e.status == status)).count()
        };
        let state = match (of(State::Failed), of(State::Cancelled)) {
            (0, 0) if run.live => "has not finished".to_owned(),
            (0, 0) => "did not finish".to_owned(),
            (0, _) => "was cancelled".to_owned(),
            _ => "failed".to_owned(),
        };
        states.push(format!("`{}` {state}", graph.group(w).name));
    }
    let name = &graph.group(group).name;
    let file = expansion.file();
    let how = if run.live { "not known yet" } else { "never known" };
    Some(format!(
        "{name}: its instances are {how}: it expands over `{file}` once its writers are done, and {}",
        states.join(", ")
    ))
}

/// For a part of a nested task that this run never learned (`refine[2]`,
/// `refine[2.0]`): why, from where its parent instance got to.
fn part_never_known(run: &RunView, journal: &RunJournal, selector: &str) -> Option<String> {
    let graph = &run.graph;
    let sel = Selector::parse(selector).ok()?;
    let group = graph.find(&sel.name)?;
    let Domain::Nested { parent, expansion, parts } = graph.base_domain(group) else { return None };
    let index = sel.indices.as_ref()?.first().filter(|r| r.count == 1)?.start;
    if parts.positions(index).is_some() {
        return None;
    }
    let outer = graph.position(*parent, index)?;
    let state = match journal.state.get(TaskId::new(*parent, outer)).map(|e| e.status) {
        Some(State::Failed) => "failed",
        Some(State::Cancelled) => "was cancelled",
        _ if run.live => "has not finished",
        _ => "did not finish",
    };
    let how = if run.live { "not known yet" } else { "never known" };
    let file = part_file(graph, *parent, outer, expansion.file()).unwrap_or_else(|| expansion.file().to_owned());
    let parent = graph.label(TaskId::new(*parent, outer));
    Some(format!(
        "{}[{index}.?]: its instances are {how}: they come from `{file}` once {parent} is done, and {parent} {state}",
        graph.group(group).name,
    ))
}

/// The file `template` names for instance `outer` of `parent`, as the run
/// renders it.
fn part_file(graph: &Graph, parent: flow_engine::ir::GroupId, outer: u64, template: &str) -> Option<String> {
    use flow_engine::template::{Renderer, group_scope, instance_scope, json_value};
    let group = graph.group(parent);
    let scope = group_scope(&json_value(&graph.vars), &group.name, group.count, None, group.variants.first()?);
    let scope = instance_scope(&scope, graph.base_domain(parent), outer, None);
    Renderer::default().render_str(template, &scope).ok()
}

/// The instances `text` names, in order.
pub(crate) fn select(graph: &Graph, text: &str, within: &str) -> Result<Vec<TaskId>, Failure> {
    let selector = Selector::parse(text).map_err(|e| Failure::Usage(e.to_string()))?;
    let selected = selector.resolve(graph).map_err(|e| Failure::Usage(format!("`{text}` in {within}: {e}")))?;
    let count = graph.group(selected.group).count;
    match selected.positions {
        None if count == 0 => Err(Failure::Usage(format!("`{text}` has no instances"))),
        None => Ok((0..count).map(|i| TaskId::new(selected.group, i)).collect()),
        Some(positions) => Ok(positions.into_iter().map(|i| TaskId::new(selected.group, i)).collect()),
    }
}

/// How to start a worker for a run that listens for them, if it does.
fn access_hint(dir: &RunDir, cwd: &Path) -> Option<String> {
    let access = dir.access();
    access.exists().then(|| access.strip_prefix(cwd).unwrap_or(&access).display().to_string())
}
