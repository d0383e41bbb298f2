//! `flow run`: compile, start the run, and show its events — a progress bar
//! on a terminal, plain lines otherwise, NDJSON with `--json`.

use std::path::{Path, PathBuf};

use clap::Args;
use flow_engine::ir::Selector;
use flow_engine::runtime::{Event, RunDir, RunOptions};

use crate::args::{WorkerArgs, WorkflowArgs};
use crate::failure::Failure;
use crate::load_workflow;
use crate::run_display::{Commands, Display};

/// `flow run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub workflow: WorkflowArgs,
    /// Resources of the embedded worker (default: this machine's).
    #[command(flatten)]
    pub worker: WorkerArgs,
    /// Stop starting new tasks after this many instances failed (overrides the workflow's `max_fails`).
    #[arg(long, value_name = "N")]
    pub max_fails: Option<u64>,
    /// Keep running independent tasks after a failure, whatever the workflow's `max_fails` says.
    #[arg(long, conflicts_with = "max_fails")]
    pub keep_going: bool,
    /// Rerun every instance, even those an earlier run finished unchanged.
    #[arg(long)]
    pub force: bool,
    /// Rerun these instances and everything downstream: `score[3]`, `expand` (repeatable).
    #[arg(long, value_name = "SELECTOR")]
    pub only: Vec<String>,
    /// Print events as JSON lines on stdout instead of a progress display.
    #[arg(long)]
    pub json: bool,
    /// Complete every task instantly without starting processes (measures the engine).
    #[arg(long)]
    pub dry_exec: bool,
    /// Leave the outputs earlier runs recorded for instances that no longer
    /// exist where they are (by default they are moved into the run directory).
    #[arg(long)]
    pub keep_stale_outputs: bool,
    /// Bind each task to the CPU ids it was given.
    #[arg(long)]
    pub bind_cpus: bool,
    /// Accept remote workers on this address, e.g. `0.0.0.0:0` (port 0 picks a free port);
    /// they join with `flow worker --access .flow/runs/<id>/access.json`.
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: Option<String>,
    /// Run no tasks in this process: only on remote workers (needs `--listen` or a profile that listens).
    #[arg(long)]
    pub no_local_worker: bool,
    /// Use the cluster settings of this profile (`flow.profiles.toml` next to the workflow,
    /// or `~/.config/flow/profiles.toml`): an allocation queue, a listen address.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Let the workflow owner's group read, not write, the run's files (`.flow`
    /// and run directories 0750 instead of 0700, files 0640 instead of 0600).
    #[arg(long, env = "FLOW_SHARE_WITH_GROUP")]
    pub share_with_group: bool,
    /// When the run ends, however it ends, write its HTML report (see `flow report`)
    /// to `report.html` in the run's directory, or with `--report=FILE` to FILE.
    /// The value needs the `=`: `flow run --report workflow.toml` runs workflow.toml.
    #[arg(long, value_name = "FILE", require_equals = true)]
    pub report: Option<Option<PathBuf>>,
}

/// How the closing lines name the run: `-w FILE` when `flow log` run here
/// would not find its `.flow` directory.
fn commands(workflow: Option<&Path>, run: Option<&RunDir>) -> Commands {
    let cwd = std::env::current_dir().unwrap_or_default();
    let canonical = |p: &Path| fs_err::canonicalize(p).ok();
    let state = run.and_then(|r| r.path.parent()).and_then(Path::parent).and_then(canonical);
    let found = flow_engine::runtime::state_dir(None, &cwd).ok().and_then(|d| canonical(&d));
    let workflow = workflow.filter(|_| state.is_none() || state != found).map(Path::to_path_buf);
    Commands { cwd: canonical(&cwd).unwrap_or(cwd), workflow }
}

/// Runs the workflow; returns the process exit code.
pub fn run(args: &RunArgs) -> Result<u8, Failure> {
    if let Some(Some(file)) = &args.report {
        crate::report_cmd::check_output(file)?;
    }
    let loaded = load_workflow::load(&args.workflow, None)?;
    let (workflow, base_dir) = (loaded.absolute()?, loaded.dir()?);
    let profile = args.profile.as_deref().map(|name| crate::profile_arg::load(&base_dir, name)).transpose()?;
    let listen = args.listen.clone().or_else(|| profile.as_ref().and_then(|p| p.listen.clone()));
    if args.no_local_worker && listen.is_none() {
        return Err(Failure::Usage(
            "`--no-local-worker` needs `--listen` (or a profile with a queue): otherwise nothing runs the tasks".into(),
        ));
    }
    let local = !args.no_local_worker && profile.as_ref().is_none_or(|p| p.local_worker);
    let container_engine = profile.as_ref().and_then(|p| p.container_engine);
    let queue = profile.and_then(|p| p.queue.map(|q| (p.name, q)));
    let only = args
        .only
        .iter()
        .map(|s| Selector::parse(s).map_err(|e| Failure::Usage(e.to_string())))
        .collect::<Result<_, _>>()?;
    let options = RunOptions {
        base_dir,
        workflow,
        worker: crate::local_resources::local(&args.worker)?,
        max_fails: args.max_fails,
        keep_going: args.keep_going,
        force: args.force,
        only,
        dry_exec: args.dry_exec,
        keep_stale_outputs: args.keep_stale_outputs,
        bind_cpus: args.bind_cpus,
        guard: if args.dry_exec || !local { None } else { crate::guard_cmd::start() },
        listen,
        local,
        container_engine,
        queue,
        share_with_group: args.share_with_group,
        command_line: std::env::args().collect(),
    };
    let graph = args.json.then(|| loaded.graph.clone());
    // What loading and compiling freed goes back before the run allocates.
    crate::memory::return_freed_memory_now();
    let handle = flow_engine::runtime::start(loaded.graph, loaded.source, options)?;
    let mut display = Display::new(graph);
    let mut run_dir = None;
    for batch in &handle.events {
        let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
        for event in &batch {
            if let Event::RunStarted { run_id, run_dir: path, .. } = event {
                run_dir = Some(RunDir { id: run_id.clone(), path: path.clone() });
            }
            display.show(event, &mut out, &mut err);
        }
        handle.recycle(batch);
    }
    let summary = handle.join();
    if let Ok(summary) = &summary {
        let commands = commands(args.workflow.workflow.as_deref(), run_dir.as_ref());
        display.finish(summary, &commands, &mut std::io::stderr().lock());
    }
    let report = match (&args.report, &run_dir) {
        (Some(file), Some(run)) => crate::report_cmd::write(run, file.as_deref()).map(|w| crate::report_cmd::say(&w)),
        _ => Ok(()),
    };
    let code = summary?.exit_code();
    match report {
        // The run's own exit code says more than a report that could not be written,
        // unless the run succeeded.
        Err(failure) if code == crate::exit_codes::SUCCESS => Err(failure),
        Err(failure) => {
            failure.print(false);
            Ok(code)
        }
        Ok(()) => Ok(code),
    }
}
