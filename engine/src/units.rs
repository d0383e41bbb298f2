//! Parsing of the value syntaxes inside strings: durations, sizes, integer ranges.
//!
//! Each parser returns a message fragment on failure; the caller turns it
//! into a diagnostic at the value's span.

use crate::ir::IntRange;

/// Parses a duration: `"90s"`, `"15m"`, `"2h"`, `"1h30m"`, `"1d"`, `"HH:MM:SS"`,
/// `"MM:SS"` or a bare number of seconds. Returns whole seconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    if t.contains(':') {
        let parts: Vec<&str> = t.split(':').collect();
        if parts.len() > 3 {
            return Err(format!("`{t}` has too many `:` parts (use HH:MM:SS)"));
        }
        let mut secs: u64 = 0;
        for p in &parts {
            let n: u64 = p.parse().map_err(|_| format!("`{p}` in `{t}` is not a whole number"))?;
            secs = secs.checked_mul(60).and_then(|s| s.checked_add(n)).ok_or("duration too long")?;
        }
        return Ok(secs);
    }
    if let Ok(n) = t.parse::<f64>() {
        return seconds(n, t);
    }
    let mut total = 0f64;
    let mut rest = t;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if num_len == 0 {
            return Err(format!("`{t}` is not a duration"));
        }
        let n: f64 = rest[..num_len].parse().map_err(|_| format!("`{t}` is not a duration"))?;
        rest = rest[num_len..].trim_start();
        let unit_len = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
        let factor = match &rest[..unit_len].to_ascii_lowercase()[..] {
            "ms" => 0.001,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
            "d" | "day" | "days" => 86400.0,
            "" => return Err(format!("`{t}` needs a unit after {n} (s, m, h or d)")),
            other => return Err(format!("unknown duration unit `{other}` in `{t}`")),
        };
        total += n * factor;
        rest = rest[unit_len..].trim_start();
    }
    seconds(total, t)
}

fn seconds(n: f64, text: &str) -> Result<u64, String> {
    if !(0.0..=1e15).contains(&n) {
        return Err(format!("`{text}` is not a valid duration"));
    }
    Ok(n.ceil() as u64)
}

/// Parses a size: `"4 GiB"`, `"512MB"`, `"1.5G"`, or a bare number of MiB. Returns bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let num_len = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let n: f64 = t[..num_len].parse().map_err(|_| format!("`{t}` is not a size like \"4 GiB\""))?;
    let unit = t[num_len..].trim().to_ascii_lowercase();
    const K: f64 = 1024.0;
    let factor = match unit.as_str() {
        "" | "m" | "mb" | "mib" => K * K,
        "b" => 1.0,
        "k" | "kb" | "kib" => K,
        "g" | "gb" | "gib" => K * K * K,
        "t" | "tb" | "tib" => K * K * K * K,
        other => return Err(format!("unknown size unit `{other}` (use B, KiB, MiB, GiB or TiB)")),
    };
    size_bytes(n * factor, t)
}

/// Converts a number of MiB to bytes.
pub fn mib_to_bytes(n: f64) -> Result<u64, String> {
    size_bytes(n * 1024.0 * 1024.0, &n.to_string())
}

fn size_bytes(bytes: f64, text: &str) -> Result<u64, String> {
    if !(0.0..=9e18).contains(&bytes) {
        return Err(format!("`{text}` is not a valid size"));
    }
    Ok(bytes.round() as u64)
}

/// Parses `"1-1000"`, `"1-100:2"`, `"1,5,10-20"` into ranges, in the order written.
pub fn parse_ranges(text: &str) -> Result<Vec<IntRange>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!("empty part in range `{text}`"));
        }
        out.push(parse_range_part(part)?);
    }
    Ok(out)
}

fn parse_range_part(part: &str) -> Result<IntRange, String> {
    let (bounds, step) = match part.split_once(':') {
        Some((b, s)) => {
            let step: u64 = s.trim().parse().map_err(|_| format!("step `{s}` is not a positive integer"))?;
            if step == 0 {
                return Err(format!("step in `{part}` must be at least 1"));
            }
            (b.trim(), step)
        }
        None => (part, 1),
    };
    // A leading '-' belongs to a negative start; split on the first '-' after it.
    let split = bounds.char_indices().skip(1).find(|&(_, c)| c == '-').map(|(i, _)| i);
    let int = |s: &str| s.trim().parse::<i64>().map_err(|_| format!("`{s}` is not an integer"));
    match split {
        None => Ok(IntRange { start: int(bounds)?, count: 1, step }),
        Some(i) => {
            let (start, end) = (int(&bounds[..i])?, int(&bounds[i + 1..])?);
            if end < start {
                return Err(format!("range `{part}` ends before it starts"));
            }
            // All of i64 holds 2^64 integers, one more than a u64 counts.
            let count = (i128::from(end) - i128::from(start)) / i128::from(step) + 1;
            let count =
                u64::try_from(count).map_err(|_| format!("range `{part}` holds more than 2^64 - 1 integers"))?;
            Ok(IntRange { start, count, step })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn ranges() {
        let r = |start, count, step| IntRange { start, count, step };
        assert_eq!(parse_ranges("1-1000"), Ok(vec![r(1, 1000, 1)]));
        assert_eq!(parse_ranges("1-100:2"), Ok(vec![r(1, 50, 2)]));
        assert_eq!(parse_ranges("1,5,10-20"), Ok(vec![r(1, 1, 1), r(5, 1, 1), r(10, 11, 1)]));
        assert_eq!(parse_ranges("-5--1"), Ok(vec![r(-5, 5, 1)]));
        for bad in ["", "1-", "a-b", "10-1", "1-10:0", "1,,2"] {
            assert!(parse_ranges(bad).is_err(), "{bad}");
        }
    }
}
