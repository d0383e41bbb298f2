//! `flow check`: every problem in a workflow at once; with `--cpus` … the
//! tasks that fit no such worker, with `--profile` the profile's problems
//! and the tasks its queue can never run.

use flow_engine::diag::{Code, Diagnostic};
use flow_engine::ir::{Command, Domain, GroupId};
use flow_engine::runtime::{Fit, fits};
use flow_engine::template::unquoted_items;

use crate::args::CheckArgs;
use crate::failure::Failure;
use crate::load::{self, Loaded};

/// Runs `flow check`.
pub fn check(args: &CheckArgs) -> Result<(), Failure> {
    let worker = load::worker(&args.worker)?;
    let loaded = load::load(&args.workflow, worker)?;
    if let Some(name) = &args.profile {
        against_profile(&loaded, name)?;
    }
    for note in unquoted_data(&loaded) {
        println!("note: {note}");
    }
    println!("ok: {} ({}) — {}", loaded.graph.name, loaded.source.name, crate::plan::counts(&loaded.graph));
    Ok(())
}

/// Tasks that put an item read from a file (`each_line`, `each_chunk`,
/// `from_json`) into their shell command without `shell_quote`: a line such
/// as `$(rm -rf ~)` in the data would run.
fn unquoted_data(loaded: &Loaded) -> Vec<String> {
    let graph = &loaded.graph;
    let mut notes = Vec::new();
    for (id, group) in graph.groups.iter().enumerate() {
        let Command::Shell(command) = &group.template.command else { continue };
        let from_data = matches!(
            graph.base_domain(GroupId(id as u32)),
            Domain::Lines { .. } | Domain::Json { .. } | Domain::Chunks { .. } | Domain::Deferred { .. }
        );
        if !from_data {
            continue;
        }
        let (line, col) = loaded.source.line_col(group.span.start);
        for expr in unquoted_items(command) {
            notes.push(format!(
                "{}:{line}:{col}: `{}` puts `{{{{ {expr} }}}}`, read from a data file, into its shell command \
                 unquoted, so shell syntax in the data runs; write `{{{{ {expr} | shell_quote }}}}`",
                loaded.source.name, group.name
            ));
        }
    }
    notes
}

/// How to fix the one queue limit a task exceeds, from the planner's reason.
fn limit_help(why: &str) -> &'static str {
    if why.starts_with("its time_request") {
        "lower the task's `time_request`, or raise the queue's `time_limit` in the profile"
    } else if why.contains("the queue allows at most") {
        "lower the task's `nodes`, or raise the queue's `max_workers` in the profile"
    } else {
        "lower the task's request (or add a smaller variant), or raise the queue's `worker` in the profile"
    }
}

/// Reads profile `name` and checks each task against its queue, as
/// `flow run --profile` would at its start. A task the queue can never run
/// is a problem; when the profile keeps the embedded worker, it is only a
/// note (that worker may run it).
fn against_profile(loaded: &Loaded, name: &str) -> Result<(), Failure> {
    let profile = crate::profile::load(&loaded.dir()?, name)?;
    let Some(queue) = profile.queue else { return Ok(()) };
    let mut never = Vec::new();
    for (group, fit) in loaded.graph.groups.iter().zip(fits(&loaded.graph, &queue)) {
        if let Fit::Never(why) = fit {
            never.push((group, why));
        }
    }
    if profile.local_worker {
        for (group, why) in never {
            println!(
                "note: `{}` can run only on the embedded worker: the queue of profile `{name}` cannot: {why}",
                group.name
            );
        }
        return Ok(());
    }
    if never.is_empty() {
        return Ok(());
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
