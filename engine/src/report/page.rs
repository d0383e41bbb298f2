//! Renders a [`Report`] as one self-contained HTML page: the template
//! (`report.html`, embedded) holds the page and its CSS, [`super::svg`]
//! draws the figures, and nothing is loaded from anywhere else.

use std::io::Read;
use std::path::Path;

use minijinja::value::Serde;
use minijinja::{Environment, Value, context};

use super::{Report, ReportError, svg};
use crate::host::{UtcStyle, utc};
use crate::units::{BytesStyle, DurationStyle, bytes, count, duration};

/// The page template, with its CSS inline.
const TEMPLATE: &str = include_str!("report.html");

/// Writes `report` as HTML to `out`.
pub fn render(report: &Report, out: &mut impl std::io::Write) -> Result<(), ReportError> {
    let mut env = Environment::new();
    env.add_filter("duration", |us: u64| duration(us, DurationStyle::Spaced));
    env.add_filter("bytes", |n: u64| bytes(n, BytesStyle::Trimmed));
    env.add_filter("count", count);
    env.add_filter("time", time);
    env.add_filter("colour", |group: u32| svg::colour(group, "succeeded"));
    env.add_template("report.html", TEMPLATE).map_err(|e| ReportError::Render(e.to_string()))?;
    let template = env.get_template("report.html").map_err(|e| ReportError::Render(e.to_string()))?;
    let figures = context! {
        gantt => svg::gantt(&report.timeline),
        cpu => svg::cpu_chart(&report.timeline),
        gpu => (!report.timeline.gpu_given.is_empty()).then(|| svg::gpu_chart(&report.timeline)),
        memory => (!report.timeline.mem_asked.is_empty()).then(|| svg::memory_chart(&report.timeline)),
        graph => svg::graph(&report.graph),
        allocations => (!report.allocations.is_empty()).then(|| svg::allocations(&report.allocations, &report.timeline)),
    };
    let report = Value::from(Serde(report));
    let html = template.render(context! { report, figures }).map_err(|e| ReportError::Render(e.to_string()))?;
    out.write_all(html.as_bytes())?;
    Ok(())
}

/// How every page [`render()`] writes begins, up to flow's version.
const HEAD: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
                    <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
                    <meta name=\"generator\" content=\"flow ";

/// Whether the file at `path` is a page [`render()`] wrote (it begins as
/// every report does), so that writing a report over it loses nothing.
pub fn is_report(path: &Path) -> std::io::Result<bool> {
    let mut head = Vec::with_capacity(HEAD.len());
    fs_err::File::open(path)?.take(HEAD.len() as u64).read_to_end(&mut head)?;
    Ok(head == HEAD.as_bytes())
}

/// A time in µs since the Unix epoch as `2026-11-25 03:16:19 UTC`.
fn time(us: u64) -> String {
    utc(us, UtcStyle::Readable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_begins_as_is_report_expects() {
        assert!(TEMPLATE.starts_with(HEAD), "update `HEAD` with the template's first lines");
    }

    #[test]
    fn is_report_tells_a_report_from_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let path = dir.path().join(name);
            fs_err::write(&path, text).unwrap();
            path
        };
        let report = file("report.html", &TEMPLATE.replace("{{ report.run.flow_version }}", "0.1.0"));
        assert!(is_report(&report).unwrap());
        for (name, text) in [("workflow.toml", "[[tasks]]\n"), ("empty.html", ""), ("short.html", &HEAD[..20])] {
            assert!(!is_report(&file(name, text)).unwrap(), "{name}");
        }
        let missing = is_report(&dir.path().join("missing.html")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn times_read_in_utc() {
        assert_eq!(time(1_700_000_000_000_000), "2023-11-14 22:13:20 UTC");
    }
}
