//! [`JobFactory`]: renders the graph's instances into the [`Job`]s workers
//! execute.

use std::cell::RefCell;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::container::ResolvedImage;
use crate::ir::{Command, Domain, Graph, GroupId, Item, StrPool, Stream, TaskId};
use crate::runtime::core::Allocation;
use crate::runtime::protocol::job::{FlowVars, Job, JobCommand, JobContainer, Setup, Sink};
use crate::template::{GroupScope, Reads, Renderer, Tmpl, group_scope, instance_scope, json_value};

mod conditions;
mod definition;

use definition::definition;

/// Compiled templates of one group.
struct GroupTemplates {
    command: Result<Tmpl, Vec<Tmpl>>,
    cwd: Option<Tmpl>,
    env: Vec<(String, Tmpl)>,
    stdin: Option<Tmpl>,
    stdout: Option<Tmpl>,
    stderr: Option<Tmpl>,
    inputs: Vec<Tmpl>,
    outputs: Vec<Tmpl>,
    setup: Vec<Tmpl>,
    /// A `when` decided per instance.
    when: Option<Tmpl>,
    /// For a nested group: the expansion file, rendered per parent instance.
    part_file: Option<Tmpl>,
    /// Context per variant, per attempt ([`scopes`]).
    scopes: Vec<Vec<Arc<GroupScope>>>,
}

/// Renders [`Job`]s for the instances of a graph.
pub struct JobFactory {
    graph: Arc<Graph>,
    renderer: Renderer,
    /// Renders `when`, whose `read` returns a file's text.
    when_renderer: Renderer,
    /// The paths `when_renderer` read.
    reads: Reads,
    groups: Vec<GroupTemplates>,
    base_dir: PathBuf,
    run_dir: PathBuf,
    /// Whether a `when` that reads a file not written yet lets its instance
    /// run ([`JobFactory::run_unread_conditions`]).
    run_unread: bool,
    /// Per group, the scripts its last job's command named.
    scripts: RefCell<Vec<Option<ScriptsMemo>>>,
}

/// The scripts a command and setup lines name from a working directory,
/// found without any declared files ([`crate::scripts::Scripts::tracked_except`]).
struct ScriptsMemo {
    command: JobCommand,
    setup: Vec<String>,
    cwd: PathBuf,
    found: crate::scripts::Scripts,
}

impl JobFactory {
    /// Compiles every group's templates. `base_dir` is the workflow's
    /// directory (absolute), `run_dir` the run's directory.
    pub fn new(graph: Arc<Graph>, base_dir: &Path, run_dir: &Path) -> Result<Self, String> {
        let mut renderer = Renderer::default();
        let reads = Reads::default();
        let mut when_renderer = Renderer::reading(base_dir.to_path_buf(), reads.clone());
        let vars = json_value(&graph.vars);
        let mut groups = Vec::with_capacity(graph.groups.len());
        for group in &graph.groups {
            let mut compile = |s: &str| renderer.compile(s).map_err(|e| format!("template of `{}`: {e}", group.name));
            let t = &group.template;
            let command = match &t.command {
                Command::Shell(s) => Ok(compile(s)?),
                Command::Argv(args) => Err(args.iter().map(|a| compile(a)).collect::<Result<_, _>>()?),
            };
            let stream = |s: &Stream, compile: &mut dyn FnMut(&str) -> Result<Tmpl, String>| match s {
                Stream::File(path) => compile(path).map(Some),
                Stream::Log | Stream::Null => Ok(None),
            };
            groups.push(GroupTemplates {
                command,
                cwd: t.cwd.as_deref().map(&mut compile).transpose()?,
                env: t.env.iter().map(|(k, v)| Ok((k.clone(), compile(v)?))).collect::<Result<_, String>>()?,
                stdin: t.stdin.as_deref().map(&mut compile).transpose()?,
                stdout: stream(&t.stdout, &mut compile)?,
                stderr: stream(&t.stderr, &mut compile)?,
                inputs: t.inputs.iter().map(|s| compile(s)).collect::<Result<_, _>>()?,
                outputs: t.outputs.iter().map(|s| compile(s)).collect::<Result<_, _>>()?,
                setup: t.setup.iter().map(|s| compile(s)).collect::<Result<_, _>>()?,
                when: match &t.when {
                    Some(w) => {
                        Some(when_renderer.compile(w).map_err(|e| format!("template of `{}`: {e}", group.name))?)
                    }
                    None => None,
                },
                part_file: match &group.domain {
                    Domain::Nested { expansion, .. } => Some(compile(expansion.file())?),
                    _ => None,
                },
                scopes: scopes(&vars, &graph, group),
            });
        }
        let scripts = RefCell::new(groups.iter().map(|_| None).collect());
        Ok(Self {
            graph,
            renderer,
            when_renderer,
            reads,
            groups,
            base_dir: base_dir.to_path_buf(),
            run_unread: false,
            run_dir: run_dir.to_path_buf(),
            scripts,
        })
    }

