//! The keys that say what happens on failure, compiled: `retry_delay`
//! into a [`BackOff`], `retry_on` into [`RetryOn`]s, and `max_fails` (a
//! task's or the workflow's) into [`MaxFails`].

use nix::sys::signal::Signal;

use super::ctx::Ctx;
use super::value_error::ValueError;
use crate::diag::{Code, Diagnostic, closest};
use crate::ir::{BackOff, MAX_DELAY_US, MaxFails, RetryOn};
use crate::spec::{BACK_OFF_KEYS, Quantity, RetryDelay, Sp, Text};
use crate::units::parse_duration_us;

const DELAY_HELP: &str = "use a duration like \"30s\", \"250ms\" or \"5m\", or a number of seconds";
const MAX_FAILS_HELP: &str = "use a count (`5`) or a share of the instances (`\"10%\"` or `0.1`)";
/// The factor of a back-off table that does not give one.
const DEFAULT_FACTOR: f64 = 2.0;

/// `retry_delay`: a fixed wait (factor 1) or a back-off table.
pub fn retry_delay(ctx: &mut Ctx, delay: &Sp<RetryDelay>) -> Option<BackOff> {
    match &delay.value {
        RetryDelay::Fixed(q) => {
            let first_us = duration_us(ctx, &Sp::new(q.clone(), delay.span.clone()), "retry_delay")?;
            Some(BackOff { first_us, factor: 1.0, max_us: None })
        }
        RetryDelay::BackOff(entries) => back_off(ctx, entries, &delay.span),
    }
}

fn back_off(ctx: &mut Ctx, entries: &[(Sp<String>, Sp<Quantity>)], span: &std::ops::Range<usize>) -> Option<BackOff> {
    let (mut first, mut factor, mut max) = (None, Some(DEFAULT_FACTOR), None);
    let mut ok = true;
    for (key, value) in entries {
        match key.value.as_str() {
            "first" => first = duration_us(ctx, value, "retry_delay.first"),
            "max" => max = Some(duration_us(ctx, value, "retry_delay.max")),
            "factor" => factor = back_off_factor(ctx, value),
            other => {
                let help = match closest(other, BACK_OFF_KEYS) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => format!("expected one of: {}", BACK_OFF_KEYS.join(", ")),
                };
                ctx.report(
                    Diagnostic::new(Code::SpecUnknownKey, format!("unknown key `{other}` in retry_delay"))
                        .at(key.span.clone(), "unknown key")
                        .help(help),
                );
                ok = false;
            }
        }
    }
    let has_first = entries.iter().any(|(k, _)| k.value == "first");
    if !has_first {
        ctx.report(
            Diagnostic::new(Code::SpecMissingKey, "missing key `first` in retry_delay")
                .at(span.clone(), "no `first` wait")
                .help("say how long to wait before the first retry: `{ first = \"30s\", factor = 2, max = \"10m\" }`"),
        );
    }
    let (first_us, factor, max_us) = (first?, factor?, max.unwrap_or(Some(u64::MAX))?);
    if !ok {
        return None;
    }
    if let Some((_, max)) = entries.iter().find(|(k, _)| k.value == "max")
        && max_us < first_us
    {
        ctx.report(
            Diagnostic::new(Code::CompileBadValue, "bad `retry_delay.max`: it is shorter than `first`")
                .at(max.span.clone(), "shorter than the first wait")
                .help("make `max` at least `first`, or leave it out for no limit"),
        );
        return None;
    }
    Some(BackOff { first_us, factor, max_us: (max_us != u64::MAX).then_some(max_us) })
}

fn back_off_factor(ctx: &mut Ctx, q: &Sp<Quantity>) -> Option<f64> {
    let check = |n: f64| if n.is_finite() && n >= 1.0 { Ok(n) } else { Err(ValueError::BelowOne(n)) };
    let parse = |s: &str| s.trim().parse::<f64>().map_err(|_| ValueError::NotNumber(s.to_owned())).and_then(check);
    ctx.quantity(
        q,
        "retry_delay.factor",
        None,
        check,
        parse,
        "`factor` is a number of at least 1 (1 keeps the wait the same)",
    )
}

