//! `flow graph`: the task graph as Graphviz dot, Mermaid or JSON, either one
//! node per task (arrays collapsed) or one node per instance.

use std::fmt::Write;

use flow_engine::ir::{EdgeKind, EdgeOrigin, Graph, GroupId};

use crate::args::GraphFormat;

/// A node to draw: its id, its label.
struct Node {
    id: String,
    label: String,
}

/// Renders the graph in `format`.
pub fn render(graph: &Graph, format: GraphFormat, instances: bool) -> String {
    let (nodes, edges) = if instances { instance_graph(graph) } else { group_graph(graph) };
    match format {
        GraphFormat::Dot => {
            let mut out = format!("digraph \"{}\" {{\n  rankdir=LR;\n  node [shape=box];\n", escape(&graph.name));
            for n in &nodes {
                let _ = writeln!(out, "  \"{}\" [label=\"{}\"];", n.id, escape(&n.label));
            }
            for (a, b, label) in &edges {
                match label {
                    Some(l) => writeln!(out, "  \"{a}\" -> \"{b}\" [label=\"{l}\"];"),
                    None => writeln!(out, "  \"{a}\" -> \"{b}\";"),
                }
                .unwrap_or(());
            }
            out.push_str("}\n");
            out
        }
        GraphFormat::Mermaid => {
            let mut out = String::from("flowchart LR\n");
            let ids: std::collections::HashMap<&str, usize> =
                nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
            for (i, n) in nodes.iter().enumerate() {
                let _ = writeln!(out, "  n{i}[\"{}\"]", n.label.replace('"', "#quot;"));
            }
            for (a, b, label) in &edges {
                let (a, b) = (ids[a.as_str()], ids[b.as_str()]);
                match label {
                    Some(l) => writeln!(out, "  n{a} -->|{l}| n{b}"),
                    None => writeln!(out, "  n{a} --> n{b}"),
                }
                .unwrap_or(());
            }
            out
        }
        GraphFormat::Json => {
            let nodes: Vec<_> = nodes.iter().map(|n| serde_json::json!({ "id": n.id, "label": n.label })).collect();
            let edges: Vec<_> =
                edges.iter().map(|(a, b, l)| serde_json::json!({ "from": a, "to": b, "kind": l })).collect();
            let json = serde_json::json!({ "name": graph.name, "nodes": nodes, "edges": edges });
            format!("{json:#}\n")
        }
    }
}

type Edges = Vec<(String, String, Option<String>)>;

fn group_graph(graph: &Graph) -> (Vec<Node>, Edges) {
    let nodes = graph
        .groups
        .iter()
        .enumerate()
        .map(|(id, g)| Node {
            id: g.name.clone(),
            label: match graph.waits_for(GroupId(id as u32)) {
                Some(writers) => format!("{} × ? (known after {})", g.name, names(graph, &writers)),
                None if g.count == 1 => g.name.clone(),
                None => format!("{} ×{}", g.name, g.count),
            },
        })
        .collect();
    let edges = graph
        .edges
        .iter()
        .map(|e| {
            let kind = match (&e.kind, e.origin) {
                (_, EdgeOrigin::Expansion) => "expansion",
                (EdgeKind::All, _) => "all",
                (EdgeKind::ElementWise, _) => "element-wise",
                (EdgeKind::Explicit { .. }, _) => "explicit",
            };
            (graph.group(e.from).name.clone(), graph.group(e.to).name.clone(), Some(format!("{kind}{}", e.on.suffix())))
        })
        .collect();
    (nodes, edges)
}

fn instance_id(graph: &Graph, g: GroupId, i: u64) -> String {
    let group = graph.group(g);
    if group.count == 1 && matches!(group.domain, flow_engine::ir::Domain::Single) {
        group.name.clone()
    } else {
        format!("{}[{}]", group.name, graph.index(g, i))
    }
}

/// `select`, `a, b`: task names for a label.
fn names(graph: &Graph, groups: &[GroupId]) -> String {
    groups.iter().map(|&g| graph.group(g).name.as_str()).collect::<Vec<_>>().join(", ")
}

/// The nodes standing for group `g`'s instances: one per instance, or one
/// `name[?]` for a group whose instances are known only at run time.
fn instance_ids(graph: &Graph, g: GroupId) -> Vec<String> {
    if graph.is_dynamic(g) {
        return vec![format!("{}[?]", graph.group(g).name)];
    }
    (0..graph.group(g).count).map(|i| instance_id(graph, g, i)).collect()
}

fn instance_graph(graph: &Graph) -> (Vec<Node>, Edges) {
    let mut nodes = Vec::new();
    for g in 0..graph.groups.len() as u32 {
        nodes.extend(instance_ids(graph, GroupId(g)).into_iter().map(|id| Node { label: id.clone(), id }));
    }
    let mut edges = Vec::new();
    for e in &graph.edges {
        if graph.is_dynamic(e.from) || graph.is_dynamic(e.to) {
            // Instances not known yet: every pair of nodes on the two sides.
            for to in instance_ids(graph, e.to) {
                edges.extend(instance_ids(graph, e.from).into_iter().map(|from| (from, to.clone(), None)));
            }
            continue;
        }
        let from_count = graph.group(e.from).count;
        for i in 0..graph.group(e.to).count {
            for s in e.kind.sources(i, from_count) {
                edges.push((instance_id(graph, e.from, s), instance_id(graph, e.to, i), None));
            }
        }
    }
    (nodes, edges)
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
