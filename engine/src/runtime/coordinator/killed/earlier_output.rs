//! [`EarlierOutput`]: what a killed run's log holds of the output of an
//! instance its remote worker was running. When that worker rejoins the
//! resumed run with the instance, the resumed run copies those records
//! into its own log first ([`EarlierOutput::copy`]), so that its log has
//! the attempt's output whole, and tells the worker how many bytes of each
//! stream it has: the worker sends only what follows them.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use crate::ir::TaskId;
use crate::log::{OutputLogSender, OutputStream, read_output};

/// The records of one attempt in a killed run's log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(in crate::runtime::coordinator) struct EarlierOutput {
    /// The killed run's output log, if it holds any of the attempt's output.
    log: Option<PathBuf>,
    /// Where each of its records starts there, in order.
    records: Vec<u64>,
    /// Bytes of stdout it holds.
    pub(in crate::runtime::coordinator) stdout: u64,
    /// Bytes of stderr it holds.
    pub(in crate::runtime::coordinator) stderr: u64,
}

/// Reads the output log at `path` once for the records of the `wanted`
/// attempts; what cannot be read is as if it held nothing more.
pub(in crate::runtime::coordinator) fn scan(
    path: &Path,
    wanted: &HashSet<(TaskId, u32)>,
) -> HashMap<(TaskId, u32), EarlierOutput> {
    let mut found: HashMap<(TaskId, u32), EarlierOutput> = HashMap::new();
    let Ok(mut reader) = read_output(path) else { return found };
    loop {
        let at = reader.position();
        let Some(Ok(record)) = reader.next() else { break };
        let key = (record.task, record.attempt);
        if !wanted.contains(&key) {
            continue;
        }
        let earlier = found.entry(key).or_default();
        earlier.log.get_or_insert_with(|| path.to_path_buf());
        earlier.records.push(at);
        let bytes = record.data.len() as u64;
        match record.stream {
            OutputStream::Stdout => earlier.stdout += bytes,
            OutputStream::Stderr => earlier.stderr += bytes,
            OutputStream::System | OutputStream::Allocation => {}
        }
    }
    found
}

impl EarlierOutput {
    /// Whether there is anything to copy.
    pub(in crate::runtime::coordinator) fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Sends the records to `log`, in order (blocking: call it off the
    /// run loop, before the worker's own output is written).
    pub(in crate::runtime::coordinator) fn copy(&self, log: &OutputLogSender) -> io::Result<()> {
        let Some(path) = &self.log else { return Ok(()) };
        let mut reader = read_output(path)?;
        for &at in &self.records {
            let record = reader.read_at(at)?;
            log.blocking_send(record).map_err(io::Error::other)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{OutputLog, OutputRecord};
    use crate::runtime::core::tests::env::t;

    fn record(task: TaskId, attempt: u32, stream: OutputStream, data: &str) -> OutputRecord {
        OutputRecord { task, attempt, stream, time_us: 1, data: data.as_bytes().to_vec() }
    }

    #[test]
    fn an_attempts_records_are_found_counted_and_copied_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let killed = dir.path().join("killed.log");
        let (tx, handle) = OutputLog::create(&killed).expect("log");
        let written = [
            record(t(0, 0), 0, OutputStream::Stdout, "one\n"),
            record(t(0, 1), 0, OutputStream::Stdout, "other task\n"),
            record(t(0, 0), 1, OutputStream::Stdout, "other attempt\n"),
            record(t(0, 0), 0, OutputStream::Stderr, "warn\n"),
            record(t(0, 0), 0, OutputStream::Stdout, "two\n"),
        ];
        for r in &written {
            tx.blocking_send(r.clone()).expect("send");
        }
        handle.finish().expect("finish");
        let found = scan(&killed, &HashSet::from([(t(0, 0), 0), (t(0, 2), 0)]));
        assert_eq!(found.len(), 1, "an attempt with no output has nothing");
        let earlier = &found[&(t(0, 0), 0)];
        assert_eq!((earlier.stdout, earlier.stderr), (8, 5));

        let copy = dir.path().join("resumed.log");
        let (tx, handle) = OutputLog::create(&copy).expect("log");
        earlier.copy(&tx).expect("copy");
        EarlierOutput::default().copy(&tx).expect("nothing to copy");
        handle.finish().expect("finish");
        let copied: Vec<OutputRecord> = read_output(&copy).expect("read").map(Result::unwrap).collect();
        assert_eq!(copied, [written[0].clone(), written[3].clone(), written[4].clone()]);
        assert!(scan(&dir.path().join("missing.log"), &HashSet::from([(t(0, 0), 0)])).is_empty());
    }
}