    /// The workflow's directory, which relative paths start from.
    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    /// The graph jobs are made from.
    pub fn graph(&self) -> &Arc<Graph> {
        &self.graph
    }

    /// Gives deferred group `base` and its `for_each` mirrors the `count`
    /// instances of `domain`, read from its expansion file; returns the
    /// groups changed.
    pub fn resolve(&mut self, base: GroupId, domain: Domain, count: u64) -> Vec<GroupId> {
        let graph = Arc::make_mut(&mut self.graph);
        graph.groups[base.index()].domain = domain;
        let members: Vec<GroupId> =
            (0..graph.groups.len() as u32).map(GroupId).filter(|&g| graph.base_group(g) == base).collect();
        let vars = json_value(&graph.vars);
        for &g in &members {
            graph.groups[g.index()].count = count;
            self.groups[g.index()].scopes = scopes(&vars, graph, graph.group(g));
        }
        members
    }

    /// The expansion file of nested group `base` for instance `outer` of
    /// its parent, rendered with that instance's `index` and `item`.
    pub fn part_file(&self, base: GroupId, outer: u64) -> Result<String, String> {
        let (Domain::Nested { parent, .. }, Some(tmpl)) =
            (&self.graph.group(base).domain, &self.groups[base.index()].part_file)
        else {
            return Err(format!("`{}` is not expanded per instance", self.graph.group(base).name));
        };
        let scope =
            instance_scope(&self.groups[parent.index()].scopes[0][0], self.graph.base_domain(*parent), outer, None);
        let name = &self.graph.group(base).name;
        self.renderer
            .render(tmpl, &scope)
            .map(|s| s.into_owned())
            .map_err(|e| format!("cannot render the file of `{name}`: {e}"))
    }

    /// Gives nested group `base` and its `for_each` mirrors the part that
    /// instance `outer` of its parent gave; returns the groups changed and
    /// the positions of the new instances.
    pub fn add_part(&mut self, base: GroupId, outer: u64, items: &StrPool) -> (Vec<GroupId>, Range<u64>) {
        Arc::make_mut(&mut self.graph).add_part(base, outer, items.iter())
    }

    /// `name[index]` for an instance (just `name` for a plain task).
    pub fn label(&self, task: TaskId) -> String {
        self.graph.label(task)
    }

    /// The files instance `task` writes (absolute), rendered as its first
    /// attempt in its first variant: its declared outputs, then the files
    /// its `stdout` and `stderr` go to.
    pub fn outputs(&self, task: TaskId) -> Result<Vec<PathBuf>, String> {
        let scope = self.scope(task, 0, 0);
        let label = self.label(task);
        let r = Rendering { renderer: &self.renderer, scope: &scope, label: &label, base_dir: &self.base_dir };
        let t = &self.groups[task.group.index()];
        let template = &self.graph.group(task.group).template;
        let stdout = r.sink(&template.stdout, t.stdout.as_ref(), "stdout")?;
        let stderr = r.sink(&template.stderr, t.stderr.as_ref(), "stderr")?;
        Ok(written(r.paths(&t.outputs, "outputs")?, [&stdout, &stderr]))
    }

