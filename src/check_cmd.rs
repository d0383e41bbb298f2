//! `flow check`: every problem in a workflow at once; with `--cpus` … the
//! tasks that fit no such worker, with `--profile` the profile's problems
//! and the tasks its queue can never run.

use flow_engine::diag::{Code, Diagnostic, Source};
use flow_engine::ir::{Command, Domain, Expansion, GroupId, Resources};
use flow_engine::profile::Profile;
use flow_engine::resources::Unfit;
use flow_engine::runtime::{Fit, fits};
use flow_engine::template::{LeakKind, data_leaks, group_scope, json_value};

use crate::args::CheckArgs;
use crate::exit_codes;
use crate::failure::Failure;
use crate::json::{CheckDiagnostic, CheckReport, Severity};
use crate::load_workflow::{self, Loaded};

/// Runs `flow check`; returns its exit code. With `--json`, problems are
/// printed as one document on stdout, with the same exit code.
pub fn check(args: &CheckArgs) -> Result<u8, Failure> {
    let checked = checked(args);
    if !args.json {
        let (loaded, notes) = checked?;
        for note in notes {
            crate::stdout::print(format_args!("{}\n", note.text(&loaded.source)))?;
        }
        crate::stdout::print(format_args!(
            "ok: {} ({}) — {}\n",
            loaded.graph.name,
            loaded.source.name,
            crate::plan::counts(&loaded.graph)
        ))?;
        return Ok(exit_codes::SUCCESS);
    }
    let (report, code) = match checked {
        Ok((loaded, notes)) => {
            let diagnostics = notes.iter().map(|n| n.json(&loaded.source)).collect();
            let name = Some(loaded.graph.name.clone());
            (
                CheckReport { ok: true, file: loaded.source.name.clone(), workflow: name, diagnostics },
                exit_codes::SUCCESS,
            )
        }
        Err(Failure::Invalid { source, diagnostics }) => {
            let diagnostics = diagnostics.iter().map(|d| CheckDiagnostic::error(d, &source)).collect();
            (
                CheckReport { ok: false, file: source.name.clone(), workflow: None, diagnostics },
                exit_codes::INVALID_INPUT,
            )
        }
        Err(failure) => return Err(failure),
    };
    crate::stdout::to_stdout(|out| crate::json::write_document(out, &report))?;
    Ok(code)
}

/// The workflow, loaded and checked, and the notes about it.
fn checked(args: &CheckArgs) -> Result<(Loaded, Vec<Note>), Failure> {
    let worker = load_workflow::worker(&args.worker)?;
    let loaded = load_workflow::load(&args.workflow, worker)?;
    let profile = match &args.profile {
        Some(name) => Some(crate::profile_arg::load(&loaded.dir()?, name)?),
        None => None,
    };
    let mut notes = match &profile {
        Some(profile) => against_profile(&loaded, profile)?,
        None => Vec::new(),
    };
    if let Some(message) = crate::container_note::engines(&loaded, profile.as_ref()) {
        notes.push(Note { code: Code::CheckContainers, at: None, message, warning: false });
    }
    for (at, message) in crate::container_note::missing_images(&loaded, profile.as_ref()) {
        notes.push(Note { code: Code::CheckMissingImage, at, message, warning: true });
    }
    notes.extend(unquoted_data(&loaded));
    notes.extend(untracked_scripts(&loaded)?);
    Ok((loaded, notes))
}

impl CheckDiagnostic {
    fn error(d: &Diagnostic, workflow: &Source) -> Self {
        let d = &d.located(workflow);
        let source = d.source.as_deref().unwrap_or(workflow);
        let (line, column) = d.span.as_ref().map(|s| source.line_col(s.start)).unzip();
        CheckDiagnostic {
            code: d.code.as_str(),
            severity: Severity::Error,
            message: d.message.clone(),
            file: source.name.clone(),
            line,
            column,
            label: d.label.clone(),
            help: d.help.clone(),
        }
    }
}

/// A note about a valid workflow, at a byte offset of it or about all of
/// it; a warning says what `flow run` would refuse as things are.
struct Note {
    code: Code,
    at: Option<usize>,
    message: String,
    warning: bool,
}

impl Note {
    /// `note: …`'s (or `warning: …`'s) text: `file:line:column: message`, or the message.
    fn text(&self, source: &Source) -> String {
        let kind = if self.warning { "warning" } else { "note" };
        match self.at {
            Some(at) => format!("{kind}: {}: {}", source.position(at), self.message),
            None => format!("{kind}: {}", self.message),
        }
    }

    fn json(&self, source: &Source) -> CheckDiagnostic {
        let (file, at) = self.at.map_or((source, None), |at| {
            let (file, at) = source.place(at);
            (file, Some(at))
        });
        let (line, column) = at.map(|at| file.line_col(at)).unzip();
        CheckDiagnostic {
            code: self.code.as_str(),
            severity: if self.warning { Severity::Warning } else { Severity::Note },
            message: self.message.clone(),
            file: file.name.clone(),
            line,
            column,
            label: None,
            help: None,
        }
    }
}

