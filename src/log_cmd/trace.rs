//! `flow log list`'s rows, one per attempt, in the columns asked for: an
//! aligned table for people, or TSV or CSV with a header row (a trace file,
//! as Nextflow's `-with-trace` writes), or one JSON object per line.

use std::io::{self, Write};

use clap::ValueEnum;
use flow_engine::host::{UtcStyle, utc};
use flow_engine::ir::Resources;
use flow_engine::log::{JournalEntry, ProcessUsage};
use flow_engine::units::{BytesStyle, DurationStyle, bytes, duration};

use super::table_writer::{FIRST_ROWS, TableWriter};
use crate::json::{self, AttemptRecord, TaskRef, WorkerRef};

/// A column of `flow log list --columns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Column {
    /// The instance: `score[3]`.
    Task,
    /// The task's name.
    Name,
    /// The instance's `index`.
    Index,
    /// The attempt, 0 for the first.
    Attempt,
    /// running, succeeded, cached, failed, cancelled or lost.
    #[value(alias = "status")]
    State,
    /// The exit code, or `signal N` for a process killed by a signal.
    Exit,
    /// The signal that killed the process.
    Signal,
    /// When the process started (RFC 3339, UTC).
    Start,
    /// When the process ended (RFC 3339, UTC).
    End,
    /// From the journal's start record to its end record.
    Duration,
    /// The process's wall time.
    Wall,
    /// User plus system CPU time.
    Cpu,
    /// User CPU time.
    User,
    /// System CPU time.
    Sys,
    /// Peak resident set size.
    Rss,
    /// The worker's id in the run.
    Worker,
    /// The host the attempt ran on.
    Host,
    /// The cluster job its worker ran in.
    Allocation,
    /// The variant it ran with (its position in `variants`).
    Variant,
    /// The CPU ids it was given.
    Cpus,
    /// The GPU ids it was given.
    Gpus,
    /// Bytes written to stdout.
    Stdout,
    /// Bytes written to stderr.
    Stderr,
    /// Why it failed or was cancelled.
    Reason,
    /// When the next attempt of a failed one may start (`retry_delay`; RFC 3339, UTC).
    #[value(name = "retry_at")]
    RetryAt,
    /// The fingerprint of a succeeded or cached attempt (hex; the first
    /// 12 digits in a table).
    Fingerprint,
    /// CPU time over wall time, in percent: 200 is two CPUs kept busy.
    Pcpu,
    /// The CPUs asked for by the variant it ran with.
    #[value(name = "req_cpus")]
    ReqCpus,
    /// The GPUs asked for.
    #[value(name = "req_gpus")]
    ReqGpus,
    /// The memory asked for.
    #[value(name = "req_memory")]
    ReqMemory,
    /// The run time asked for (`time_request`).
    #[value(name = "req_time")]
    ReqTime,
    /// When the instance became ready to start (RFC 3339, UTC).
    Ready,
    /// From ready to started: how long it waited for a worker.
    #[value(name = "queue_wait")]
    QueueWait,
    /// Peak virtual memory of its process tree (sampled).
    #[value(name = "peak_vmem")]
    PeakVmem,
    /// Bytes fetched from storage (`read_bytes` of `/proc/<pid>/io`).
    #[value(name = "read_bytes")]
    ReadBytes,
    /// Bytes sent to storage (`write_bytes`).
    #[value(name = "write_bytes")]
    WriteBytes,
    /// Bytes read through system calls, pipes and cache included (`rchar`).
    Rchar,
    /// Bytes written through system calls (`wchar`).
    Wchar,
}

/// The columns of a table when none are named.
pub const TABLE_COLUMNS: &[Column] = &[
    Column::Task,
    Column::State,
    Column::Exit,
    Column::Duration,
    Column::Cpu,
    Column::Rss,
    Column::Stdout,
    Column::Stderr,
];

/// `flow log list --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns, sizes and durations for people.
    Table,
    /// Tab-separated values with a header row: µs, bytes, RFC 3339 times.
    Tsv,
    /// Comma-separated values (RFC 4180) with a header row, like TSV.
    Csv,
}

impl Format {
    /// The columns shown when none are named: a trace file has them all.
    pub fn default_columns(self) -> Vec<Column> {
        match self {
            Format::Table => TABLE_COLUMNS.to_vec(),
            Format::Tsv | Format::Csv => Column::value_variants().to_vec(),
        }
    }

    /// The header row.
    pub fn header(self, columns: &[Column]) -> Vec<String> {
        let name = |c: &Column| c.to_possible_value().map(|v| v.get_name().to_owned()).unwrap_or_default();
        match self {
            Format::Table => columns.iter().map(|c| name(c).to_uppercase()).collect(),
            Format::Tsv | Format::Csv => columns.iter().map(name).collect(),
        }
    }

