//! `flow log`: read a run's journal and output log. Lists task instances,
//! prints their output, follows a live run, summarises, greps and exports.
//! A torn tail (what a crash leaves at the end of a file) is a warning.

mod failed_output;
mod log_summary;
mod run;
mod table_writer;
mod trace;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use flow_engine::ir::TaskId;
use flow_engine::log::{JournalEntry, Latest, LineSplitter, OutputRecord, OutputStream, State};
use flow_engine::runtime::origin;
use run::{Run, Selection, warn};
use trace::{Attempt, Column, Format};

use crate::failure::Failure;
use crate::json::{self, OutputChunk, OutputLine, RunSummary};
use crate::stdout::say;
use crate::stdout::to_stdout;

/// How often `tail -f` looks for new output.
const POLL: Duration = Duration::from_millis(100);

/// `flow log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// The workflow whose runs to read [default: the `.flow` directory here or in a parent].
    #[arg(short = 'w', long, value_name = "FILE", global = true)]
    pub workflow: Option<PathBuf>,
    /// The run: its id or a unique prefix of it [default: the latest].
    #[arg(long, value_name = "ID", global = true)]
    pub run: Option<String>,
    /// What to show.
    #[command(subcommand)]
    pub command: LogCommand,
}

/// `flow log` subcommands.
#[derive(Debug, Subcommand)]
pub enum LogCommand {
    /// One line per attempt: state, exit code, times, CPU, memory, where it ran.
    List {
        /// Tasks to show: `score`, `score[1-10,20]` [default: all].
        #[arg(value_name = "SELECTOR")]
        selectors: Vec<String>,
        /// The columns, comma-separated [default: task,state,exit,duration,cpu,rss,stdout,stderr
        /// for a table, all of them for TSV and CSV].
        #[arg(long, value_enum, value_delimiter = ',', value_name = "COLUMNS")]
        columns: Vec<Column>,
        /// How to print the rows: `tsv` and `csv` write a trace file (a header
        /// row, times in RFC 3339, durations in µs, sizes in bytes).
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// One JSON object per line, with every field (times in µs).
        #[arg(long, conflicts_with_all = ["columns", "format"])]
        json: bool,
    },
    /// Print the selected tasks' output as it was written, task by task in graph order.
    Cat {
        /// Tasks to show: `score`, `score[1-10,20]` [default: all].
        #[arg(value_name = "SELECTOR")]
        selectors: Vec<String>,
        /// Which streams (`all` is stdout and stderr).
        #[arg(long, value_enum, default_value_t = StreamChoice::All)]
        stream: StreamChoice,
        /// Only instances whose last attempt failed, every attempt under a
        /// header: `==> score[3] attempt 1: failed: exit code 3 <==`.
        #[arg(long)]
        failed: bool,
        /// One JSON object per output record, as `flow log export --json` prints them.
        #[arg(long)]
        json: bool,
    },
    /// Print output lines prefixed with their task; with -f, follow the run until it ends.
    Tail {
        /// Tasks to show: `score`, `score[1-10,20]` [default: all].
        #[arg(value_name = "SELECTOR")]
        selectors: Vec<String>,
        /// Keep printing new output until the run ends.
        #[arg(short, long)]
        follow: bool,
        /// One JSON object per output record, as `flow log export --json` prints them.
        #[arg(long)]
        json: bool,
    },
    /// Counts per state, output sizes, durations and resource use per task, the slowest instances.
    Summary {
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print output lines that contain PATTERN (a plain string).
    Grep {
        /// The text to look for.
        pattern: String,
        /// Tasks to show: `score`, `score[1-10,20]` [default: all].
        #[arg(value_name = "SELECTOR")]
        selectors: Vec<String>,
        /// Ignore case.
        #[arg(short, long)]
        ignore_case: bool,
        /// One JSON object per matching line: the instance, `attempt`, `stream` and `line`.
        #[arg(long)]
        json: bool,
    },
    /// Print every output record.
    Export {
        /// Tasks to show: `score`, `score[1-10,20]` [default: all].
        #[arg(value_name = "SELECTOR")]
        selectors: Vec<String>,
        /// As NDJSON: the instance, `attempt`, `stream`, `time_us` and `data` (the only format).
        #[arg(long, required = true)]
        json: bool,
    },
}

/// `flow log cat --stream`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StreamChoice {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
    /// Messages from flow about the task.
    System,
    /// Standard output and standard error.
    All,
}

impl StreamChoice {
    fn matches(self, stream: OutputStream) -> bool {
        match self {
            StreamChoice::All => stream != OutputStream::System,
            StreamChoice::Stdout => stream == OutputStream::Stdout,
            StreamChoice::Stderr => stream == OutputStream::Stderr,
            StreamChoice::System => stream == OutputStream::System,
        }
    }
}