/// Tasks that put an item read from a file (`each_line`, `each_chunk`,
/// `from_json`) into a shell string — their command or a `setup` line —
/// without `shell_quote`: a line such as `$(rm -rf ~)` in the data would
/// run. The engine follows the data through the template ([`data_leaks`]).
fn unquoted_data(loaded: &Loaded) -> Vec<Note> {
    let graph = &loaded.graph;
    let vars = json_value(&graph.vars);
    let mut notes = Vec::new();
    for (id, group) in graph.groups.iter().enumerate() {
        let command = match &group.template.command {
            Command::Shell(command) => Some((Place::Command, command)),
            _ => None,
        };
        let setup = group.template.setup.iter().map(|line| (Place::Setup, line));
        let shell_strings: Vec<(Place, &String)> = command.into_iter().chain(setup).collect();
        if shell_strings.is_empty() {
            continue;
        }
        let json = match graph.base_domain(GroupId(id as u32)) {
            Domain::Json { .. } => true,
            Domain::Deferred { expansion } | Domain::Nested { expansion, .. } => {
                matches!(expansion, Expansion::Json { .. })
            }
            Domain::Lines { .. } | Domain::Chunks { .. } => false,
            _ => continue,
        };
        let resources = group.variants.first().cloned().unwrap_or_else(Resources::default);
        let scope = group_scope(&vars, &group.name, group.count, None, &resources);
        for (place, text) in shell_strings {
            for leak in data_leaks(text, &scope, json) {
                let (task, expr) = (&group.name, &leak.name);
                let (into, inside) = match place {
                    Place::Command => ("its shell command", ""),
                    Place::Setup => ("a `setup` line", " of a `setup` line"),
                };
                let message = match leak.kind {
                    LeakKind::Unquoted => format!(
                        "`{task}` puts `{{{{ {expr} }}}}`, read from a data file, into {into} \
                         unquoted, so shell syntax in the data runs; write `{{{{ {expr} | shell_quote }}}}`"
                    ),
                    LeakKind::Changed => format!(
                        "`{task}` changes `{{{{ {expr} | shell_quote }}}}`{inside} with a filter after `shell_quote`, \
                         which can undo the quoting of data read from a file; make `shell_quote` the last filter"
                    ),
                    LeakKind::InQuotes => format!(
                        "`{task}` puts `{{{{ {expr} | shell_quote }}}}` inside quotes{inside}, where its own quotes \
                         are taken literally and shell syntax in the data runs; write it outside quotes"
                    ),
                };
                notes.push(Note { code: Code::CheckUnquotedData, at: Some(group.span.start), message, warning: false });
            }
        }
    }
    notes
}

/// The shell strings of a task, for [`unquoted_data`]'s messages.
#[derive(Clone, Copy)]
enum Place {
    Command,
    Setup,
}

/// Tasks whose command names a script flow cannot count as an input
/// (`sh $PWD/helper.sh`, a file that is not there): editing it would not
/// rerun them. One note per task.
fn untracked_scripts(loaded: &Loaded) -> Result<Vec<Note>, Failure> {
    let graph = &loaded.graph;
    let found = flow_engine::scripts::untracked_in(graph, &loaded.dir()?);
    let note = |(id, untracked): (GroupId, Vec<_>)| {
        let group = graph.group(id);
        let message = flow_engine::scripts::untracked_note(&group.name, &untracked);
        Note { code: Code::CheckUntrackedScript, at: Some(group.span.start), message, warning: false }
    };
    Ok(found.into_iter().map(note).collect())
}

/// How to fix the one queue limit a task exceeds, from the planner's reason.
fn limit_help(why: &Unfit) -> &'static str {
    match why {
        Unfit::LongerThanQueue { .. } | Unfit::LongerThanWorker { .. } => {
            "lower the task's `time_request`, or raise the queue's `time_limit` in the profile"
        }
        Unfit::OverQueueMax { .. } => "lower the task's `nodes`, or raise the queue's `max_workers` in the profile",
        _ => "lower the task's request (or add a smaller variant), or raise the queue's `worker` in the profile",
    }
}

/// Checks each task against the queue of `profile`, as `flow run
/// --profile` would at its start. A task the queue can never run is a
/// problem; when the profile keeps the embedded worker, it is only a note
/// (that worker may run it).
fn against_profile(loaded: &Loaded, profile: &Profile) -> Result<Vec<Note>, Failure> {
    let name = &profile.name;
    let Some(queue) = &profile.queue else { return Ok(Vec::new()) };
    let mut never = Vec::new();
    for (group, fit) in loaded.graph.groups.iter().zip(fits(&loaded.graph, queue)) {
        if let Fit::Never(why) = fit {
            never.push((group, why));
        }
    }
    if profile.local_worker {
        let note = |(group, why): (&flow_engine::ir::Group, Unfit)| Note {
            code: Code::CheckQueue,
            at: None,
            message: format!(
                "`{}` can run only on the embedded worker: the queue of profile `{name}` cannot: {why}",
                group.name
            ),
            warning: false,
        };
        return Ok(never.into_iter().map(note).collect());
    }
    if never.is_empty() {
        return Ok(Vec::new());
    }
    let diagnostics = never
        .into_iter()
        .map(|(group, why)| {
            Diagnostic::new(
                Code::CheckQueue,
                format!("the queue of profile `{name}` can never run `{}`: {why}", group.name),
            )
            .at(group.span.clone(), "this task")
            .help(limit_help(&why))
        })
        .collect();
    Err(Failure::Invalid { source: loaded.source.clone(), diagnostics })
}
