//! `flow plan`: a human summary of the compiled graph.

use std::fmt::Write;

use flow_engine::ir::{Command, Domain, EdgeKind, EdgeOrigin, Graph, GroupId, MaxFails, Resources};
use flow_engine::units::{BytesStyle, DurationStyle, bytes, duration, plural};

use crate::table::Table;

/// The summary text: tasks, edges, totals and the critical path.
pub fn summary(graph: &Graph) -> String {
    let mut out = String::new();
    let instances = graph.instance_count();
    let _ = writeln!(out, "{}: {}\n", graph.name, counts(graph));
    let rows: Vec<[String; 4]> = graph
        .groups
        .iter()
        .map(|g| {
            let resources = g.variants.iter().map(describe).collect::<Vec<_>>().join(" | ");
            let id = graph.find(&g.name).unwrap_or(GroupId(0));
            let count = match graph.waits_for(id) {
                Some(producers) => format!("known after {}", names(graph, &producers)),
                None => g.count.to_string(),
            };
            [g.name.clone(), count, expansion(graph, &g.domain), resources]
        })
        .collect();
    table(&mut out, ["task", "instances", "expansion", "resources"], &rows);
    dropped(&mut out, graph);

    if !graph.edges.is_empty() {
        out.push_str("\nedges\n");
        let rows: Vec<[String; 3]> = graph
            .edges
            .iter()
            .map(|e| {
                let kind = match &e.kind {
                    EdgeKind::All => "all".to_owned(),
                    EdgeKind::ElementWise => "element-wise".to_owned(),
                    EdgeKind::Explicit { sources, .. } => format!("explicit ({} pairs)", sources.len()),
                } + e.on.suffix();
                let origin = match e.origin {
                    EdgeOrigin::After => "after",
                    EdgeOrigin::Files => "files",
                    EdgeOrigin::Expansion => "expansion",
                };
                [format!("{} → {}", graph.group(e.from).name, graph.group(e.to).name), kind, origin.to_owned()]
            })
            .collect();
        table(&mut out, ["dependency", "kind", "from"], &rows);
    }

    let cpus: f64 = graph.groups.iter().map(|g| g.count as f64 * g.variants[0].cpus.as_f64()).sum();
    let gpus: f64 = graph.groups.iter().map(|g| g.count as f64 * g.variants[0].gpus.as_f64()).sum();
    let _ = write!(out, "\ntotals: {}, {cpus} cpu-tasks", plural(instances, "instance"));
    if gpus > 0.0 {
        let _ = write!(out, ", {gpus} gpu-tasks");
    }
    out.push_str(" (first variant of each task)\n");
    let path = graph.critical_path();
    let names: Vec<&str> = path.groups.iter().map(|&g| graph.group(g).name.as_str()).collect();
    let _ = writeln!(out, "critical path: {} ({})", plural(path.length, "task"), names.join(" → "));
    if let Some(max) = graph.max_fails {
        let limit = match max {
            MaxFails::Count(n) => plural(n, "failed instance"),
            MaxFails::Fraction(f) => format!("{}% of the instances failed", f * 100.0),
        };
        let _ = writeln!(out, "stops at: {limit}");
    }
    if let Some(finally) = &graph.finally {
        let command = match &finally.command {
            Command::Shell(text) => text.clone(),
            Command::Argv(words) => words.join(" "),
        };
        let _ = writeln!(out, "finally: {command} (runs once at the end, whatever happened)");
    }
    out
}

/// The tasks dropped from the run, and why.
fn dropped(out: &mut String, graph: &Graph) {
    if graph.dropped.is_empty() {
        return;
    }
    out.push_str("\ndropped\n");
    let rows: Vec<[String; 2]> = graph.dropped.iter().map(|d| [d.name.clone(), d.reason.to_string()]).collect();
    table(out, ["task", "why"], &rows);
}

/// `3 tasks, 1 instance, 2 edges`.
pub fn counts(graph: &Graph) -> String {
    let deferred = graph.groups.iter().enumerate().filter(|(g, _)| graph.is_dynamic(GroupId(*g as u32))).count();
    let later = if deferred == 0 {
        String::new()
    } else {
        format!(" (+ {} known at run time)", plural(deferred as u64, "task"))
    };
    let dropped = match graph.dropped.len() {
        0 => String::new(),
        n => format!(" ({n} dropped)"),
    };
    format!(
        "{}{dropped}, {}{later}, {}",
        plural(graph.groups.len() as u64, "task"),
        plural(graph.instance_count(), "instance"),
        plural(graph.edges.len() as u64, "edge")
    )
}