/// Runs `flow log`.
pub fn run(args: &LogArgs) -> Result<(), Failure> {
    let run = Run::open(args.workflow.as_deref(), args.run.as_deref())?;
    let selectors = match &args.command {
        LogCommand::List { selectors, .. }
        | LogCommand::Cat { selectors, .. }
        | LogCommand::Tail { selectors, .. }
        | LogCommand::Grep { selectors, .. }
        | LogCommand::Export { selectors, .. } => &selectors[..],
        LogCommand::Summary { .. } => &[],
    };
    let selection = run.select(selectors)?;
    to_stdout(|out| match &args.command {
        LogCommand::List { columns, format, json, .. } => {
            let format = if *json { None } else { Some(*format) };
            list(&run, out, &selection, columns, format)
        }
        LogCommand::Cat { stream, failed, json, .. } => cat(&run, out, &selection, *stream, *failed, *json),
        LogCommand::Tail { follow, json, .. } => tail(&run, out, &selection, *follow, *json),
        LogCommand::Summary { json } => RunSummary::gather(&run)
            .and_then(|summary| if *json { json::write_document(out, &summary) } else { summary.render(out) }),
        LogCommand::Grep { pattern, ignore_case, json, .. } => {
            grep(&run, out, &selection, pattern, *ignore_case, *json)
        }
        LogCommand::Export { .. } => export(&run, out, &selection),
    })
}

/// `flow log list`: one row per attempt, as `format` (NDJSON when `None`).
fn list(
    run: &Run,
    out: &mut impl Write,
    selection: &Selection,
    columns: &[Column],
    format: Option<Format>,
) -> io::Result<()> {
    if run.view.is_dry() {
        say!("note: run {} was a --dry-exec run: nothing was executed, its successes are not results", run.dir().id);
    }
    let (index, health) = run.view.attempt_index()?;
    warn("journal", &health);
    let mut sizes: BTreeMap<(TaskId, u32), [u64; 2]> = BTreeMap::new();
    run.each_record(|r, _| {
        let size = sizes.entry((r.task, r.attempt)).or_default();
        match r.stream {
            OutputStream::Stdout => size[0] += r.data.len() as u64,
            OutputStream::Stderr => size[1] += r.data.len() as u64,
            OutputStream::System | OutputStream::Allocation => {}
        }
        Ok(())
    })?;
    // The last attempt of each instance, when a task's `continue_on_failure`
    // may ignore its failure: only a last attempt's failure is ignored.
    let ignoring = match run.graph().groups.iter().any(|g| g.continue_on_failure) {
        true => {
            let mut latest = Latest::new(run.graph());
            run.view.each_journal_record(|r| latest.apply(&r))?;
            Some(latest)
        }
        false => None,
    };
    // Every attempt the journal knows, and in their places those with
    // output and no record yet, read from the journal as they are printed.
    let rows = |each: &mut dyn FnMut(&Attempt<'_>) -> io::Result<()>| -> io::Result<()> {
        let mut emit = |task: TaskId, attempt: u32, entry: Option<&JournalEntry>| match selection.contains(task) {
            true => {
                let sizes = sizes.get(&(task, attempt)).copied().unwrap_or_default();
                let requested = run.requested(task, entry);
                let ignored = entry.is_some_and(|e| e.status == State::Failed && e.retry_at_us.is_none())
                    && ignoring.as_ref().and_then(|l| l.get(task)).is_some_and(|last| last.attempt == attempt)
                    && run.graph().groups.get(task.group.index()).is_some_and(|g| g.continue_on_failure);
                each(&Attempt { task: run.task_ref(task), attempt, entry, sizes, requested, ignored })
            }
            false => Ok(()),
        };
        let mut unrecorded = sizes.keys().copied().peekable();
        index.each(|task, entry| {
            let key = (task, entry.attempt);
            while let Some(earlier) = unrecorded.next_if(|k| *k <= key) {
                if earlier != key {
                    emit(earlier.0, earlier.1, None)?;
                }
            }
            emit(task, entry.attempt, Some(entry))
        })?;
        unrecorded.try_for_each(|(task, attempt)| emit(task, attempt, None))
    };
    trace::render(out, rows, columns, format)
}

/// `flow log cat`: one pass to find the records, then each task's in turn.
fn cat(
    run: &Run,
    out: &mut impl Write,
    selection: &Selection,
    stream: StreamChoice,
    failed: bool,
    as_json: bool,
) -> io::Result<()> {
    let journal = run.journal()?;
    let wanted = |task: TaskId| {
        selection.contains(task) && (!failed || journal.get(task).is_some_and(|s| s.status == State::Failed))
    };
    if failed {
        return match as_json {
            true => write_output(run, out, wanted, stream, as_json),
            false => failed_output::write(run, out, wanted, |s| stream.matches(s)),
        };
    }
    write_output(run, out, wanted, stream, as_json)?;
    // Instances this run skipped as unchanged: their output is in the run that did the work.
    let state = run.dir().path.parent().and_then(Path::parent).unwrap_or(Path::new("."));
    for (task, entry) in journal.iter().filter(|(t, e)| e.status == State::Cached && selection.contains(**t)) {
        let label = run.label(*task);
        match entry.fingerprint.and_then(|fp| origin(state, &run.dir().id, &label, &fp)) {
            Some((dir, from)) => {
                let (id, then) = (dir.id.clone(), Run::at(&dir)?);
                // Found by what it is: it may have sat elsewhere in its list then.
                let was = then.label(from);
                let there = if was == label { String::new() } else { format!(", where it was {was}") };
                say!("note: run {} skipped {label} as unchanged; its output is from run {id}{there}", run.dir().id);
                write_output(&then, out, |t| t == from, stream, as_json)?;
            }
            None => {
                say!("note: run {} skipped {label} as unchanged; no earlier run with its output is left", run.dir().id)
            }
        }
    }
    Ok(())
}

