//! The report's figures as inline SVG, drawn from the [`super::Report`] alone: the
//! attempts by worker, CPU use over time, the task graph and the allocations.
//! Hovering a shape shows its `<title>`; no script is needed.

use std::fmt::Write;

use super::graph_view::GraphView;
use super::report::AllocationSpan;
use super::timeline::Timeline;
use crate::units::{BytesStyle, DurationStyle, bytes, count, duration};

/// Width of the drawings, in SVG units (they scale to the page).
const WIDTH: f64 = 1100.0;
/// Width of the label column on the left of time charts.
const LEFT: f64 = 200.0;
/// Height of one row of bars.
const ROW: f64 = 12.0;
/// Fill colours of tasks, by position in the graph.
const PALETTE: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#bab0ac", "#ff9da7", "#86bcb6"];
/// Colour of failed attempts and tasks.
const FAILED: &str = "#d62728";

/// The fill of task `group` in state `state`.
pub fn colour(group: u32, state: &str) -> &'static str {
    match state {
        "failed" | "lost" => FAILED,
        _ => PALETTE[group as usize % PALETTE.len()],
    }
}

/// Escapes text for SVG and HTML.
fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn open(out: &mut String, class: &str, height: f64) {
    let _ = write!(
        out,
        r#"<svg class="{class}" viewBox="0 0 {WIDTH} {height}" width="100%" font-size="11" font-family="sans-serif">"#
    );
}

