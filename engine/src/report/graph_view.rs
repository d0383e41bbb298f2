//! [`GraphView`]: the task graph laid out in layers for drawing, one node
//! per task (group) whatever its number of instances.

use serde::Serialize;

use super::counts::Counts;
use crate::ir::Graph;

/// The groups of the graph, placed in layers, and the edges between them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphView {
    /// One per group, in graph order.
    pub nodes: Vec<Node>,
    /// One per pair of connected groups (a group's edges to itself left out).
    pub edges: Vec<GraphEdge>,
    /// Number of layers.
    pub layers: u32,
    /// The most nodes in one layer.
    pub rows: u32,
}

/// One task of the graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// The task's name.
    pub name: String,
    /// Its instances.
    pub count: u64,
    /// Its layer: 0 for a task that waits for none, else one more than the
    /// deepest task it waits for.
    pub layer: u32,
    /// Its position in its layer.
    pub row: u32,
    /// The worst state of its instances: `failed`, `lost`, `cancelled`,
    /// `running`, `waiting`, or `succeeded` (cached counting as succeeded).
    pub state: &'static str,
}

/// Group `to` waits for group `from`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphEdge {
    /// The group that runs first.
    pub from: u32,
    /// The group that waits.
    pub to: u32,
}

impl GraphView {
    /// Lays out `graph`; `counts` are its groups' instances by state.
    pub(super) fn new(graph: &Graph, counts: &[Counts]) -> GraphView {
        let mut edges: Vec<GraphEdge> =
            graph.edges.iter().filter(|e| e.from != e.to).map(|e| GraphEdge { from: e.from.0, to: e.to.0 }).collect();
        edges.sort_by_key(|e| (e.from, e.to));
        edges.dedup();
        // Groups are in topological order: every edge goes to a later group.
        let mut layer = vec![0u32; graph.groups.len()];
        for e in &edges {
            layer[e.to as usize] = layer[e.to as usize].max(layer[e.from as usize] + 1);
        }
        let layers = layer.iter().max().map_or(0, |l| l + 1);
        let mut filled = vec![0u32; layers as usize];
        let nodes = graph
            .groups
            .iter()
            .zip(counts)
            .zip(&layer)
            .map(|((group, c), &layer)| {
                let row = filled[layer as usize];
                filled[layer as usize] += 1;
                Node { name: group.name.clone(), count: group.count, layer, row, state: worst(c) }
            })
            .collect();
        GraphView { nodes, edges, layers, rows: filled.into_iter().max().unwrap_or(0) }
    }
}

/// The state a task's node is drawn in.
fn worst(c: &Counts) -> &'static str {
    [(c.failed, "failed"), (c.lost, "lost"), (c.cancelled, "cancelled"), (c.running, "running"), (c.waiting, "waiting")]
        .into_iter()
        .find(|(n, _)| *n > 0)
        .map_or(if c.total > 0 && c.skipped == c.total { "skipped" } else { "succeeded" }, |(_, state)| state)
}
