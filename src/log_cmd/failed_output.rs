//! `flow log cat --failed`: the output of every attempt of each failed
//! instance, each under a header naming the instance, the attempt and how
//! it ended, as `tail` heads each of several files.

use std::collections::BTreeMap;
use std::io::{self, Write};

use flow_engine::ir::TaskId;
use flow_engine::log::JournalEntry;

use flow_engine::log::OutputStream;

use super::run::{Run, warn};

/// One attempt: how it ended (`None` when the journal has no record of it),
/// and where its output records start, by time.
type AttemptOutput = (Option<String>, Vec<(u64, u64)>);

/// Writes each attempt of each instance `wanted` picks: a header line,
/// then its output as written, in graph order and then by attempt.
pub(super) fn write(
    run: &Run,
    out: &mut impl Write,
    wanted: impl Fn(TaskId) -> bool,
    stream: impl Fn(OutputStream) -> bool,
) -> io::Result<()> {
    let (index, health) = run.view.attempt_index()?;
    warn("journal", &health);
    let mut attempts: BTreeMap<(TaskId, u32), AttemptOutput> = BTreeMap::new();
    index.each(|task, entry| {
        if wanted(task) {
            attempts.insert((task, entry.attempt), (Some(ending(entry)), Vec::new()));
        }
        Ok::<_, io::Error>(())
    })?;
    run.each_record(|r, offset| {
        if stream(r.stream) && wanted(r.task) {
            attempts.entry((r.task, r.attempt)).or_default().1.push((r.time_us, offset));
        }
        Ok(())
    })?;
    let mut reader = run.output()?;
    for (n, ((task, attempt), (ended, mut chunks))) in attempts.into_iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        let ended = ended.unwrap_or_else(|| "no record of how it ended".to_owned());
        writeln!(out, "==> {} attempt {attempt}: {ended} <==", run.label(task))?;
        // Stable: chunks with the same time stay in file order.
        chunks.sort_by_key(|&(time, _)| time);
        let mut last = b'\n';
        for (_, offset) in chunks {
            let Some(reader) = reader.as_mut() else { break };
            let record = reader.read_at(offset)?;
            out.write_all(&record.data)?;
            last = record.data.last().copied().unwrap_or(last);
        }
        // The next header starts a line of its own.
        if last != b'\n' {
            writeln!(out)?;
        }
    }
    Ok(())
}

/// How an attempt ended: its state, and the reason its journal record
/// gives (`failed: exit code 3`, `failed: timed out after 2s`).
fn ending(entry: &JournalEntry) -> String {
    match &entry.reason {
        Some(reason) => format!("{}: {reason}", entry.status.as_str()),
        None => entry.status.as_str().to_owned(),
    }
}