    /// The template context of instance `task` for attempt `attempt` in
    /// variant `variant` (the first, if it has no such variant).
    fn scope(&self, task: TaskId, attempt: u32, variant: usize) -> minijinja::Value {
        let scopes = &self.groups[task.group.index()].scopes;
        let block = &scopes[(attempt as usize).min(scopes.len() - 1)];
        let group = block.get(variant).unwrap_or(&block[0]);
        instance_scope(group, self.graph.base_domain(task.group), task.instance, Some(attempt))
    }

    /// Renders instance `task` for attempt `attempt` with the resources in `alloc`.
    pub fn job(&self, task: TaskId, attempt: u32, alloc: &Allocation) -> Result<Job, String> {
        let group = self.graph.group(task.group);
        let t = &self.groups[task.group.index()];
        let label = self.label(task);
        let scope = self.scope(task, attempt, alloc.variant);
        let r = Rendering { renderer: &self.renderer, scope: &scope, label: &label, base_dir: &self.base_dir };
        let command = r.command(&t.command)?;
        let cwd = match &t.cwd {
            Some(c) => r.path(c, "cwd")?,
            None => self.base_dir.clone(),
        };
        let stdout = r.sink(&group.template.stdout, t.stdout.as_ref(), "stdout")?;
        let stderr = r.sink(&group.template.stderr, t.stderr.as_ref(), "stderr")?;
        let inputs = r.paths(&t.inputs, "inputs")?;
        let outputs = r.paths(&t.outputs, "outputs")?;
        let (mut chunk, mut stdin) = self.chunk(task);
        if let Some(s) = &t.stdin {
            stdin = Some(r.path(s, "stdin")?);
        }
        let env = r.env(&t.env)?;
        let setup_lines = t.setup.iter().map(|l| r.text(l, "setup")).collect::<Result<Vec<_>, _>>()?;
        let container = self.container(task, &label)?;
        let item = item_text(&self.graph, task);
        let implicit = if group.implicit_inputs {
            self.implicit_inputs(task.group, (&command, &setup_lines), &cwd, &inputs, &outputs)
        } else {
            Vec::new()
        };
        let definition = definition(
            &command,
            &self.base_dir,
            &cwd,
            &env,
            stdin.as_deref(),
            &outputs,
            &item,
            &setup_lines,
            container.map(|c| c.identity.as_str()),
            [&stdout, &stderr].map(Sink::file),
        );
        let outputs = written(outputs, [&stdout, &stderr]);
        let chunked = chunk.is_some();
        let item = self.item_var(task, item, &mut chunk);
        let domain = self.graph.base_domain(task.group);
        let flow = FlowVars {
            task: group.name.clone(),
            index: domain.index(task.instance),
            subindex: domain.subindex(task.instance),
            item_in_file: item.is_none(),
            item: item.unwrap_or_default(),
            chunk: chunked,
            run_dir: self.run_dir.clone(),
            variant: alloc.variant as u32,
        };
        let setup = (!setup_lines.is_empty()).then(|| Setup {
            lines: setup_lines,
            status_file: self.run_dir.join("setup").join(format!("{}.{}.{attempt}", group.name, task.instance)),
        });
        let cpus = alloc.cpus.iter().map(|(id, _)| *id).collect();
        let gpus = alloc.gpus.iter().map(|(id, _)| *id).collect();
        Ok(Job {
            task,
            attempt,
            label,
            command,
            cwd,
            env,
            flow: Some(flow),
            stdin,
            stdout,
            stderr,
            chunk,
            inputs,
            implicit,
            base_dir: self.base_dir.clone(),
            outputs,
            timeout: group.timeout.map(Duration::from_secs),
            cpus,
            gpus,
            setup,
            container: container.map(|c| JobContainer { engine: c.engine, image: c.image.clone() }),
            definition,
        })
    }

