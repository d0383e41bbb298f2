//! Index lists of a selector or an `each` range: `"1-1000"`, `"1-100:2"`,
//! `"1,5,10-20"`, parsed into [`IntRange`]s.

use super::domain::IntRange;
use super::range_error::RangeError;

/// Parses `"1-1000"`, `"1-100:2"`, `"1,5,10-20"` into ranges, in the order written.
pub fn parse_ranges(text: &str) -> Result<Vec<IntRange>, RangeError> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(RangeError::EmptyPart { text: text.to_owned() });
        }
        out.push(parse_range_part(part)?);
    }
    Ok(out)
}

fn parse_range_part(part: &str) -> Result<IntRange, RangeError> {
    let (bounds, step) = match part.split_once(':') {
        Some((b, s)) => {
            let step: u64 = s.trim().parse().map_err(|_| RangeError::BadStep { step: s.to_owned() })?;
            if step == 0 {
                return Err(RangeError::ZeroStep { part: part.to_owned() });
            }
            (b.trim(), step)
        }
        None => (part, 1),
    };
    // A leading '-' belongs to a negative start; split on the first '-' after it.
    let split = bounds.char_indices().skip(1).find(|&(_, c)| c == '-').map(|(i, _)| i);
    let int = |s: &str| s.trim().parse::<i64>().map_err(|_| RangeError::NotInteger { text: s.to_owned() });
    match split {
        None => Ok(IntRange { start: int(bounds)?, count: 1, step }),
        Some(i) => {
            let (start, end) = (int(&bounds[..i])?, int(&bounds[i + 1..])?);
            if end < start {
                return Err(RangeError::Backwards { part: part.to_owned() });
            }
            // All of i64 holds 2^64 integers, one more than a u64 counts.
            let count = (i128::from(end) - i128::from(start)) / i128::from(step) + 1;
            let count = u64::try_from(count).map_err(|_| RangeError::TooLarge { part: part.to_owned() })?;
            Ok(IntRange { start, count, step })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
