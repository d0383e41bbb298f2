//! `flow report`: write one self-contained HTML page about a run, and the
//! same page at the end of `flow run --report`.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use clap::Args;
use flow_engine::report::{Report, is_report, render};
use flow_engine::rundir::{RunDir, locate};
use flow_engine::units::{BytesStyle, bytes};
use fs_err::os::unix::fs::OpenOptionsExt;

use crate::failure::Failure;
use crate::json::{Counts, ReportWritten};
use crate::stdout::say;

/// `flow report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub run: crate::args::RunName,
    /// Where to write the page [default: `report.html` in the run's directory,
    /// `.flow/runs/<id>/`]; an existing file is replaced only if it is a
    /// report flow wrote.
    #[allow(rustdoc::broken_intra_doc_links, reason = "`[default: …]` is help text, not a link")]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The workflow whose runs to read [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
    /// Print what was written as one JSON document: the run, the page's
    /// path and size, and the run's counts.
    #[arg(long)]
    pub json: bool,
}

/// Runs `flow report`.
pub fn report(args: &ReportArgs) -> Result<(), Failure> {
    let cwd = std::env::current_dir().map_err(|e| Failure::Io(format!("cannot read the current directory: {e}")))?;
    let run = locate(args.workflow.as_deref(), args.run.id(), &cwd)?;
    let written = write(&run, args.output.as_deref())?;
    match args.json {
        true => crate::stdout::to_stdout(|out| crate::json::write_document(out, &written)),
        false => {
            say(&written);
            Ok(())
        }
    }
}

/// Says on stderr where the report went.
pub fn say(written: &ReportWritten) {
    let size = bytes(written.bytes, BytesStyle::Trimmed);
    say!("report of run {}: {} ({size})", written.run_id, written.path.display());
}

/// Writes the report of `run` to `output`, or to `report.html` in the
/// run's directory, which is kept out of the workflow's directory.
pub fn write(run: &RunDir, output: Option<&Path>) -> Result<ReportWritten, Failure> {
    let default = run.report();
    let path = output.unwrap_or(&default);
    check_output(path)?;
    let report = Report::from_run(run)?;
    let mut html = Vec::new();
    render(&report, &mut html)?;
    let io = |e: std::io::Error| Failure::Io(e.to_string());
    // The page holds the tails of the tasks' stderr: as private as the run.
    let mode = run.file_mode().map_err(io)?;
    let mut file =
        fs_err::OpenOptions::new().write(true).create(true).truncate(true).mode(mode).open(path).map_err(io)?;
    file.file().set_permissions(std::fs::Permissions::from_mode(mode)).map_err(io)?;
    file.write_all(&html).and_then(|()| file.flush()).map_err(io)?;
    Ok(ReportWritten {
        run_id: run.id.clone(),
        path: relative(path),
        bytes: html.len() as u64,
        counts: Counts::of_report(&report.counts),
        failures: report.failures_total,
        warnings: report.warnings,
    })
}

/// Refuses a report file that would replace a file flow did not write: a
/// workflow file named by mistake, say. A missing file, or an earlier
/// report, is fine.
pub fn check_output(path: &Path) -> Result<(), Failure> {
    match is_report(path) {
        Ok(true) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Ok(false) => Err(Failure::Usage(format!(
            "`{}` exists and is not a report flow wrote: not writing the report over it (remove it or name another file)",
            path.display()
        ))),
        Err(e) => Err(Failure::Usage(format!("cannot write the report to `{}`: {e}", path.display()))),
    }
}

/// `path` relative to the current directory when it lies below it, so a
/// report in `.flow/runs/<id>/` is named as the user would type it.
fn relative(path: &Path) -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd).map_or_else(|_| path.to_owned(), Path::to_owned)
}
