//! `flow log list`'s rows, one per attempt, in the columns asked for: an
//! aligned table for people, or TSV or CSV with a header row (a trace file,
//! as Nextflow's `-with-trace` writes), or one JSON object per line.

use clap::ValueEnum;
use flow_engine::host::{UtcStyle, utc};
use flow_engine::log::JournalEntry;

use super::{format_bytes, format_duration};

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
    #[value(alias = "state")]
    Status,
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
}

/// The columns of a table when none are named.
pub const TABLE_COLUMNS: &[Column] = &[
    Column::Task,
    Column::Status,
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

/// One attempt of one instance (or an instance with output and no record yet).
pub struct Attempt<'a> {
    /// `name[index]`.
    pub label: String,
    /// The task's name.
    pub name: &'a str,
    /// The instance's index.
    pub index: i64,
    /// What the journal says of the attempt.
    pub entry: Option<&'a JournalEntry>,
    /// Bytes of stdout and stderr it wrote.
    pub sizes: [u64; 2],
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

    /// The cell of `column`: for people in a table, else plain numbers.
    pub fn cell(&self, column: Column, format: Format) -> String {
        let human = format == Format::Table;
        let e = self.entry;
        let m = e.and_then(|e| e.metrics.as_deref());
        let time = |us: Option<u64>| us.map(|us| utc(us, UtcStyle::Rfc3339));
        let span = |us: Option<u64>| us.map(|us| if human { format_duration(us) } else { us.to_string() });
        let bytes = |n: Option<u64>| n.map(|n| if human { format_bytes(n) } else { n.to_string() });
        let ids = |ids: &[u32]| ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        let value = match column {
            Column::Task => Some(self.label.clone()),
            Column::Name => Some(self.name.to_owned()),
            Column::Index => Some(self.index.to_string()),
            Column::Attempt => e.map(|e| e.attempt.to_string()),
            Column::Status => e.map(|e| e.status.as_str().to_owned()),
            Column::Exit => e.and_then(|e| match (e.exit_code, e.signal) {
                (Some(code), _) => Some(code.to_string()),
                (None, signal) => signal.map(|s| format!("signal {s}")),
            }),
            Column::Signal => e.and_then(|e| e.signal).map(|s| s.to_string()),
            Column::Start => time(self.start_us()),
            Column::End => time(self.end_us()),
            Column::Duration => span(e.and_then(JournalEntry::duration_us)),
            Column::Wall => span(m.map(|m| m.usage.wall_us)),
            Column::Cpu => span(m.map(|m| m.usage.user_us + m.usage.system_us)),
            Column::User => span(m.map(|m| m.usage.user_us)),
            Column::Sys => span(m.map(|m| m.usage.system_us)),
            Column::Rss => bytes(m.map(|m| m.usage.max_rss)),
            Column::Worker => e.and_then(|e| e.worker).map(|w| w.to_string()),
            Column::Host => m.map(|m| m.host.clone()),
            Column::Allocation => m.and_then(|m| m.allocation.clone()),
            Column::Variant => m.map(|m| m.variant.to_string()),
            Column::Cpus => m.map(|m| ids(&m.cpus)),
            Column::Gpus => m.map(|m| ids(&m.gpus)),
            Column::Stdout => bytes(Some(self.sizes[0])),
            Column::Stderr => bytes(Some(self.sizes[1])),
            Column::Reason => e.and_then(|e| e.reason.clone()),
        };
        value.unwrap_or_else(|| if human { "-".to_owned() } else { String::new() })
    }

    /// The attempt as one JSON object: times and durations in µs, sizes in bytes.
    pub fn json(&self) -> serde_json::Value {
        let e = self.entry;
        let m = e.and_then(|e| e.metrics.as_deref());
        serde_json::json!({
            "task": self.name, "index": self.index, "label": self.label,
            "status": e.map(|e| e.status.as_str()), "attempt": e.map(|e| e.attempt),
            "exit_code": e.and_then(|e| e.exit_code), "signal": e.and_then(|e| e.signal),
            "start_us": self.start_us(), "end_us": self.end_us(),
            "duration_us": e.and_then(JournalEntry::duration_us), "wall_us": m.map(|m| m.usage.wall_us),
            "cpu_us": m.map(|m| m.usage.user_us + m.usage.system_us),
            "user_us": m.map(|m| m.usage.user_us), "system_us": m.map(|m| m.usage.system_us),
            "rss_bytes": m.map(|m| m.usage.max_rss),
            "worker": e.and_then(|e| e.worker), "host": m.map(|m| &m.host),
            "allocation": m.and_then(|m| m.allocation.as_deref()), "variant": m.map(|m| m.variant),
            "cpus": m.map(|m| &m.cpus), "gpus": m.map(|m| &m.gpus),
            "reason": e.and_then(|e| e.reason.as_deref()),
            "stdout_bytes": self.sizes[0], "stderr_bytes": self.sizes[1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_and_tsv_flattens() {
        let cells = ["a,b".to_owned(), "say \"hi\"".to_owned(), "x\ty".to_owned()];
        assert_eq!(Format::Csv.line(&cells), "\"a,b\",\"say \"\"hi\"\"\",x\ty");
        assert_eq!(Format::Tsv.line(&cells), "a,b\tsay \"hi\"\tx y");
    }
}