    /// One line of cells, separated and quoted for this format (not `Table`).
    pub fn line(self, cells: &[String]) -> String {
        let cells: Vec<String> = match self {
            Format::Table => cells.to_vec(),
            Format::Tsv => cells.iter().map(|c| c.replace(['\t', '\n', '\r'], " ")).collect(),
            Format::Csv => cells
                .iter()
                .map(|c| {
                    if c.contains([',', '"', '\n', '\r']) {
                        format!("\"{}\"", c.replace('"', "\"\""))
                    } else {
                        c.clone()
                    }
                })
                .collect(),
        };
        cells.join(if self == Format::Csv { "," } else { "\t" })
    }
}

/// One attempt of one instance (or an attempt with output and no record yet).
pub struct Attempt<'a> {
    /// Which instance.
    pub task: TaskRef,
    /// The attempt, 0 for the first.
    pub attempt: u32,
    /// What the journal says of the attempt.
    pub entry: Option<&'a JournalEntry>,
    /// Bytes of stdout and stderr it wrote.
    pub sizes: [u64; 2],
    /// It failed for good, and its task's `continue_on_failure` ignores that.
    pub ignored: bool,
    /// What the variant it ran with asks for, if that is known.
    pub requested: Option<&'a Resources>,
}

impl Attempt<'_> {
    /// When the process started: measured by its worker, else when the
    /// journal recorded the start (attempts without metrics).
    fn start_us(&self) -> Option<u64> {
        let e = self.entry?;
        e.metrics.as_ref().map(|m| m.usage.started_us).or(e.started_us)
    }

    /// When the process ended, likewise.
    fn end_us(&self) -> Option<u64> {
        let e = self.entry?;
        e.metrics.as_ref().map(|m| m.usage.ended_us).or(e.ended_us)
    }

    /// The cells of `columns`: for people in a table, else plain numbers.
    pub fn cells(&self, columns: &[Column], format: Format) -> Vec<String> {
        let record = self.record();
        columns.iter().map(|&c| self.cell(&record, c, format)).collect()
    }

    /// The cell of `column`, from `r`, this attempt's [`Attempt::record`].
    fn cell(&self, r: &AttemptRecord, column: Column, format: Format) -> String {
        let human = format == Format::Table;
        let time = |us: Option<u64>| us.map(|us| utc(us, UtcStyle::Rfc3339));
        let span =
            |us: Option<u64>| us.map(|us| if human { duration(us, DurationStyle::Hundredths) } else { us.to_string() });
        let size = |n: Option<u64>| n.map(|n| if human { bytes(n, BytesStyle::Tenths) } else { n.to_string() });
        let ids = |ids: &Option<Vec<u32>>| {
            ids.as_ref().map(|ids| ids.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
        };
        let value = match column {
            Column::Task => Some(r.task.label.clone()),
            Column::Name => Some(r.task.task.clone()),
            Column::Index => Some(r.task.index.to_string()),
            Column::Attempt => self.entry.map(|_| r.attempt.to_string()),
            Column::State => self.entry.map(|e| match (human, e.retry_at_us, self.ignored) {
                (true, Some(at), _) => format!("failed, retry at {}", utc(at, UtcStyle::Readable)),
                (true, None, true) => "failed, ignored".to_owned(),
                _ => e.status.as_str().to_owned(),
            }),
            Column::Exit => match (r.exit_code, r.signal) {
                (Some(code), _) => Some(code.to_string()),
                (None, signal) => signal.map(|s| format!("signal {s}")),
            },
            Column::Signal => r.signal.map(|s| s.to_string()),
            Column::Start => time(r.started_us),
            Column::End => time(r.ended_us),
            Column::Duration => span(r.duration_us),
            Column::Wall => span(r.wall_us),
            Column::Cpu => span(r.cpu_us),
            Column::User => span(r.user_us),
            Column::Sys => span(r.system_us),
            Column::Rss => size(r.rss_bytes),
            Column::Worker => r.worker.as_ref().map(|w| w.id.to_string()),
            Column::Host => r.worker.as_ref().and_then(|w| w.host.clone()),
            Column::Allocation => r.worker.as_ref().and_then(|w| w.allocation.clone()),
            Column::Variant => r.variant.map(|v| v.to_string()),
            Column::Cpus => ids(&r.cpu_ids),
            Column::Gpus => ids(&r.gpu_ids),
            Column::Stdout => size(Some(r.stdout_bytes)),
            Column::Stderr => size(Some(r.stderr_bytes)),
            Column::Reason => r.reason.clone(),
            Column::RetryAt => time(r.retry_at_us),
            Column::Fingerprint => r.fingerprint.as_ref().map(|f| if human { f[..12].to_owned() } else { f.clone() }),
            Column::Pcpu => r.cpu_percent.map(|p| format!("{p:.1}")),
            Column::ReqCpus => r.requested_cpus.map(|n| n.to_string()),
            Column::ReqGpus => r.requested_gpus.map(|n| n.to_string()),
            Column::ReqMemory => size(r.requested_memory_bytes),
            Column::ReqTime => span(r.requested_time_us),
            Column::Ready => time(r.ready_us),
            Column::QueueWait => span(r.queue_wait_us),
            Column::PeakVmem => size(r.peak_vmem_bytes),
            Column::ReadBytes => size(r.read_bytes),
            Column::WriteBytes => size(r.write_bytes),
            Column::Rchar => size(r.rchar),
            Column::Wchar => size(r.wchar),
        };
        value.unwrap_or_else(|| if human { "-".to_owned() } else { String::new() })
    }

    /// The attempt as `flow log list --json` prints it.
    pub fn record(&self) -> AttemptRecord {
        let e = self.entry;
        let m = e.and_then(|e| e.metrics.as_deref());
        let io = m.and_then(|m| m.usage.io);
        AttemptRecord {
            task: self.task.clone(),
            attempt: self.attempt,
            state: e.map(|e| e.status),
            exit_code: e.and_then(|e| e.exit_code),
            signal: e.and_then(|e| e.signal),
            started_us: self.start_us(),
            ended_us: self.end_us(),
            duration_us: e.and_then(JournalEntry::duration_us),
            wall_us: m.map(|m| m.usage.wall_us),
            cpu_us: m.map(|m| m.usage.user_us + m.usage.system_us),
            user_us: m.map(|m| m.usage.user_us),
            system_us: m.map(|m| m.usage.system_us),
            rss_bytes: m.map(|m| m.usage.max_rss),
            worker: e.and_then(|e| e.worker).map(|id| WorkerRef {
                id,
                host: m.map(|m| m.host.clone()),
                allocation: m.and_then(|m| m.allocation.clone()),
            }),
            variant: m.map(|m| m.variant),
            cpu_ids: m.map(|m| m.cpus.clone()),
            gpu_ids: m.map(|m| m.gpus.clone()),
            reason: e.and_then(|e| e.reason.clone()),
            retry_at_us: e.and_then(|e| e.retry_at_us),
            ignored: self.ignored,
            stdout_bytes: self.sizes[0],
            stderr_bytes: self.sizes[1],
            fingerprint: e.and_then(|e| e.fingerprint).map(|f| hex(&f)),
            cpu_percent: m.and_then(|m| cpu_percent(&m.usage)),
            requested_cpus: self.requested.map(|r| r.cpus.as_f64()),
            requested_gpus: self.requested.map(|r| r.gpus.as_f64()),
            requested_memory_bytes: self.requested.map(|r| r.memory),
            requested_time_us: self.requested.and_then(|r| r.time_request).map(|s| s * 1_000_000),
            ready_us: e.and_then(|e| e.ready_us),
            queue_wait_us: e.and_then(JournalEntry::queue_wait_us),
            peak_vmem_bytes: m.and_then(|m| m.usage.peak_vmem),
            read_bytes: io.map(|io| io.read_bytes),
            write_bytes: io.map(|io| io.write_bytes),
            rchar: io.and_then(|io| io.rchar),
            wchar: io.and_then(|io| io.wchar),
        }
    }
}