fn expansion(graph: &Graph, domain: &Domain) -> String {
    match domain {
        Domain::Single => "-".to_owned(),
        Domain::Range { ranges } => {
            let parts: Vec<String> = ranges.iter().map(ToString::to_string).collect();
            format!("range {}", parts.join(","))
        }
        Domain::Lines { file, .. } => format!("each_line {file}"),
        Domain::Json { file, .. } => format!("from_json {file}"),
        Domain::Chunks { file, lines, .. } => format!("each_chunk {file} ({lines} lines)"),
        Domain::Matrix { axes } => {
            let parts: Vec<String> = axes.iter().map(|(k, v)| format!("{k}×{}", v.len())).collect();
            format!("matrix {}", parts.join(" "))
        }
        Domain::Same { group } => format!("for_each {}", graph.group(*group).name),
        Domain::Deferred { expansion } => format!("{} {} (written by the run)", expansion.key(), expansion.file()),
        Domain::Nested { parent, expansion, .. } => {
            format!("{} {} per {}", expansion.key(), expansion.file(), graph.group(*parent).name)
        }
    }
}

/// "`a`", "`a`, `b`": group names for a sentence.
fn names(graph: &Graph, groups: &[GroupId]) -> String {
    groups.iter().map(|&g| format!("`{}`", graph.group(g).name)).collect::<Vec<_>>().join(", ")
}

fn describe(r: &Resources) -> String {
    let mut parts = vec![format!("cpus {}", r.cpus)];
    if r.gpus.0 > 0 {
        parts.push(format!("gpus {}", r.gpus));
    }
    if r.memory > 0 {
        parts.push(format!("mem {}", bytes(r.memory, BytesStyle::Trimmed)));
    }
    parts.extend(r.custom.iter().map(|(k, v)| format!("{k} {v}")));
    if let Some(t) = r.time_request {
        parts.push(format!("time {}", duration(t.saturating_mul(1_000_000), DurationStyle::Exact)));
    }
    parts.join(", ")
}

/// `rows` under `header`, indented, as every table of `flow plan`.
fn table<const N: usize>(out: &mut String, header: [&str; N], rows: &[[String; N]]) {
    let header = header.map(String::from);
    out.push_str(&Table::new().indent("  ").render(&[&[header][..], rows].concat()));
}

/// `flow plan --why`: per task, how many instances a run would run and why.
pub fn why(loaded: &crate::load_workflow::Loaded, json: bool, every: bool) -> Result<(), crate::failure::Failure> {
    let (workflow, base_dir) = (loaded.absolute()?, loaded.dir()?);
    let tasks = flow_engine::runtime::preview(&loaded.graph, &base_dir, &workflow, every)
        .map_err(crate::failure::Failure::Usage)?;
    if json {
        let mut out = std::io::stdout().lock();
        // A closed pipe ends the listing, as it ends `flow plan --json`.
        let _ = tasks.iter().try_for_each(|task| crate::json::write_line(&mut out, task));
        return Ok(());
    }
    let mut out = String::new();
    for task in &tasks {
        match (&task.dropped, task.instances) {
            (Some(why), _) => {
                let _ = writeln!(out, "{}: dropped: {why}", task.task);
            }
            (None, None) if task.known_after.is_empty() => {
                let _ = writeln!(out, "{}: skipped as a whole, before its instances are known", task.task);
            }
            (None, None) => {
                let writers: Vec<String> = task.known_after.iter().map(|w| format!("`{w}`")).collect();
                let _ = writeln!(out, "{}: instances known after {} runs", task.task, writers.join(", "));
            }
            (None, Some(n)) => {
                let _ = write!(out, "{}: {} of {n} would run, {} unchanged", task.task, task.run, task.unchanged);
                if task.skipped > 0 {
                    let _ = write!(out, ", {} skipped by a condition", task.skipped);
                }
                if task.later_parts > 0 {
                    let parts = plural(task.later_parts, "part");
                    let _ = write!(out, "; {parts} known after `{}` runs", task.known_after.join("`, `"));
                }
                out.push('\n');
            }
        }
        if every {
            for instance in &task.instances_run {
                let _ = writeln!(out, "  {}: {}", instance.label, instance.text);
            }
        } else {
            for reason in &task.reasons {
                let more = if reason.count as usize > reason.examples.len() { ", …" } else { "" };
                let _ = writeln!(out, "  {} {}: {}{more}", reason.count, reason.text, reason.examples.join(", "));
            }
        }
        if !task.implicit_inputs.is_empty() {
            let _ = writeln!(out, "  scripts counted as inputs: {}", task.implicit_inputs.join(", "));
        }
        if task.stale_outputs > 0 {
            let more = if task.stale_outputs as usize > task.stale_examples.len() { ", …" } else { "" };
            let outputs = plural(task.stale_outputs, "output");
            let which = task.stale_examples.join(", ");
            let _ = writeln!(out, "  {outputs} no instance writes any more would be moved aside: {which}{more}");
        }
        if task.skipped_outputs > 0 {
            let more = if task.skipped_outputs as usize > task.skipped_examples.len() { ", …" } else { "" };
            let outputs = plural(task.skipped_outputs, "output");
            let which = task.skipped_examples.join(", ");
            let _ = writeln!(out, "  {outputs} left for skipped instances would be moved aside: {which}{more}");
        }
        if let Some(note) = &task.untracked_scripts {
            let _ = writeln!(out, "  note: {note}");
        }
    }
    crate::stdout::print(out)
}