fn duration_us(ctx: &mut Ctx, q: &Sp<Quantity>, key: &str) -> Option<u64> {
    let at_most_a_day = |us: u64| if us <= MAX_DELAY_US { Ok(us) } else { Err(ValueError::OverADay) };
    let secs = |n: f64| {
        if n.is_finite() && (0.0..=1e12).contains(&n) {
            at_most_a_day((n * 1e6).ceil() as u64)
        } else {
            Err(ValueError::NotSeconds(n))
        }
    };
    ctx.quantity(q, key, None, secs, |s| at_most_a_day(parse_duration_us(s)?), DELAY_HELP)
}

/// The words `retry_on` knows besides exit codes and signal names.
const RETRY_ON_WORDS: [&str; 1] = ["timeout"];

/// `retry_on`: each entry an exit code (0–255), a signal name (`"SIGKILL"`
/// or `"KILL"`) or `"timeout"`; every bad entry is reported.
pub fn retry_on(ctx: &mut Ctx, list: &Sp<Vec<Sp<Text>>>) -> Vec<RetryOn> {
    let mut out = Vec::new();
    for entry in &list.value {
        let text = entry.value.0.trim();
        if let Ok(code) = text.parse::<i64>() {
            match i32::try_from(code) {
                Ok(code) if (0..=255).contains(&code) => out.push(RetryOn::Exit(code)),
                _ => ctx.report(
                    Diagnostic::new(Code::CompileBadValue, format!("bad `retry_on`: exit code {code} is not 0 to 255"))
                        .at(entry.span.clone(), "no process exits with this")
                        .help("list exit codes from 0 to 255, signal names like \"SIGKILL\", or \"timeout\""),
                ),
            }
            continue;
        }
        if text.eq_ignore_ascii_case("timeout") {
            out.push(RetryOn::Timeout);
            continue;
        }
        let upper = text.to_ascii_uppercase();
        let name = if upper.starts_with("SIG") { upper } else { format!("SIG{upper}") };
        match name.parse::<Signal>() {
            Ok(signal) => out.push(RetryOn::Signal(signal as i32)),
            Err(_) => {
                let names: Vec<&str> = Signal::iterator().map(Signal::as_str).chain(RETRY_ON_WORDS).collect();
                let help = match closest(&name, names.iter().copied()).or_else(|| closest(text, RETRY_ON_WORDS)) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => "list exit codes from 0 to 255, signal names like \"SIGKILL\", or \"timeout\"".to_owned(),
                };
                ctx.report(
                    Diagnostic::new(
                        Code::CompileBadValue,
                        format!("bad `retry_on`: `{text}` is no exit code, signal or \"timeout\""),
                    )
                    .at(entry.span.clone(), "not a failure flow knows")
                    .help(help),
                );
            }
        }
    }
    out
}

/// `max_fails`: a whole number of at least 1, or a share above 0 and at
/// most 1 (`0.1`, `"10%"`).
pub fn max_fails(ctx: &mut Ctx, q: &Sp<Quantity>, key: &str) -> Option<MaxFails> {
    let from_number = |n: f64| match n {
        n if n.is_finite() && n >= 1.0 && n.fract() == 0.0 && n <= u32::MAX as f64 => Ok(MaxFails::Count(n as u64)),
        n if n > 0.0 && n < 1.0 => Ok(MaxFails::Fraction(n)),
        n if n.fract() == 0.0 && n > u32::MAX as f64 => Err(ValueError::TooLarge { max: u32::MAX.into() }),
        n => Err(ValueError::BelowMin { n, min: 1 }),
    };
    let parse = |s: &str| match s.trim().strip_suffix('%') {
        Some(percent) => {
            let p: f64 = percent.trim().parse().map_err(|_| ValueError::NotNumber(s.to_owned()))?;
            if p > 0.0 && p <= 100.0 {
                Ok(MaxFails::Fraction(p / 100.0))
            } else {
                Err(ValueError::NotShare(s.trim().to_owned()))
            }
        }
        None => s.trim().parse::<f64>().map_err(|_| ValueError::NotNumber(s.to_owned())).and_then(from_number),
    };
    ctx.quantity(q, key, None, from_number, parse, MAX_FAILS_HELP)
}