/// `bytes` as lowercase hexadecimal digits.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]).map(char::from).collect()
}

/// CPU time over wall time in percent, to a tenth; `None` for no wall time.
fn cpu_percent(usage: &ProcessUsage) -> Option<f64> {
    let cpu = (usage.user_us + usage.system_us) as f64;
    (usage.wall_us > 0).then(|| (cpu * 1000.0 / usage.wall_us as f64).round() / 10.0)
}

/// Writes the attempts `rows` passes on, as `format` in `columns` (their
/// defaults when empty), or as NDJSON records when `format` is `None`, as
/// they come: a table holds only its first rows, for its column widths
/// ([`TableWriter`]).
pub fn render(
    out: &mut impl Write,
    rows: impl FnOnce(&mut dyn FnMut(&Attempt<'_>) -> io::Result<()>) -> io::Result<()>,
    columns: &[Column],
    format: Option<Format>,
) -> io::Result<()> {
    let Some(format) = format else {
        return rows(&mut |a| json::write_line(out, &a.record()));
    };
    let columns = if columns.is_empty() { format.default_columns() } else { columns.to_vec() };
    let header = format.header(&columns);
    match format {
        Format::Table => {
            let mut table = TableWriter::new(out, header, FIRST_ROWS);
            rows(&mut |a| table.push(a.cells(&columns, format)))?;
            table.finish()
        }
        Format::Tsv | Format::Csv => {
            writeln!(out, "{}", format.line(&header))?;
            rows(&mut |a| writeln!(out, "{}", format.line(&a.cells(&columns, format))))
        }
    }
}

#[cfg(test)]
mod tests {
    use flow_engine::ir::Amount;
    use flow_engine::log::{AttemptMetrics, IoBytes, State};

    use super::*;

    /// 2023-11-14T22:13:20Z, in µs.
    const T0: u64 = 1_700_000_000_000_000;

    fn entry(attempt: u32, status: State, seconds: u64, measured: bool) -> JournalEntry {
        let usage = ProcessUsage {
            started_us: T0,
            ended_us: T0 + seconds * 1_000_000,
            wall_us: seconds * 1_000_000,
            user_us: seconds * 600_000,
            system_us: 50_000,
            max_rss: 48 << 20,
            peak_vmem: Some(300 << 20),
            io: Some(IoBytes { read_bytes: 4096, write_bytes: 20 << 20, rchar: Some(1 << 20), wchar: Some(21 << 20) }),
        };
        let metrics = AttemptMetrics { usage, cpus: vec![0, 1], host: "node7".to_owned(), ..AttemptMetrics::default() };
        let failed = status == State::Failed;
        JournalEntry {
            attempt,
            status,
            worker: Some(1),
            started_us: Some(T0),
            ready_us: Some(T0 - 250_000),
            ended_us: Some(T0 + seconds * 1_000_000),
            exit_code: failed.then_some(3),
            signal: None,
            fingerprint: (status == State::Succeeded).then_some([0xab; 32]),
            reason: failed.then(|| "exit code 3".to_owned()),
            wrote: None,
            metrics: measured.then(|| Box::new(metrics)),
            retry_at_us: None,
            untrusted: None,
            reads: None,
        }
    }

    /// Attempts of a task that failed once, one that succeeded and one with output and no record.
    fn rows<'a>(entries: &'a [JournalEntry], asked: &'a Resources) -> Vec<Attempt<'a>> {
        let task = |index: i64| TaskRef::labelled("score", format!("score[{index}]"));
        vec![
            Attempt {
                task: task(10),
                attempt: 0,
                entry: Some(&entries[0]),
                sizes: [12, 2048],
                requested: None,
                ignored: false,
            },
            Attempt {
                task: task(10),
                attempt: 1,
                entry: Some(&entries[1]),
                sizes: [12, 0],
                requested: Some(asked),
                ignored: false,
            },
            Attempt {
                task: task(20),
                attempt: 0,
                entry: Some(&entries[2]),
                sizes: [0, 0],
                requested: Some(asked),
                ignored: false,
            },
            Attempt { task: task(30), attempt: 0, entry: None, sizes: [5, 0], requested: None, ignored: false },
        ]
    }

    fn rendered(columns: &[Column], format: Option<Format>) -> String {
        let entries = [
            entry(0, State::Failed, 2, true),
            entry(1, State::Succeeded, 185, true),
            entry(0, State::Cached, 0, false),
        ];
        let mut out = Vec::new();
        let asked =
            Resources { cpus: Amount::whole(2), memory: 4 << 30, time_request: Some(600), ..Resources::default() };
        let rows = rows(&entries, &asked);
        render(&mut out, |each| rows.iter().try_for_each(&mut *each), columns, format).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn list_table_on_synthetic_attempts() {
        insta::assert_snapshot!(rendered(&[], Some(Format::Table)));
    }

    #[test]
    fn list_csv_with_chosen_columns() {
        let columns = [Column::Task, Column::Attempt, Column::State, Column::Start, Column::Wall, Column::Cpus];
        insta::assert_snapshot!(rendered(&columns, Some(Format::Csv)));
    }

    #[test]
    fn list_tsv_with_queue_wait_and_proc_columns() {
        let columns = [
            Column::Task,
            Column::Ready,
            Column::QueueWait,
            Column::PeakVmem,
            Column::ReadBytes,
            Column::WriteBytes,
            Column::Rchar,
            Column::Wchar,
        ];
        insta::assert_snapshot!(rendered(&columns, Some(Format::Tsv)));
        insta::assert_snapshot!(rendered(&columns, Some(Format::Table)));
    }

    #[test]
    fn list_json_records() {
        insta::assert_snapshot!(rendered(&[], None));
    }

    #[test]
    fn csv_quotes_and_tsv_flattens() {
        let cells = ["a,b".to_owned(), "say \"hi\"".to_owned(), "x\ty".to_owned()];
        assert_eq!(Format::Csv.line(&cells), "\"a,b\",\"say \"\"hi\"\"\",x\ty");
        assert_eq!(Format::Tsv.line(&cells), "a,b\tsay \"hi\"\tx y");
    }
}
