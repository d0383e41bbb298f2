//! [`AttemptMetrics`]: where one attempt ran and what its process used, as
//! the journal keeps it on the record that ends the attempt, and
//! [`ProcessUsage`], the part the worker measures.

use serde::{Deserialize, Serialize};

use super::cursor::Cursor;

/// What an attempt's process used, measured by the worker that ran it: the
/// `rusage` that `wait4` returned for the process flow started (the leader
/// of the task's process group).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessUsage {
    /// When the process was started, µs since the Unix epoch.
    pub started_us: u64,
    /// When it was reaped, µs since the Unix epoch.
    pub ended_us: u64,
    /// Wall time between the two, µs, from a monotonic clock.
    pub wall_us: u64,
    /// User CPU time, µs, of the process and the children it waited for.
    pub user_us: u64,
    /// System CPU time, µs, likewise.
    pub system_us: u64,
    /// Peak resident set size in bytes: the largest of the process's own
    /// and that of each child it waited for, not their sum.
    pub max_rss: u64,
}

/// One attempt as the journal records it when it ends.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AttemptMetrics {
    /// What its process used.
    pub usage: ProcessUsage,
    /// The variant it ran with: its position in the task's `variants`.
    pub variant: u32,
    /// The CPU ids it was given.
    pub cpus: Vec<u32>,
    /// The GPU ids it was given.
    pub gpus: Vec<u32>,
    /// The host it ran on.
    pub host: String,
    /// The cluster job its worker ran in (Slurm or PBS job id), if any.
    pub allocation: Option<String>,
}

impl AttemptMetrics {
    /// Appends `length: u16` and the fields (see `docs/reference/log.md`).
    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend([0, 0]);
        let u = &self.usage;
        for field in [u.started_us, u.ended_us, u.wall_us, u.user_us, u.system_us, u.max_rss] {
            out.extend(field.to_le_bytes());
        }
        out.extend(self.variant.to_le_bytes());
        for ids in [&self.cpus, &self.gpus] {
            let ids = &ids[..ids.len().min(usize::from(u16::MAX))];
            out.extend((ids.len() as u16).to_le_bytes());
            ids.iter().for_each(|id| out.extend(id.to_le_bytes()));
        }
        for text in [self.host.as_str(), self.allocation.as_deref().unwrap_or_default()] {
            let bytes = &text.as_bytes()[..text.len().min(255)];
            out.push(bytes.len() as u8);
            out.extend(bytes);
        }
        let length = u16::try_from(out.len() - start - 2).unwrap_or(u16::MAX);
        out[start..start + 2].copy_from_slice(&length.to_le_bytes());
    }

    /// Reads what [`Self::encode`] wrote, leaving `c` after it. Fields a
    /// later version appends inside the length are skipped.
    pub(super) fn decode(c: &mut Cursor<'_>) -> Option<Self> {
        let length = usize::from(c.u16()?);
        let mut f = Cursor(c.take(length)?);
        let usage = ProcessUsage {
            started_us: f.u64()?,
            ended_us: f.u64()?,
            wall_us: f.u64()?,
            user_us: f.u64()?,
            system_us: f.u64()?,
            max_rss: f.u64()?,
        };
        let variant = f.u32()?;
        let mut ids = || (0..f.u16()?).map(|_| f.u32()).collect::<Option<Vec<u32>>>();
        let (cpus, gpus) = (ids()?, ids()?);
        let mut text = || {
            let length = usize::from(f.u8()?);
            Some(String::from_utf8_lossy(f.take(length)?).into_owned())
        };
        let (host, allocation) = (text()?, text()?);
        let allocation = Some(allocation).filter(|a| !a.is_empty());
        Some(Self { usage, variant, cpus, gpus, host, allocation })
    }
}