    /// The image instance `task` (labelled `label`) runs in, as the run
    /// checked it at its start.
    fn container(&self, task: TaskId, label: &str) -> Result<Option<&ResolvedImage>, String> {
        let Some(text) = &self.graph.group(task.group).template.container else { return Ok(None) };
        match self.graph.images.get(text) {
            Some(image) => Ok(Some(image)),
            None => Err(format!("the container `{text}` of {label} was not checked when the run started")),
        }
    }

    /// The chunk file of instance `task` (absolute) with its text, if its
    /// group reads its items in chunks, and the file as its stdin when the
    /// chunk is fed there.
    fn chunk(&self, task: TaskId) -> (Option<(PathBuf, String)>, Option<PathBuf>) {
        let domain = self.graph.base_domain(task.group);
        let feeds_stdin = match domain {
            Domain::Chunks { stdin, .. }
            | Domain::Nested { expansion: crate::ir::Expansion::Chunks { stdin, .. }, .. } => *stdin,
            _ => false,
        };
        let Some(file) = domain.chunk_file(task.instance) else { return (None, None) };
        let file = self.base_dir.join(file);
        let text = match self.graph.item(task.group, task.instance) {
            Item::Text(text) => text.to_owned(),
            _ => String::new(),
        };
        let feed = feeds_stdin.then(|| file.clone());
        (Some((file, text)), feed)
    }

    /// The scripts and programs the command and the setup lines of `run`
    /// name inside the workflow directory, resolved from `cwd`
    /// ([`crate::scripts`]), less the instance's declared `inputs` and
    /// `outputs`. Editing one reruns the tasks that run it. The files are
    /// looked up once for the consecutive jobs of a group with the same
    /// command, setup lines and `cwd`.
    fn implicit_inputs(
        &self,
        group: GroupId,
        (command, setup): (&JobCommand, &[String]),
        cwd: &Path,
        inputs: &[PathBuf],
        outputs: &[PathBuf],
    ) -> Vec<PathBuf> {
        let mut memos = self.scripts.borrow_mut();
        let memo = &mut memos[group.index()];
        let found = match memo {
            Some(m) if m.command == *command && m.setup == setup && m.cwd == cwd => &m.found,
            _ => {
                let found = crate::scripts::scripts(command.text(), setup, cwd, &self.base_dir, &[]);
                let new =
                    ScriptsMemo { command: command.clone(), setup: setup.to_vec(), cwd: cwd.to_path_buf(), found };
                &memo.insert(new).found
            }
        };
        let declared: Vec<PathBuf> = inputs.iter().chain(outputs).cloned().collect();
        found.tracked_except(&declared)
    }

    /// How instance `task` gets its item: in `FLOW_ITEM`, or, as one
    /// environment string may not exceed 128 KiB (the kernel's
    /// MAX_ARG_STRLEN), a larger one as a file — its chunk file, or one
    /// written for it (then set as its `chunk`). `None`: in the chunk file.
    fn item_var(&self, task: TaskId, item: String, chunk: &mut Option<(PathBuf, String)>) -> Option<String> {
        if item.len() <= MAX_ENV_ITEM {
            return Some(item);
        }
        if chunk.is_none() {
            let name = &self.graph.group(task.group).name;
            let file = self.base_dir.join(format!(".flow/items/{name}/{}.txt", task.instance));
            *chunk = Some((file, item));
        }
        None
    }
}

/// Renders one job's templates in its context, naming the key and the
/// instance when one fails.
/// What an instance writes: its declared `outputs`, then the files its
/// streams go to, which are outputs like the others — stamped when it
/// succeeds, checked before it is skipped, moved aside when it does not
/// succeed or before it runs again.
fn written(mut outputs: Vec<PathBuf>, streams: [&Sink; 2]) -> Vec<PathBuf> {
    for file in streams.into_iter().filter_map(Sink::file) {
        if !outputs.iter().any(|o| o == file) {
            outputs.push(file.to_path_buf());
        }
    }
    outputs
}

