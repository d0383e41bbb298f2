//! `flow log`: read a run's journal and output log. Lists task instances,
//! prints their output, follows a live run, summarises, greps and exports.
//! A torn tail (what a crash leaves at the end of a file) is a warning.

mod failed_output;
mod log_summary;
mod table_writer;
mod trace;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use flow_engine::ir::{Finally, Graph, Resources, TaskId};
use flow_engine::ir::{Selected, Selector};
use flow_engine::log::{
    JournalEntry, JournalRecord, JournalState, JournalStatus, Latest, LineSplitter, OutputReader, OutputRecord,
    OutputStream,
};
use flow_engine::rundir::{JournalHealth, RunDir, RunDirError, RunView, locate};
use flow_engine::runtime::origin;
use trace::{Attempt, Column, Format};

use crate::failure::Failure;
use crate::json::{self, OutputChunk, OutputLine, RunSummary, TaskRef};
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
    let run = Run::open(args)?;
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

/// The run being read: its files but the journal and the output log,
/// which are read as each command needs them.
struct Run {
    view: RunView,
}

impl Run {
    fn open(args: &LogArgs) -> Result<Run, Failure> {
        let cwd =
            std::env::current_dir().map_err(|e| Failure::Io(format!("cannot read the current directory: {e}")))?;
        let dir = locate(args.workflow.as_deref(), args.run.as_deref(), &cwd)?;
        Ok(Run::at(&dir)?)
    }

    /// The run in `dir`.
    fn at(dir: &RunDir) -> Result<Run, RunDirError> {
        Ok(Run { view: RunView::read(dir)? })
    }

    /// The run's directory.
    fn dir(&self) -> &RunDir {
        &self.view.dir
    }

    /// The run's graph.
    fn graph(&self) -> &Graph {
        &self.view.graph
    }

    /// How `--json` names instance `task`.
    fn task_ref(&self, task: TaskId) -> TaskRef {
        TaskRef::new(self.graph(), task)
    }

    /// What the variant `task`'s attempt `entry` ran with asks for: the one
    /// it names, else the task's only one.
    fn requested(&self, task: TaskId, entry: Option<&JournalEntry>) -> Option<&Resources> {
        let variants = &self.graph().groups.get(task.group.index())?.variants;
        let named = entry.and_then(|e| e.metrics.as_ref().map(|m| m.variant).or(e.wrote.as_ref().map(|w| w.variant)));
        match named {
            Some(variant) => variants.get(variant as usize),
            None if variants.len() == 1 => variants.first(),
            None => None,
        }
    }

    /// `name[index]`, or `name` for a plain task.
    fn label(&self, task: TaskId) -> String {
        self.task_ref(task).label
    }

    fn select(&self, selectors: &[String]) -> Result<Selection, Failure> {
        let picks = selectors
            .iter()
            .map(|text| {
                let selector = Selector::parse(text).map_err(|e| Failure::Usage(e.to_string()))?;
                match selector.resolve(self.graph()) {
                    // The `[finally]` command's output, unless a task has its name.
                    Err(_) if text == Finally::LABEL && self.graph().finally.is_some() => {
                        Ok(Selected { group: Finally::TASK.group, positions: None })
                    }
                    resolved => resolved.map_err(|e| Failure::Usage(format!("`{text}` in this run: {e}"))),
                }
            })
            .collect::<Result<_, Failure>>()?;
        Ok(Selection { picks })
    }

    /// The journal folded per task (empty if there is none yet).
    fn journal(&self) -> io::Result<JournalState> {
        let mut state = JournalState::default();
        self.each_journal_record(|r| state.apply(&r))?;
        Ok(state)
    }

    /// Passes each record of the journal to `each`, in order, holding none
    /// (none if there is no journal yet); warns of damage.
    fn each_journal_record(&self, each: impl FnMut(JournalRecord)) -> io::Result<()> {
        warn("journal", &self.view.each_journal_record(each)?);
        Ok(())
    }

