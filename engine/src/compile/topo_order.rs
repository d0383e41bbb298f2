//! Cycle detection and ordering: groups are sorted so every edge goes
//! forward, and a cycle is reported with its path.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::ctx::Ctx;
use crate::diag::{Code, Diagnostic};
use crate::ir::{Domain, Edge, EdgeKind, EdgeOrigin, Group, GroupId};

/// Checks for cycles and returns groups in topological order with edges
/// renumbered, or `None` after reporting cycles.
pub fn sort(ctx: &mut Ctx, groups: Vec<Group>, edges: Vec<Edge>) -> Option<(Vec<Group>, Vec<Edge>)> {
    let mut graph = DiGraph::<(), EdgeOrigin>::new();
    let nodes: Vec<NodeIndex> = groups.iter().map(|_| graph.add_node(())).collect();
    let mut ok = true;
    for e in &edges {
        if e.from == e.to {
            ok &= self_edge_is_acyclic(ctx, &groups, &groups[e.from.index()], &e.kind);
        } else {
            graph.add_edge(nodes[e.from.index()], nodes[e.to.index()], e.origin);
        }
    }
    for scc in tarjan_scc(&graph) {
        if scc.len() > 1 {
            ok = false;
            report_cycle(ctx, &graph, &groups, &scc);
        }
    }
    if !ok {
        return None;
    }

    // Kahn's algorithm, preferring file order among ready groups.
    let mut indegree: Vec<usize> =
        nodes.iter().map(|&n| graph.neighbors_directed(n, petgraph::Incoming).count()).collect();
    let mut ready: BinaryHeap<Reverse<usize>> = (0..groups.len()).filter(|&g| indegree[g] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(groups.len());
    while let Some(Reverse(g)) = ready.pop() {
        order.push(g);
        for n in graph.neighbors_directed(nodes[g], petgraph::Outgoing) {
            indegree[n.index()] -= 1;
            if indegree[n.index()] == 0 {
                ready.push(Reverse(n.index()));
            }
        }
    }
    let mut new_id = vec![GroupId(0); groups.len()];
    for (new, &old) in order.iter().enumerate() {
        new_id[old] = GroupId(new as u32);
    }
    let mut slots: Vec<Option<Group>> = groups.into_iter().map(Some).collect();
    let groups = order
        .iter()
        .filter_map(|&old| slots[old].take())
        .map(|mut g| {
            match &mut g.domain {
                Domain::Same { group } => *group = new_id[group.index()],
                Domain::Nested { parent, .. } => *parent = new_id[parent.index()],
                _ => {}
            }
            g
        })
        .collect();
    let mut edges: Vec<Edge> =
        edges.into_iter().map(|e| Edge { from: new_id[e.from.index()], to: new_id[e.to.index()], ..e }).collect();
    edges.sort_by_key(|e| (e.to, e.from, e.origin == EdgeOrigin::Files));
    Some((groups, edges))
}

/// A group waiting on its own instances is fine as long as no instance
/// waits, through others, on itself.
fn self_edge_is_acyclic(ctx: &mut Ctx, groups: &[Group], group: &Group, kind: &EdgeKind) -> bool {
    let EdgeKind::Explicit { offsets, sources } = kind else {
        ctx.report(
            Diagnostic::new(Code::CompileCycle, format!("task `{}` depends on itself", group.name))
                .at(group.span.clone(), "waits for itself")
                .help(format!(
                    "a task may wait only for its own earlier instances, e.g. after = [\"{{% if index > 0 %}}{}[{{{{ index - 1 }}}}]{{% endif %}}\"]",
                    group.name
                )),
        );
        return false;
    };
    let n = group.count as usize;
    let mut indegree: Vec<u64> = (0..n).map(|i| offsets[i + 1] - offsets[i]).collect();
    let mut dependents: Vec<Vec<u64>> = vec![Vec::new(); n];
    for to in 0..n {
        for &from in &sources[offsets[to] as usize..offsets[to + 1] as usize] {
            dependents[from as usize].push(to as u64);
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut done = 0;
    while let Some(i) = ready.pop() {
        done += 1;
        for &d in &dependents[i] {
            indegree[d as usize] -= 1;
            if indegree[d as usize] == 0 {
                ready.push(d as usize);
            }
        }
    }
    if done == n {
        return true;
    }
    let mut domain = &group.domain;
    while let Domain::Same { group } = domain {
        domain = &groups[group.index()].domain;
    }
    let stuck: Vec<String> = (0..n)
        .filter(|&i| indegree[i] > 0)
        .take(5)
        .map(|i| format!("{}[{}]", group.name, domain.index(i as u64)))
        .collect();
    ctx.report(
        Diagnostic::new(Code::CompileCycle, format!("instances of `{}` wait for each other in a cycle", group.name))
            .at(group.span.clone(), "cyclic instances")
            .help(format!("{} never become ready; make each instance wait only for earlier ones", stuck.join(", "))),
    );
    false
}

fn report_cycle(ctx: &mut Ctx, graph: &DiGraph<(), EdgeOrigin>, groups: &[Group], scc: &[NodeIndex]) {
    // Walk successors inside the component until a node repeats.
    let in_scc = |n: &NodeIndex| scc.contains(n);
    let start = scc.iter().copied().min_by_key(|n| n.index()).unwrap_or(scc[0]);
    let mut path = vec![start];
    loop {
        let last = *path.last().unwrap_or(&start);
        let Some(next) = graph.neighbors(last).filter(in_scc).min_by_key(|n| n.index()) else { break };
        if let Some(pos) = path.iter().position(|&n| n == next) {
            path.drain(..pos);
            path.push(next);
            break;
        }
        path.push(next);
    }
    let steps: Vec<String> = path
        .windows(2)
        .map(|w| {
            let how = match graph.find_edge(w[0], w[1]).map(|e| graph[e]) {
                Some(EdgeOrigin::Files) => "files",
                Some(EdgeOrigin::Expansion) => "expansion",
                _ => "after",
            };
            format!("`{}` → `{}` ({how})", groups[w[0].index()].name, groups[w[1].index()].name)
        })
        .collect();
    let first = &groups[path[0].index()];
    let names: Vec<&str> = path.iter().map(|n| groups[n.index()].name.as_str()).collect();
    ctx.report(
        Diagnostic::new(Code::CompileCycle, format!("dependency cycle: {}", names.join(" → ")))
            .at(first.span.clone(), "part of the cycle")
            .help(format!("remove one of these dependencies: {}", steps.join(", "))),
    );
}

#[cfg(test)]
mod tests {
    use crate::compile::compile_toml;
    use crate::ir::{Domain, GroupId};

    /// Issue 26: the model check wrote the tasks in the reverse order.
    #[test]
    fn a_fan_out_written_before_the_task_it_fans_out_over_keeps_its_parent() {
        let g = compile_toml(
            "[[tasks]]\nname = \"n\"\nfor_each = \"a\"\neach_line = \"a/{{ index }}.txt\"\ncommand = \"true\"\n\n\
             [[tasks]]\nname = \"a\"\nrange = \"1-2\"\ncommand = \"true\"\noutputs = [\"a/{{ index }}.txt\"]\n",
        );
        assert_eq!(g.groups[0].name, "a");
        let Domain::Nested { parent, .. } = g.groups[1].domain else { panic!("`n` is nested") };
        assert_eq!(parent, GroupId(0));
    }
}
