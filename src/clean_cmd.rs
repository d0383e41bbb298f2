//! `flow clean`: remove the directories of old runs under `.flow/runs/`,
//! keeping the newest, live ones and those a new run still reads.

use std::path::PathBuf;

use clap::Args;
use flow_engine::runtime::{Kept, PrunedRun, prune_plan, remove_run, state_dir};
use flow_engine::units::{BytesStyle, bytes};

use crate::failure::Failure;
use crate::json::{CleanReport, CleanedRun, KeptWhy};
use flow_engine::units::plural;

/// `flow clean`.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// The workflow whose runs to clean [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
    /// Say what would be removed, and remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// One JSON document: the runs removed and kept, and the bytes freed.
    #[arg(long)]
    pub json: bool,
}

/// Runs `flow clean`.
pub fn clean(args: &CleanArgs) -> Result<(), Failure> {
    let cwd = std::env::current_dir().map_err(|e| Failure::Io(format!("cannot read the current directory: {e}")))?;
    let state = state_dir(args.workflow.as_deref(), &cwd)?;
    let mut report = CleanReport { dry_run: args.dry_run, removed: Vec::new(), kept: Vec::new(), bytes: 0 };
    for planned in prune_plan(&state) {
        let PrunedRun { run, bytes, kept } = planned;
        let kept = match kept {
            None if args.dry_run => None,
            None => match remove_run(&run) {
                Ok(true) => None,
                // It started again since it was looked at.
                Ok(false) => Some(Kept::Live),
                Err(e) => return Err(Failure::Io(format!("cannot remove run {}: {e}", run.id))),
            },
            kept => kept,
        };
        let entry = CleanedRun {
            run_id: run.id.clone(),
            bytes,
            kept: kept.as_ref().map(why),
            instances: match kept {
                Some(Kept::InUse(n)) => Some(n),
                _ => None,
            },
        };
        if !args.json {
            say(&entry, kept.as_ref(), args.dry_run)?;
        }
        match entry.kept {
            Some(_) => report.kept.push(entry),
            None => {
                report.bytes += entry.bytes;
                report.removed.push(entry);
            }
        }
    }
    if args.json {
        return crate::stdout::to_stdout(|out| crate::json::write_document(out, &report));
    }
    let (removed, kept) = (plural(report.removed.len() as u64, "run"), report.kept.len());
    match args.dry_run {
        true => crate::stdout::print(format_args!("would remove {removed} ({}), keep {kept}\n", size(report.bytes))),
        false => crate::stdout::print(format_args!("removed {removed} ({}), kept {kept}\n", size(report.bytes))),
    }
}

/// One line about one run.
fn say(entry: &CleanedRun, kept: Option<&Kept>, dry_run: bool) -> Result<(), Failure> {
    let id = &entry.run_id;
    let line = match kept {
        None if dry_run => format!("would remove run {id} ({})", size(entry.bytes)),
        None => format!("removed run {id} ({})", size(entry.bytes)),
        Some(Kept::Newest) => format!("kept run {id}: the newest"),
        Some(Kept::Live) => format!("kept run {id}: it is running"),
        Some(Kept::InUse(n)) => format!("kept run {id}: it holds the last result of {}", plural(*n, "instance")),
        Some(Kept::Unreadable(why)) => format!("kept run {id}: {why}"),
    };
    crate::stdout::print(format_args!("{line}\n"))
}

/// [`Kept`] as `--json` says it.
fn why(kept: &Kept) -> KeptWhy {
    match kept {
        Kept::Newest => KeptWhy::Newest,
        Kept::Live => KeptWhy::Live,
        Kept::InUse(_) => KeptWhy::InUse,
        Kept::Unreadable(_) => KeptWhy::Unreadable,
    }
}

/// A size as messages write it: `11.5 KiB`.
fn size(n: u64) -> String {
    bytes(n, BytesStyle::Trimmed)
}
