//! `flow check`: every problem in a workflow at once; with `--cpus` … the
//! tasks that fit no such worker, with `--profile` the profile's problems
//! and the tasks its queue can never run.

use flow_engine::diag::Diagnostic;
use flow_engine::runtime::alloc::planner::{Fit, fits};

use crate::args::CheckArgs;
use crate::load::{self, Failure, Loaded};

/// Runs `flow check`.
pub fn check(args: &CheckArgs) -> Result<(), Failure> {
    let worker = load::worker(&args.worker)?;
    let loaded = load::load(&args.workflow, worker)?;
    if let Some(name) = &args.profile {
        against_profile(&loaded, name)?;
    }
    println!("ok: {} ({}) — {}", loaded.graph.name, loaded.source.name, crate::plan::counts(&loaded.graph));
    Ok(())
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
                "flow::check::queue",
                format!("the queue of profile `{name}` can never run `{}`: {why}", group.name),
            )
            .at(group.span.clone(), "this task")
            .help(
                "lower the task's request, or raise the queue's `time_limit`, `worker` or `max_workers` in the profile",
            )
        })
        .collect();
    Err(Failure::Invalid { source: loaded.source.clone(), diagnostics })
}