struct Rendering<'a> {
    renderer: &'a Renderer,
    scope: &'a minijinja::Value,
    label: &'a str,
    base_dir: &'a Path,
}

impl Rendering<'_> {
    /// The text of `tmpl`, the value of `key`.
    fn text(&self, tmpl: &Tmpl, key: &str) -> Result<String, String> {
        let label = self.label;
        self.renderer
            .render(tmpl, self.scope)
            .map(|s| s.into_owned())
            .map_err(|e| format!("cannot render `{key}` of {label}: {e}"))
    }

    /// The path `tmpl` names, from the workflow's directory.
    fn path(&self, tmpl: &Tmpl, key: &str) -> Result<PathBuf, String> {
        self.text(tmpl, key).map(|text| self.base_dir.join(text))
    }

    /// The paths `tmpls` name.
    fn paths(&self, tmpls: &[Tmpl], key: &str) -> Result<Vec<PathBuf>, String> {
        tmpls.iter().map(|t| self.path(t, key)).collect()
    }

    /// The command: a shell line or an argument vector.
    fn command(&self, command: &Result<Tmpl, Vec<Tmpl>>) -> Result<JobCommand, String> {
        Ok(match command {
            Ok(shell) => JobCommand::Shell(self.text(shell, "command")?),
            Err(argv) => JobCommand::Argv(argv.iter().map(|a| self.text(a, "argv")).collect::<Result<_, _>>()?),
        })
    }

    /// Where a stream goes: nowhere, a file, or the run log.
    fn sink(&self, stream: &Stream, tmpl: Option<&Tmpl>, key: &str) -> Result<Sink, String> {
        Ok(match (stream, tmpl) {
            (Stream::Null, _) => Sink::Null,
            (Stream::File(_), Some(t)) => Sink::File(self.path(t, key)?),
            _ => Sink::Log,
        })
    }

    /// The task's own environment variables.
    fn env(&self, env: &[(String, Tmpl)]) -> Result<Vec<(String, String)>, String> {
        env.iter().map(|(k, v)| Ok((k.clone(), self.text(v, &format!("env.{k}"))?))).collect()
    }
}

/// The contexts of `group`'s instances: per attempt (the first, then each
/// retry whose requests grow), one per variant.
fn scopes(vars: &minijinja::Value, graph: &Graph, group: &crate::ir::Group) -> Vec<Vec<Arc<GroupScope>>> {
    let for_each = match &group.domain {
        Domain::Same { group } => Some(graph.group(*group).name.as_str()),
        _ => None,
    };
    let blocks = std::iter::once(&group.variants).chain(&group.retry_variants);
    blocks.map(|b| b.iter().map(|v| group_scope(vars, &group.name, group.count, for_each, v)).collect()).collect()
}

/// Items up to this many bytes are passed in `FLOW_ITEM`; larger ones in a
/// file named by `FLOW_ITEM_FILE` (half the kernel's 128 KiB limit on one
/// environment string, leaving room for the task's own long variables).
const MAX_ENV_ITEM: usize = 64 * 1024;

