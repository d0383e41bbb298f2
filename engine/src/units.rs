//! Durations and sizes, read and written: the parsers of the value
//! syntaxes inside strings (`"1h30m"`, `"4 GiB"`), and the only formatters
//! of a duration ([`duration`]) and of a byte count ([`bytes`]) for people.
//!
//! Each parser returns a [`UnitError`] on failure; the caller turns it
//! into a diagnostic at the value's span.

use std::fmt::Write as _;

use thiserror::Error;

/// A duration or a size that does not parse; each variant names the text at fault.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum UnitError {
    /// A duration of only whitespace.
    #[error("empty duration")]
    EmptyDuration,
    /// A clock duration with more than `HH:MM:SS`.
    #[error("`{text}` has too many `:` parts (use HH:MM:SS)")]
    TooManyColons {
        /// The duration.
        text: String,
    },
    /// A part of a clock duration that is not a whole number.
    #[error("`{part}` in `{text}` is not a whole number")]
    NotWhole {
        /// The part.
        part: String,
        /// The duration.
        text: String,
    },
    /// A clock duration past what a `u64` of seconds holds.
    #[error("duration too long")]
    DurationTooLong,
    /// Text that reads as no duration.
    #[error("`{text}` is not a duration")]
    NotDuration {
        /// The text.
        text: String,
    },
    /// A number without a unit after it, inside a duration with units.
    #[error("`{text}` needs a unit after {number} (s, m, h or d)")]
    NoUnit {
        /// The duration.
        text: String,
        /// The number without a unit.
        number: f64,
    },
    /// A unit no duration has.
    #[error("unknown duration unit `{unit}` in `{text}`")]
    UnknownDurationUnit {
        /// The unit.
        unit: String,
        /// The duration.
        text: String,
    },
    /// A duration that is negative or too long.
    #[error("`{text}` is not a valid duration")]
    InvalidDuration {
        /// The duration.
        text: String,
    },
    /// Text that does not start with a number.
    #[error("`{text}` is not a size like \"4 GiB\"")]
    NotSize {
        /// The text.
        text: String,
    },
    /// A unit no size has.
    #[error("unknown size unit `{unit}` (use B, KiB, MiB, GiB or TiB)")]
    UnknownSizeUnit {
        /// The unit.
        unit: String,
    },
    /// A size that is negative or too large.
    #[error("`{text}` is not a valid size")]
    InvalidSize {
        /// The size.
        text: String,
    },
}

/// Parses a duration: `"90s"`, `"15m"`, `"2h"`, `"1h30m"`, `"1d"`, `"HH:MM:SS"`,
/// `"MM:SS"` or a bare number of seconds. Returns whole seconds, rounded up.
pub fn parse_duration(text: &str) -> Result<u64, UnitError> {
    Ok(parse_duration_us(text)?.div_ceil(1_000_000))
}

/// Parses a duration as [`parse_duration`] does, to the µs (`"250ms"` is 250,000).
pub fn parse_duration_us(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(UnitError::EmptyDuration);
    }
    if t.contains(':') {
        let parts: Vec<&str> = t.split(':').collect();
        if parts.len() > 3 {
            return Err(UnitError::TooManyColons { text: t.to_owned() });
        }
        let mut secs: u64 = 0;
        for p in &parts {
            let n: u64 = p.parse().map_err(|_| UnitError::NotWhole { part: (*p).to_owned(), text: t.to_owned() })?;
            secs = secs.checked_mul(60).and_then(|s| s.checked_add(n)).ok_or(UnitError::DurationTooLong)?;
        }
        return secs.checked_mul(1_000_000).ok_or(UnitError::DurationTooLong);
    }
    if let Ok(n) = t.parse::<f64>() {
        return seconds(n, t);
    }
    let mut total = 0f64;
    let mut rest = t;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if num_len == 0 {
            return Err(UnitError::NotDuration { text: t.to_owned() });
        }
        let n: f64 = rest[..num_len].parse().map_err(|_| UnitError::NotDuration { text: t.to_owned() })?;
        rest = rest[num_len..].trim_start();
        let unit_len = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
        let factor = match &rest[..unit_len].to_ascii_lowercase()[..] {
            "ms" => 0.001,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
            "d" | "day" | "days" => 86400.0,
            "" => return Err(UnitError::NoUnit { text: t.to_owned(), number: n }),
            other => return Err(UnitError::UnknownDurationUnit { unit: other.to_owned(), text: t.to_owned() }),
        };
        total += n * factor;
        rest = rest[unit_len..].trim_start();
    }
    seconds(total, t)
}