/// The time axis under a chart: five ticks from the start to `span_us`.
fn axis(out: &mut String, y: f64, span_us: u64) {
    let plot = WIDTH - LEFT - 10.0;
    let _ = write!(out, r##"<line x1="{LEFT}" x2="{}" y1="{y}" y2="{y}" stroke="#888"/>"##, LEFT + plot);
    for i in 0..=4u32 {
        let x = LEFT + plot * f64::from(i) / 4.0;
        let anchor = if i == 4 { "end" } else { "middle" };
        let label = duration(span_us * u64::from(i) / 4, DurationStyle::Spaced);
        let _ = write!(out, r##"<text x="{x:.1}" y="{}" text-anchor="{anchor}" fill="#555">{label}</text>"##, y + 14.0);
    }
}

/// Attempts by worker: one bar per attempt, or per bin the share of the
/// lane's busiest moment.
pub fn gantt(t: &Timeline) -> String {
    let span = (t.end_us - t.start_us) as f64;
    let plot = WIDTH - LEFT - 10.0;
    let x = |us: u64| LEFT + plot * us as f64 / span;
    let heights: Vec<f64> =
        t.lanes.iter().map(|l| if t.binned { 2.0 * ROW } else { f64::from(l.rows) * ROW } + 8.0).collect();
    let height = heights.iter().sum::<f64>() + 24.0;
    let mut out = String::new();
    open(&mut out, "gantt", height);
    let peak = t.lanes.iter().flat_map(|l| &l.busy).fold(0.0f64, |a, &b| a.max(b)).max(1e-9);
    let mut y = 0.0;
    for (lane, h) in t.lanes.iter().zip(&heights) {
        let _ =
            write!(out, r##"<g class="lane"><text x="4" y="{:.1}" fill="#333">{}</text>"##, y + 14.0, esc(&lane.label));
        let _ = write!(out, r##"<line x1="0" x2="{WIDTH}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/>"##);
        for bar in &lane.bars {
            let (x0, x1) = (x(bar.start_us), x(bar.end_us));
            let by = y + 4.0 + f64::from(bar.row) * ROW;
            let _ = write!(
                out,
                r#"<rect class="attempt {}" x="{x0:.1}" y="{by:.1}" width="{:.1}" height="{}" fill="{}"><title>{} ({}, {})</title></rect>"#,
                bar.state,
                (x1 - x0).max(1.0),
                ROW - 2.0,
                colour(bar.group, bar.state),
                esc(&bar.label),
                bar.state,
                duration(bar.end_us - bar.start_us, DurationStyle::Spaced)
            );
        }
        for (i, &busy) in lane.busy.iter().enumerate().filter(|(_, b)| **b > 0.0) {
            let x0 = x(i as u64 * t.bin_us);
            let _ = write!(
                out,
                r##"<rect class="bin" x="{x0:.1}" y="{:.1}" width="{:.1}" height="{}" fill="#4e79a7" fill-opacity="{:.2}"><title>{busy:.1} running</title></rect>"##,
                y + 4.0,
                (x(t.bin_us) - x(0)).max(1.0),
                2.0 * ROW,
                (busy / peak).max(0.05)
            );
        }
        // A red mark under a bin where an attempt failed, an orange one above where a retry started.
        let marks = [
            (&lane.failed, y + 4.0 + 2.0 * ROW - 3.0, "failed", "#e15759"),
            (&lane.retried, y + 2.0, "retried", "#f28e2b"),
        ];
        for (counts, my, class, fill) in marks {
            for (i, &n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
                let _ = write!(
                    out,
                    r#"<rect class="mark {class}" x="{:.1}" y="{my:.1}" width="{:.1}" height="3" fill="{fill}"><title>{} {class}</title></rect>"#,
                    x(i as u64 * t.bin_us),
                    (x(t.bin_us) - x(0)).max(2.0),
                    count(u64::from(n)),
                );
            }
        }
        out.push_str("</g>");
        y += h;
    }
    axis(&mut out, y + 2.0, t.end_us - t.start_us);
    out.push_str("</svg>");
    out
}

/// CPUs given to running attempts and CPUs they kept busy, per bin, with
/// the workers' CPUs as a line.
pub fn cpu_chart(t: &Timeline) -> String {
    let usage = Usage { class: "cpu", given: &t.cpu_given, used: &t.cpu_used, capacity: t.cpu_capacity, floor: 1.0 };
    usage_chart(t, &usage, &["CPUs given to running tasks", "CPUs kept busy", "CPUs on the workers"], |v| {
        format!("{v:.1} cpus")
    })
}

/// GPUs given to running attempts, per bin, with the workers' GPUs as a line.
pub fn gpu_chart(t: &Timeline) -> String {
    let usage = Usage { class: "gpu", given: &t.gpu_given, used: &[], capacity: t.gpu_capacity, floor: 1.0 };
    usage_chart(t, &usage, &["GPUs given to running tasks", "", "GPUs on the workers"], |v| format!("{v:.1} gpus"))
}

/// Memory the running attempts asked for and at most used (their peak
/// RSS, held over each attempt), per bin, with the workers' memory as a line.
pub fn memory_chart(t: &Timeline) -> String {
    let usage = Usage {
        class: "memory",
        given: &t.mem_asked,
        used: &t.mem_used,
        capacity: t.mem_capacity,
        floor: f64::MIN_POSITIVE,
    };
    let labels = ["memory asked for by running tasks", "peak memory of running tasks", "memory of the workers"];
    usage_chart(t, &usage, &labels, |v| bytes(v as u64, BytesStyle::Trimmed))
}

/// One resource over time: what was given, what was used, what there was.
struct Usage<'a> {
    class: &'a str,
    given: &'a [f64],
    used: &'a [f64],
    capacity: Option<f64>,
    /// The least the scale goes up to (one unit for counted devices).
    floor: f64,
}

/// An area chart of `u.given` (light) and `u.used` (dark) per bin with
/// `u.capacity` as a dashed line; `titles` name the three, `unit` writes a value.
fn usage_chart(t: &Timeline, u: &Usage, titles: &[&str; 3], unit: impl Fn(f64) -> String) -> String {
    let (height, top) = (180.0, 10.0);
    let plot = WIDTH - LEFT - 10.0;
    let max = u.given.iter().chain(u.used).chain(&u.capacity).fold(u.floor, |a, &b| a.max(b));
    let bins = u.given.len().max(1) as f64;
    let y = |v: f64| top + (height - 40.0) * (1.0 - v / max);
    let area = |values: &[f64]| {
        let mut points = format!("{LEFT},{:.1}", y(0.0));
        for (i, v) in values.iter().enumerate() {
            let (x0, x1) = (LEFT + plot * i as f64 / bins, LEFT + plot * (i + 1) as f64 / bins);
            let _ = write!(points, " {x0:.1},{:.1} {x1:.1},{:.1}", y(*v), y(*v));
        }
        let _ = write!(points, " {:.1},{:.1}", LEFT + plot, y(0.0));
        points
    };
    let mut out = String::new();
    open(&mut out, u.class, height);
    let [given, used, capacity_title] = titles;
    let _ = write!(
        out,
        r##"<polygon class="given" points="{}" fill="#a0cbe8"><title>{given}</title></polygon>"##,
        area(u.given)
    );
    if !u.used.is_empty() {
        let _ = write!(
            out,
            r##"<polygon class="used" points="{}" fill="#4e79a7"><title>{used}</title></polygon>"##,
            area(u.used)
        );
    }
    if let Some(capacity) = u.capacity {
        let _ = write!(
            out,
            r##"<line class="capacity" x1="{LEFT}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#333" stroke-dasharray="4 3"><title>{}: {}</title></line>"##,
            LEFT + plot,
            y(capacity),
            y(capacity),
            capacity_title,
            unit(capacity)
        );
    }
    for v in [0.0, max / 2.0, max] {
        let _ = write!(
            out,
            r##"<text x="{}" y="{:.1}" text-anchor="end" fill="#555">{}</text>"##,
            LEFT - 6.0,
            y(v) + 4.0,
            unit(v)
        );
    }
    axis(&mut out, height - 28.0, t.end_us - t.start_us);
    out.push_str("</svg>");
    out
}

/// The task graph: a box per task in columns by layer, a curve per edge.
pub fn graph(g: &GraphView) -> String {
    let (col, row, w, h) = (220.0, 56.0, 170.0, 38.0);
    let width = (f64::from(g.layers) * col).max(WIDTH);
    let height = f64::from(g.rows.max(1)) * row + 10.0;
    let pos = |i: u32| {
        let n = &g.nodes[i as usize];
        (10.0 + f64::from(n.layer) * col, 10.0 + f64::from(n.row) * row)
    };
    let mut out = format!(
        r#"<svg class="graph" viewBox="0 0 {width} {height}" width="{}" font-size="12" font-family="sans-serif">"#,
        if width > WIDTH { format!("{width}") } else { "100%".to_owned() }
    );
    out.push_str(r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#888"/></marker></defs>"##);
    for e in &g.edges {
        let ((x0, y0), (x1, y1)) = (pos(e.from), pos(e.to));
        let (x0, y0, x1, y1) = (x0 + w, y0 + h / 2.0, x1, y1 + h / 2.0);
        let mid = (x0 + x1) / 2.0;
        let _ = write!(
            out,
            r##"<path class="edge" d="M{x0:.1},{y0:.1} C{mid:.1},{y0:.1} {mid:.1},{y1:.1} {x1:.1},{y1:.1}" fill="none" stroke="#888" marker-end="url(#arrow)"/>"##
        );
    }
    for (i, n) in g.nodes.iter().enumerate() {
        let (x, y) = pos(i as u32);
        let stroke = if n.state == "succeeded" { "#555" } else { colour(0, n.state) };
        let _ = write!(
            out,
            r##"<g class="node {}"><rect x="{x:.1}" y="{y:.1}" width="{w}" height="{h}" rx="5" fill="{}" fill-opacity="0.25" stroke="{stroke}" stroke-width="1.5"/><text x="{:.1}" y="{:.1}" fill="#222">{}</text><text x="{:.1}" y="{:.1}" fill="#555" font-size="10">×{} · {}</text><title>{} ({})</title></g>"##,
            n.state,
            colour(i as u32, "succeeded"),
            x + 8.0,
            y + 16.0,
            esc(&n.name),
            x + 8.0,
            y + 31.0,
            n.count,
            n.state,
            esc(&n.name),
            n.state
        );
    }
    out.push_str("</svg>");
    out
}

/// Each allocation as a bar: queued (light) from its submission, then
/// running (dark) until it ended or the run's end.
pub fn allocations(allocs: &[AllocationSpan], t: &Timeline) -> String {
    let start = allocs.iter().map(|a| a.submitted_us).min().unwrap_or(t.start_us).min(t.start_us);
    let end = allocs.iter().filter_map(|a| a.ended_us).max().unwrap_or(t.end_us).max(t.end_us);
    let span = (end - start).max(1) as f64;
    let plot = WIDTH - LEFT - 10.0;
    let x = |us: u64| LEFT + plot * us.saturating_sub(start) as f64 / span;
    let height = allocs.len() as f64 * 18.0 + 28.0;
    let mut out = String::new();
    open(&mut out, "allocations", height);
    for (i, a) in allocs.iter().enumerate() {
        let y = i as f64 * 18.0 + 2.0;
        let label = format!("{} (job {})", a.id, a.job_id);
        let _ = write!(out, r##"<text x="4" y="{:.1}" fill="#333">{}</text>"##, y + 11.0, esc(&label));
        let running = a.started_us.unwrap_or(a.ended_us.unwrap_or(end));
        let finish = a.ended_us.unwrap_or(end);
        let why = a.reason.as_deref().map(|r| format!(": {}", esc(r))).unwrap_or_default();
        let _ = write!(
            out,
            r##"<rect class="queued" x="{:.1}" y="{y:.1}" width="{:.1}" height="14" fill="#cfcfcf"><title>queued</title></rect>"##,
            x(a.submitted_us),
            (x(running) - x(a.submitted_us)).max(0.5)
        );
        if a.started_us.is_some() {
            let fill = if a.state == "failed" { FAILED } else { "#59a14f" };
            let _ = write!(
                out,
                r#"<rect class="running" x="{:.1}" y="{y:.1}" width="{:.1}" height="14" fill="{fill}"><title>{}, {} workers{why}</title></rect>"#,
                x(running),
                (x(finish) - x(running)).max(0.5),
                a.state,
                a.workers
            );
        }
    }
    axis(&mut out, height - 24.0, end - start);
    out.push_str("</svg>");
    out
}