/// An instance's item as text (`FLOW_ITEM`): the line, the chunk, the JSON.
fn item_text(graph: &Graph, task: TaskId) -> String {
    match graph.item(task.group, task.instance) {
        Item::None => String::new(),
        Item::Int(n) => n.to_string(),
        Item::Text(t) | Item::Json(t) => t.to_owned(),
        Item::Object(map) => serde_json::Value::Object(map).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::compile_toml as graph;
    use crate::container::{ContainerEngine, Image};
    use crate::runtime::protocol::job::relative;

    const WORKFLOW: &str = "[[tasks]]\nname = \"plain\"\ncommand = \"true\"\n\
                            [[tasks]]\nname = \"boxed\"\nsetup = [\"module load x/{{ index }}\"]\n\
                            container = \"localhost/t:1\"\ncommand = \"true\"\n";

    #[test]
    fn setup_lines_and_the_image_identity_are_in_the_job_and_its_definition() {
        let mut g = graph(WORKFLOW);
        let image = Image::Reference("localhost/t:1".into());
        let resolved =
            ResolvedImage { engine: ContainerEngine::Podman, image: image.clone(), identity: "sha256:1".into() };
        g.images.insert("localhost/t:1".into(), resolved);
        let factory = JobFactory::new(Arc::new(g), Path::new("/w"), Path::new("/w/.flow/runs/r")).unwrap();
        let boxed = factory.graph().find("boxed").unwrap();
        let job = factory.job(TaskId::new(boxed, 0), 1, &Allocation::default()).unwrap();
        let setup = job.setup.as_ref().unwrap();
        assert_eq!(setup.lines, ["module load x/0"]);
        assert_eq!(setup.status_file, Path::new("/w/.flow/runs/r/setup/boxed.0.1"));
        let status = ("FLOW_SETUP_STATUS".to_owned(), "/w/.flow/runs/r/setup/boxed.0.1".to_owned());
        assert!(job.environment().contains(&status));
        assert_eq!(job.container, Some(JobContainer { engine: ContainerEngine::Podman, image }));
        let definition: serde_json::Value = serde_json::from_str(&job.definition).unwrap();
        assert_eq!(definition["setup"], serde_json::json!(["module load x/0"]));
        assert_eq!(definition["container"], "sha256:1");

        // A task without either has the definition it always had.
        let plain = factory.graph().find("plain").unwrap();
        let job = factory.job(TaskId::new(plain, 0), 0, &Allocation::default()).unwrap();
        assert_eq!((job.setup, job.container), (None, None));
        assert_eq!(job.definition, r#"{"command":"true","cwd":"","env":[],"item":"","outputs":[],"stdin":null}"#);
    }

    #[test]
    fn an_image_the_run_did_not_check_fails_the_job() {
        let factory = JobFactory::new(Arc::new(graph(WORKFLOW)), Path::new("/w"), Path::new("/w/r")).unwrap();
        let boxed = factory.graph().find("boxed").unwrap();
        let err = factory.job(TaskId::new(boxed, 0), 0, &Allocation::default()).unwrap_err();
        assert_eq!(err, "the container `localhost/t:1` of boxed was not checked when the run started");
    }

    /// The definition is written as the `serde_json` object with the same
    /// keys always was: earlier runs' fingerprints must still match.
    #[test]
    fn a_definition_is_written_as_before() {
        let base = Path::new("/w");
        let env = vec![("A".to_owned(), "1 \"q\"".to_owned()), ("B".to_owned(), String::new())];
        let outputs = vec![PathBuf::from("/w/out/3.txt"), PathBuf::from("/elsewhere/é.txt")];
        let commands =
            [JobCommand::Shell("python score.py 3".to_owned()), JobCommand::Argv(vec!["a".into(), "b c".into()])];
        for command in &commands {
            for (stdin, setup, image) in [
                (None, vec![], None),
                (Some(Path::new("/w/in.txt")), vec![], None),
                (None, vec!["module load x".to_owned()], Some("sha256:1")),
            ] {
                let mut before = serde_json::json!({
                    "item": "x\ny",
                    "command": match command { JobCommand::Shell(s) => serde_json::json!(s), JobCommand::Argv(a) => serde_json::json!(a) },
                    "cwd": relative(Path::new("/w/sub"), base),
                    "env": env,
                    "stdin": stdin.map(|p| relative(p, base)),
                    "outputs": outputs.iter().map(|p| relative(p, base)).collect::<Vec<_>>(),
                });
                if !setup.is_empty() {
                    before["setup"] = serde_json::json!(setup);
                }
                if let Some(image) = image {
                    before["container"] = serde_json::json!(image);
                }
                let now = definition(
                    command,
                    base,
                    Path::new("/w/sub"),
                    &env,
                    stdin,
                    &outputs,
                    "x\ny",
                    &setup,
                    image,
                    [None; 2],
                );
                assert_eq!(now, before.to_string());
            }
        }
    }
}