/// `n` seconds in µs, rounded up.
fn seconds(n: f64, text: &str) -> Result<u64, UnitError> {
    if !(0.0..=1e12).contains(&n) {
        return Err(UnitError::InvalidDuration { text: text.to_owned() });
    }
    Ok((n * 1e6).ceil() as u64)
}

/// Parses a size: `"4 GiB"`, `"512MB"`, `"1.5G"`, or a bare number of MiB. Returns bytes.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let num_len = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let n: f64 = t[..num_len].parse().map_err(|_| UnitError::NotSize { text: t.to_owned() })?;
    let unit = t[num_len..].trim().to_ascii_lowercase();
    const K: f64 = 1024.0;
    let factor = match unit.as_str() {
        "" | "m" | "mb" | "mib" => K * K,
        "b" => 1.0,
        "k" | "kb" | "kib" => K,
        "g" | "gb" | "gib" => K * K * K,
        "t" | "tb" | "tib" => K * K * K * K,
        other => return Err(UnitError::UnknownSizeUnit { unit: other.to_owned() }),
    };
    size_bytes(n * factor, t)
}

/// Converts a number of MiB to bytes.
pub fn mib_to_bytes(n: f64) -> Result<u64, UnitError> {
    size_bytes(n * 1024.0 * 1024.0, &n.to_string())
}

fn size_bytes(bytes: f64, text: &str) -> Result<u64, UnitError> {
    if !(0.0..=9e18).contains(&bytes) {
        return Err(UnitError::InvalidSize { text: text.to_owned() });
    }
    Ok(bytes.round() as u64)
}

/// How [`duration`] writes a duration. Past a minute all but
/// [`DurationStyle::Exact`] round down to the second, and past an hour to
/// the minute, with two digits after the first part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationStyle {
    /// `5s`, `1m05s`, `1h05m`: whole seconds, as a worker names a timeout.
    Whole,
    /// `0.25s`, `3m05s`, `2h07m`: hundredths under a minute, for log tables.
    Hundredths,
    /// `0.3s`, `12.4s`, `3m05s`, `2h07m`: tenths under a minute, for how
    /// long a run or an allocation took.
    Tenths,
    /// `850 µs`, `12 ms`, `3.4 s`, `5m 02s`, `2h 05m`: for the report's
    /// spans, with a space before each unit.
    Spaced,
    /// `90s` as `1m30s`, `2h30m`, `1h0m5s` as `1h5s`: every non-zero part,
    /// for time limits that must read exactly.
    Exact,
}

/// A duration of `us` µs for people, written as `style` says.
pub fn duration(us: u64, style: DurationStyle) -> String {
    let s = us / 1_000_000;
    let sep = if style == DurationStyle::Spaced { " " } else { "" };
    match (style, s) {
        (DurationStyle::Exact, _) => exact(s),
        (DurationStyle::Whole, 0..60) => format!("{s}s"),
        (DurationStyle::Hundredths, 0..60) => format!("{:.2}s", us as f64 / 1e6),
        (DurationStyle::Tenths, 0..60) => format!("{:.1}s", us as f64 / 1e6),
        (DurationStyle::Spaced, 0..60) => match us {
            0..1_000 => format!("{us} µs"),
            1_000..1_000_000 => format!("{} ms", us / 1_000),
            _ => format!("{:.1} s", us as f64 / 1e6),
        },
        (_, 60..3600) => format!("{}m{sep}{:02}s", s / 60, s % 60),
        _ => format!("{}h{sep}{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// `1h30m`, `90s` as `1m30s`, `0s`: each non-zero part of `secs`.
fn exact(secs: u64) -> String {
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut text = String::new();
    for (v, unit) in [(h, "h"), (m, "m"), (s, "s")] {
        if v > 0 {
            let _ = write!(text, "{v}{unit}");
        }
    }
    if text.is_empty() { "0s".to_owned() } else { text }
}

/// How many decimals [`bytes`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BytesStyle {
    /// Up to two, without trailing zeros: `4 GiB`, `1.5 GiB`, for messages.
    Trimmed,
    /// Always one: `4.0 GiB`, `10.0 KiB`, for columns of log tables.
    Tenths,
}

/// A byte count in the largest binary unit that keeps it at least 1:
/// `512 B`, then as `style` says (`1.5 GiB`, `10.0 KiB`).
pub fn bytes(n: u64, style: BytesStyle) -> String {
    const UNITS: [(&str, u64); 4] = [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    let Some(&(unit, size)) = UNITS.iter().find(|(_, size)| n >= *size) else { return format!("{n} B") };
    let value = n as f64 / size as f64;
    match style {
        BytesStyle::Trimmed => {
            let value = format!("{value:.2}");
            format!("{} {unit}", value.trim_end_matches('0').trim_end_matches('.'))
        }
        BytesStyle::Tenths => format!("{value:.1} {unit}"),
    }
}

/// `n` and `noun`, in the plural unless `n` is 1: `1 attempt`, `2 attempts`,
/// `0 instances`, `2 retries` (a consonant and `y` make `ies`). Every
/// "N things" flow writes goes through here.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        return format!("{n} {noun}");
    }
    match noun.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) => format!("{n} {stem}ies"),
        _ => format!("{n} {noun}s"),
    }
}

