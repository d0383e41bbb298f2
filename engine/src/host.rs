//! What flow asks the machine it runs on: the clock, the host name and the
//! cluster job, and how a time is written in UTC.
//!
//! Times are kept as µs since the Unix epoch everywhere (journal records,
//! output records, `meta.json`, allocations); this module is the one place
//! that reads the wall clock and turns such a time into a date.

/// Microseconds since the Unix epoch, now.
pub fn now_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// This machine's host name (`localhost` if it has none).
pub fn hostname() -> String {
    nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok()).unwrap_or_else(|| "localhost".to_owned())
}

/// The cluster job this process runs in (`SLURM_JOB_ID`, `PBS_JOBID`), if any.
pub fn cluster_job() -> Option<String> {
    ["SLURM_JOB_ID", "PBS_JOBID"].iter().find_map(|v| std::env::var(v).ok())
}

/// How [`utc`] writes a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtcStyle {
    /// `20261118-110640`: a run id's start.
    Compact,
    /// `2026-11-18 11:06:40 UTC`: for people.
    Readable,
    /// `2026-11-18T11:06:40.150Z`: RFC 3339, to the millisecond.
    Rfc3339,
}

/// The time `us` (µs since the Unix epoch) in UTC, written in `style`.
pub fn utc(us: u64, style: UtcStyle) -> String {
    let [year, month, day, h, m, s] = utc_fields(us / 1_000_000);
    match style {
        UtcStyle::Compact => format!("{year:04}{month:02}{day:02}-{h:02}{m:02}{s:02}"),
        UtcStyle::Readable => format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC"),
        UtcStyle::Rfc3339 => {
            format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{:03}Z", us % 1_000_000 / 1000)
        }
    }
}

/// Year, month, day, hour, minute and second in UTC of a Unix time.
fn utc_fields(secs: u64) -> [i64; 6] {
    let days = secs / 86_400;
    let rem = (secs % 86_400) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    [year, month, day, rem / 3600, rem % 3600 / 60, rem % 60]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_styles() {
        assert_eq!(utc(0, UtcStyle::Compact), "19700101-000000");
        assert_eq!(utc(1_795_000_000_000_000, UtcStyle::Compact), "20261118-110640");
        assert_eq!(utc(0, UtcStyle::Readable), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_700_000_000_000_000, UtcStyle::Readable), "2023-11-14 22:13:20 UTC");
        assert_eq!(utc(1_700_000_000_150_999, UtcStyle::Rfc3339), "2023-11-14T22:13:20.150Z");
    }
}
