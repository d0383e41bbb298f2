//! [`stderr_tails`]: the last lines of standard error of failed attempts,
//! read from a run's output log.

use std::collections::HashMap;

use super::ReportError;
use crate::ir::TaskId;
use crate::log::OutputStream;
use crate::rundir::{RunDirError, RunView};

/// Lines of standard error kept for each failure.
pub const STDERR_LINES: usize = 20;
/// Bytes of standard error kept per attempt while reading, before cutting lines.
const STDERR_BYTES: usize = 8 << 10;

/// The last [`STDERR_LINES`] lines of standard error of each attempt in
/// `wanted`, from `run`'s output log; warnings for what could not be read.
pub(super) fn stderr_tails(
    run: &RunView,
    wanted: &[(TaskId, u32)],
    warnings: &mut Vec<String>,
) -> Result<HashMap<(TaskId, u32), Vec<String>>, ReportError> {
    let mut tails: HashMap<(TaskId, u32), Vec<u8>> = wanted.iter().map(|&key| (key, Vec::new())).collect();
    let Some(mut reader) = run.output().map_err(ReportError::Run)?.filter(|_| !wanted.is_empty()) else {
        return Ok(HashMap::new());
    };
    let path = run.dir.output_log();
    for record in reader.by_ref() {
        let record = record.map_err(|e| RunDirError::reading(&path, e))?;
        if record.stream != OutputStream::Stderr {
            continue;
        }
        if let Some(tail) = tails.get_mut(&(record.task, record.attempt)) {
            tail.extend(&record.data);
            if tail.len() > 2 * STDERR_BYTES {
                tail.drain(..tail.len() - STDERR_BYTES);
            }
        }
    }
    let health = run.health(reader.damage(), reader.torn_tail());
    if let Some(torn) = health.torn {
        warnings.push(format!("the output log ends with {} bytes of an incomplete record; ignored", torn.bytes));
    }
    warnings.extend(health.damage.iter().map(|d| format!("the output log is damaged: {d}")));
    Ok(tails
        .into_iter()
        .map(|(key, bytes)| {
            let text = String::from_utf8_lossy(&bytes);
            let lines: Vec<&str> = text.lines().collect();
            (key, lines[lines.len().saturating_sub(STDERR_LINES)..].iter().map(|l| (*l).to_owned()).collect())
        })
        .collect())
}
