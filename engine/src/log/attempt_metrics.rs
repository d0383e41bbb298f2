//! [`AttemptMetrics`]: where one attempt ran and what its process used, as
//! the journal keeps it on the record that ends the attempt, and
//! [`ProcessUsage`], the part the worker measures.

use serde::{Deserialize, Serialize};

use super::cursor::Cursor;

/// What an attempt's process used, measured by the worker that ran it: the
/// `rusage` that `wait4` returned for the process flow started (the leader
/// of the task's process group), and what Linux's `/proc` tells of it.
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
    /// Peak virtual memory of the process tree in bytes: the largest sum
    /// of `VmPeak` over its live processes, sampled while it ran; `None`
    /// when never sampled (it ended first, or no `/proc`).
    pub peak_vmem: Option<u64>,
    /// Bytes it read and wrote; `None` where Linux does not tell them.
    pub io: Option<IoBytes>,
}

/// Bytes a process and the children it waited for read and wrote: the
/// storage's from the `rusage` of its reaping, the system calls' from
/// `/proc/<pid>/io` read when it ended, if it ran long enough to be
/// sampled (see [`ProcessUsage::peak_vmem`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoBytes {
    /// Bytes fetched from storage (`read_bytes`): reads served by the page
    /// cache do not count.
    pub read_bytes: u64,
    /// Bytes sent, or to be sent, to storage (`write_bytes`).
    pub write_bytes: u64,
    /// Bytes passed to `read` and similar calls (`rchar`): pipes, sockets
    /// and cached files included; `None` for a process that ended before
    /// its first sample.
    pub rchar: Option<u64>,
    /// Bytes passed to `write` and similar calls (`wchar`); `None` likewise.
    pub wchar: Option<u64>,
}

/// Set in the `/proc` fields' flags when `peak_vmem` follows.
const HAS_VMEM: u8 = 1;
/// Set when the four [`IoBytes`] follow.
const HAS_IO: u8 = 2;
/// Set when only `read_bytes` and `write_bytes` follow (no `rchar`, `wchar`).
const HAS_STORAGE_IO: u8 = 4;

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
        let chars = u.io.and_then(|io| io.rchar.zip(io.wchar));
        let io_flag = match (u.io, chars) {
            (None, _) => 0,
            (Some(_), Some(_)) => HAS_IO,
            (Some(_), None) => HAS_STORAGE_IO,
        };
        out.push(if u.peak_vmem.is_some() { HAS_VMEM } else { 0 } | io_flag);
        out.extend(u.peak_vmem.iter().flat_map(|v| v.to_le_bytes()));
        if let Some(io) = u.io {
            let (rchar, wchar) = chars.unzip();
            for field in [Some(io.read_bytes), Some(io.write_bytes), rchar, wchar].into_iter().flatten() {
                out.extend(field.to_le_bytes());
            }
        }
        let length = u16::try_from(out.len() - start - 2).unwrap_or(u16::MAX);
        out[start..start + 2].copy_from_slice(&length.to_le_bytes());
    }

    /// Reads what [`Self::encode`] wrote, leaving `c` after it. Fields a
    /// later version appends inside the length are skipped.
    pub(super) fn decode(c: &mut Cursor<'_>) -> Option<Self> {
        let length = usize::from(c.u16()?);
        let mut f = Cursor(c.take(length)?);
        let mut usage = ProcessUsage {
            started_us: f.u64()?,
            ended_us: f.u64()?,
            wall_us: f.u64()?,
            user_us: f.u64()?,
            system_us: f.u64()?,
            max_rss: f.u64()?,
            peak_vmem: None,
            io: None,
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
        // Blocks written before the `/proc` fields existed end here.
        if let Some(flags) = f.u8() {
            if flags & HAS_VMEM != 0 {
                usage.peak_vmem = Some(f.u64()?);
            }
            if flags & HAS_IO != 0 {
                let (read_bytes, write_bytes, rchar, wchar) = (f.u64()?, f.u64()?, f.u64()?, f.u64()?);
                usage.io = Some(IoBytes { read_bytes, write_bytes, rchar: Some(rchar), wchar: Some(wchar) });
            } else if flags & HAS_STORAGE_IO != 0 {
                let (read_bytes, write_bytes) = (f.u64()?, f.u64()?);
                usage.io = Some(IoBytes { read_bytes, write_bytes, rchar: None, wchar: None });
            }
        }
        Some(Self { usage, variant, cpus, gpus, host, allocation })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block as written before the `/proc` fields existed reads with none.
    #[test]
    fn a_block_without_proc_fields_still_reads() {
        let io = IoBytes { read_bytes: 1, write_bytes: 2, rchar: Some(3), wchar: Some(4) };
        let usage = ProcessUsage { max_rss: 7, peak_vmem: Some(9), io: Some(io), ..ProcessUsage::default() };
        let metrics = AttemptMetrics { usage, host: "n1".into(), ..AttemptMetrics::default() };
        let mut out = Vec::new();
        metrics.encode(&mut out);
        assert_eq!(AttemptMetrics::decode(&mut Cursor(&out)), Some(metrics.clone()));
        // Flags, one `u64` and four more.
        out.truncate(out.len() - 1 - 8 - 32);
        let length = u16::from_le_bytes([out[0], out[1]]) - 41;
        out[..2].copy_from_slice(&length.to_le_bytes());
        let old = AttemptMetrics::decode(&mut Cursor(&out)).unwrap();
        assert_eq!(old.usage, ProcessUsage { peak_vmem: None, io: None, ..usage });
        assert_eq!(old.host, "n1");
    }

    /// A process that ended before its first sample has its storage bytes
    /// and no `rchar`, `wchar` (issue 28).
    #[test]
    fn storage_bytes_without_system_call_bytes_round_trip() {
        let io = IoBytes { read_bytes: 4096, write_bytes: 8192, rchar: None, wchar: None };
        let usage = ProcessUsage { max_rss: 7, io: Some(io), ..ProcessUsage::default() };
        let metrics = AttemptMetrics { usage, host: "n1".into(), ..AttemptMetrics::default() };
        let mut out = Vec::new();
        metrics.encode(&mut out);
        assert_eq!(AttemptMetrics::decode(&mut Cursor(&out)), Some(metrics.clone()));
        // Flags and two `u64`s after the host and the allocation.
        assert_eq!(out[out.len() - 17], HAS_STORAGE_IO);
    }
}