/// A count with a comma between each group of three digits: `1,000,000`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_say_one_thing_and_many_things() {
        assert_eq!(plural(1, "attempt"), "1 attempt");
        assert_eq!(plural(0, "instance"), "0 instances");
        assert_eq!(plural(2, "retry"), "2 retries");
        assert_eq!(plural(3, "day"), "3 days");
    }

    #[test]
    fn counts_group_their_digits_by_three() {
        let cases = [(0, "0"), (999, "999"), (1000, "1,000"), (65_536, "65,536"), (1_000_000, "1,000,000")];
        for (n, text) in cases {
            assert_eq!(count(n), text);
        }
        assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn durations() {
        for (text, secs) in [
            ("90s", 90),
            ("15m", 900),
            ("2h", 7200),
            ("1h30m", 5400),
            ("1d", 86400),
            ("01:30:00", 5400),
            ("02:05", 125),
            ("42", 42),
            ("1.5h", 5400),
            ("500ms", 1),
        ] {
            assert_eq!(parse_duration(text), Ok(secs), "{text}");
        }
        for bad in ["", "abc", "5 parsecs", "1:2:3:4", "h", "-5", "10x"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations_to_the_microsecond() {
        for (text, us) in [("250ms", 250_000), ("1.5s", 1_500_000), ("2m", 120_000_000), ("00:01", 1_000_000)] {
            assert_eq!(parse_duration_us(text), Ok(us), "{text}");
        }
        assert!(parse_duration_us("1e13").is_err(), "past what µs in a u64 hold");
    }

    #[test]
    fn sizes() {
        for (text, bytes) in [
            ("4 GiB", 4 << 30),
            ("512MB", 512 << 20),
            ("1.5G", 3 << 29),
            ("100", 100 << 20),
            ("1 tib", 1 << 40),
            ("10 B", 10),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for bad in ["", "GiB", "4 parsecs", "-1 GiB"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations_read_naturally() {
        let sec = 1_000_000;
        let cases = [
            (5 * sec, ["5s", "5.00s", "5.0s", "5.0 s", "5s"]),
            (250_000, ["0s", "0.25s", "0.2s", "250 ms", "0s"]),
            (850, ["0s", "0.00s", "0.0s", "850 µs", "0s"]),
            (90 * sec, ["1m30s", "1m30s", "1m30s", "1m 30s", "1m30s"]),
            (185 * sec, ["3m05s", "3m05s", "3m05s", "3m 05s", "3m5s"]),
            (7_620 * sec, ["2h07m", "2h07m", "2h07m", "2h 07m", "2h7m"]),
            (3_605 * sec, ["1h00m", "1h00m", "1h00m", "1h 00m", "1h5s"]),
        ];
        let styles = [
            DurationStyle::Whole,
            DurationStyle::Hundredths,
            DurationStyle::Tenths,
            DurationStyle::Spaced,
            DurationStyle::Exact,
        ];
        for (us, texts) in cases {
            for (style, text) in styles.iter().zip(texts) {
                assert_eq!(duration(us, *style), text, "{us} µs as {style:?}");
            }
        }
        assert_eq!(duration(0, DurationStyle::Exact), "0s");
        assert_eq!(duration(12_345, DurationStyle::Spaced), "12 ms");
        assert_eq!(duration(3_400_000, DurationStyle::Spaced), "3.4 s");
    }

    #[test]
    fn sizes_read_naturally() {
        for (n, trimmed, tenths) in [
            (512, "512 B", "512 B"),
            (10 << 10, "10 KiB", "10.0 KiB"),
            (4 << 30, "4 GiB", "4.0 GiB"),
            (3 << 29, "1.5 GiB", "1.5 GiB"),
            (3 << 30, "3 GiB", "3.0 GiB"),
        ] {
            assert_eq!(
                (bytes(n, BytesStyle::Trimmed).as_str(), bytes(n, BytesStyle::Tenths).as_str()),
                (trimmed, tenths)
            );
        }
    }
}
