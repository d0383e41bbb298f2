//! `flow graph`: the task graph as Graphviz dot, Mermaid or JSON, either one
//! node per task (arrays collapsed) or one node per instance.

use std::fmt::Write;

use flow_engine::ir::{EdgeKind, Graph, GroupId};

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
        .map(|g| Node {
            id: g.name.clone(),
            label: if g.count == 1 { g.name.clone() } else { format!("{} ×{}", g.name, g.count) },
        })
        .collect();
    let edges = graph
        .edges
        .iter()
        .map(|e| {
            let kind = match e.kind {
                EdgeKind::All => "all",
                EdgeKind::ElementWise => "element-wise",
                EdgeKind::Explicit { .. } => "explicit",
            };
            (graph.group(e.from).name.clone(), graph.group(e.to).name.clone(), Some(kind.to_owned()))
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

fn instance_graph(graph: &Graph) -> (Vec<Node>, Edges) {
    let mut nodes = Vec::new();
    for (g, group) in graph.groups.iter().enumerate() {
        for i in 0..group.count {
            let id = instance_id(graph, GroupId(g as u32), i);
            nodes.push(Node { label: id.clone(), id });
        }
    }
    let mut edges = Vec::new();
    for e in &graph.edges {
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