    /// The output log, if the run has written one.
    fn output(&self) -> io::Result<Option<OutputReader>> {
        Ok(self.view.output()?)
    }

    /// Every record of the output log that `keep` accepts, in file order; warns about a torn tail.
    fn each_record(&self, mut keep: impl FnMut(OutputRecord, u64) -> io::Result<()>) -> io::Result<()> {
        let Some(mut reader) = self.output()? else { return Ok(()) };
        while let Some(record) = reader.next() {
            let record = record?;
            // Allocation output is not a task's (`flow alloc log` shows it).
            if record.stream != OutputStream::Allocation {
                keep(record, reader.last_start())?;
            }
        }
        warn("output.log", &self.view.health(reader.damage(), reader.torn_tail()));
        Ok(())
    }
}

/// Says what of `file` could not be read: the incomplete record at its end
/// (which a live run is still writing, and is not said), and the damaged
/// stretches skipped, around which the records were read.
fn warn(file: &str, health: &JournalHealth) {
    if let Some(torn) = health.torn {
        eprintln!(
            "warning: {file} ends with {} bytes of an incomplete record (the run was interrupted); ignored",
            torn.bytes
        );
    }
    for d in &health.damage {
        eprintln!("warning: {file} is damaged: {d}; the records before and after them were read");
    }
}

/// The task instances the selectors name (all of them when there are none).
struct Selection {
    picks: Vec<Selected>,
}

impl Selection {
    fn contains(&self, task: TaskId) -> bool {
        self.picks.is_empty() || self.picks.iter().any(|s| s.contains(task.group, task.instance))
    }
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
        eprintln!(
            "note: run {} was a --dry-exec run: nothing was executed, its successes are not results",
            run.dir().id
        );
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
                let ignored = entry.is_some_and(|e| e.status == JournalStatus::Failed && e.retry_at_us.is_none())
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
        selection.contains(task) && (!failed || journal.get(task).is_some_and(|s| s.status == JournalStatus::Failed))
    };
    if failed {
        return match as_json {
            true => write_output(run, out, wanted, stream, as_json),
            false => failed_output::write(run, out, wanted, stream),
        };
    }
    write_output(run, out, wanted, stream, as_json)?;
    // Instances this run skipped as unchanged: their output is in the run that did the work.
    let state = run.dir().path.parent().and_then(Path::parent).unwrap_or(Path::new("."));
    for (task, entry) in journal.iter().filter(|(t, e)| e.status == JournalStatus::Cached && selection.contains(**t)) {
        let label = run.label(*task);
        match entry.fingerprint.and_then(|fp| origin(state, &run.dir().id, &label, &fp)) {
            Some((dir, from)) => {
                let (id, then) = (dir.id.clone(), Run::at(&dir)?);
                // Found by what it is: it may have sat elsewhere in its list then.
                let was = then.label(from);
                let there = if was == label { String::new() } else { format!(", where it was {was}") };
                eprintln!(
                    "note: run {} skipped {label} as unchanged; its output is from run {id}{there}",
                    run.dir().id
                );
                write_output(&then, out, |t| t == from, stream, as_json)?;
            }
            None => eprintln!(
                "note: run {} skipped {label} as unchanged; no earlier run with its output is left",
                run.dir().id
            ),
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
        eprintln!(
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

/// Left-aligned columns two spaces apart.
pub(crate) fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter().map(|row| table_row(row, &widths)).collect()
}

/// One line of a [`table`] whose columns are `widths` wide.
pub(crate) fn table_row(row: &[String], widths: &[usize]) -> String {
    let cells: Vec<_> = row.iter().zip(widths).map(|(cell, &w)| format!("{cell:w$}")).collect();
    let mut line = cells.join("  ").trim_end().to_owned();
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_and_trim() {
        let rows = [vec!["a".to_owned(), "bb".to_owned()], vec!["ccc".to_owned(), "d".to_owned()]];
        assert_eq!(table(&rows), "a    bb\nccc  d\n");
    }
}