/// The output of the instances `wanted` picks, each instance's chunks in order.
fn write_output(
    run: &Run,
    out: &mut impl Write,
    wanted: impl Fn(TaskId) -> bool,
    stream: StreamChoice,
    as_json: bool,
) -> io::Result<()> {
    let mut found: Vec<(TaskId, u64, u64)> = Vec::new();
    run.each_record(|r, offset| {
        if stream.matches(r.stream) && wanted(r.task) {
            found.push((r.task, r.time_us, offset));
        }
        Ok(())
    })?;
    // Stable: chunks with the same time stay in file order.
    found.sort_by_key(|&(task, time, _)| (task, time));
    let Some(mut reader) = run.output()? else { return Ok(()) };
    for (_, _, offset) in found {
        let record = reader.read_at(offset)?;
        match as_json {
            true => write_record(run, out, &record)?,
            false => out.write_all(&record.data)?,
        }
    }
    Ok(())
}

/// `flow log tail [-f]`.
fn tail(run: &Run, out: &mut impl Write, selection: &Selection, follow: bool, as_json: bool) -> io::Result<()> {
    let mut lines = LineSplitter::default();
    let print = |out: &mut dyn Write, &(task, _): &(TaskId, OutputStream), line: &[u8]| {
        writeln!(out, "{} | {}", run.label(task), String::from_utf8_lossy(line))
    };
    let mut reader = None;
    // Passes in a row that found the run neither finished nor held by a live
    // process: a run killed outright (`kill -9`) never writes its summary.
    let mut dead_passes = 0;
    loop {
        // Looked at before reading, so the last pass sees everything the run wrote.
        let finished = run.dir().is_finished();
        dead_passes = if finished || run.dir().is_live() { 0 } else { dead_passes + 1 };
        let dead = dead_passes >= 2;
        let ended = !follow || finished || dead;
        if reader.is_none() {
            reader = run.output()?;
        }
        for record in reader.iter_mut().flatten() {
            let r = record?;
            if r.stream == OutputStream::Allocation || !selection.contains(r.task) {
                continue;
            }
            if as_json {
                write_record(run, out, &r)?;
            } else {
                lines.push(&(r.task, r.stream), &r.data, |key, line| print(out, key, line))?;
            }
        }
        if ended {
            break;
        }
        out.flush()?;
        std::thread::sleep(POLL);
    }
    lines.finish(|key, line| print(out, key, line))?;
    if let Some(reader) = &reader {
        warn("output.log", &run.view.health(reader.damage(), reader.torn_tail()));
    }
    if follow && dead_passes >= 2 {
        out.flush()?;
        say!(
            "flow: run {} stopped without finishing (its process is gone: killed or crashed); \
             `flow run` again resumes it",
            run.dir().id
        );
    }
    Ok(())
}

/// `flow log grep`: matching lines as `label:stream: line`, or as NDJSON.
fn grep(
    run: &Run,
    out: &mut impl Write,
    selection: &Selection,
    pattern: &str,
    ignore_case: bool,
    as_json: bool,
) -> io::Result<()> {
    let pattern = if ignore_case { pattern.to_lowercase() } else { pattern.to_owned() };
    let mut lines = LineSplitter::default();
    let mut print = |&(task, attempt, stream): &(TaskId, u32, OutputStream), line: &[u8]| {
        let text = String::from_utf8_lossy(line);
        let found = if ignore_case { text.to_lowercase().contains(&pattern) } else { text.contains(&pattern) };
        match (found, as_json) {
            (false, _) => Ok(()),
            (true, false) => writeln!(out, "{}:{}: {text}", run.label(task), stream.as_str()),
            (true, true) => {
                json::write_line(out, &OutputLine { task: run.task_ref(task), attempt, stream, line: &text })
            }
        }
    };
    run.each_record(|r, _| {
        if selection.contains(r.task) {
            lines.push(&(r.task, r.attempt, r.stream), &r.data, &mut print)?;
        }
        Ok(())
    })?;
    lines.finish(&mut print)
}

/// `flow log export --json`.
fn export(run: &Run, out: &mut impl Write, selection: &Selection) -> io::Result<()> {
    run.each_record(|r, _| if selection.contains(r.task) { write_record(run, out, &r) } else { Ok(()) })
}

/// Writes `r` as one line of `flow log export --json`.
fn write_record(run: &Run, out: &mut impl Write, r: &OutputRecord) -> io::Result<()> {
    let data = String::from_utf8_lossy(&r.data);
    let record = OutputChunk {
        task: run.task_ref(r.task),
        attempt: r.attempt,
        stream: r.stream,
        time_us: r.time_us,
        data: &data,
    };
    json::write_line(out, &record)
}
