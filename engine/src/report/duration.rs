//! [`duration()`]: how the report writes a length of time.

/// A duration in µs for people: `850 µs`, `12 ms`, `3.4 s`, `5m 02s`, `2h 05m`.
pub fn duration(us: u64) -> String {
    let s = us / 1_000_000;
    match us {
        0..1_000 => format!("{us} µs"),
        1_000..1_000_000 => format!("{} ms", us / 1_000),
        1_000_000..60_000_000 => format!("{:.1} s", us as f64 / 1e6),
        60_000_000..3_600_000_000 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        let cases = [(850, "850 µs"), (12_345, "12 ms"), (3_400_000, "3.4 s"), (302_000_000, "5m 02s")];
        for (us, text) in cases {
            assert_eq!(duration(us), text);
        }
        assert_eq!(duration(7_500 * 1_000_000), "2h 05m");
    }
}
