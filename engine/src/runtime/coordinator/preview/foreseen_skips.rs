//! [`ForeseenSkips`]: the instances `flow plan --why` foresees a run
//! skipping, and the tasks known only at run time it foresees skipped as
//! a whole, so that what waits on them is judged by the rule a run
//! applies (`runtime/core/skips.rs`).

use crate::ir::{Domain, EdgeKind, EdgeOn, EdgeOrigin, Graph, GroupId, TaskId};

/// What a run would skip, per group.
pub(super) struct ForeseenSkips {
    /// The instances that would be skipped (empty: none).
    marks: Vec<Vec<bool>>,
    /// Skipped as a whole before its instances are known: everything it
    /// waits for would be skipped, the writers of its file too.
    whole: Vec<bool>,
}

impl ForeseenSkips {
    /// Nothing skipped yet, for a graph of `groups` groups.
    pub(super) fn new(groups: usize) -> Self {
        Self { marks: vec![Vec::new(); groups], whole: vec![false; groups] }
    }

    /// Marks instance `i` of group `g`, of `count`, as skipped.
    pub(super) fn mark(&mut self, g: GroupId, count: u64, i: u64) {
        let marks = &mut self.marks[g.index()];
        marks.resize(count as usize, false);
        marks[i as usize] = true;
    }

    /// Whether instance `i` of group `g` would be skipped.
    pub(super) fn is_marked(&self, g: GroupId, i: u64) -> bool {
        self.marks[g.index()].get(i as usize) == Some(&true)
    }

    /// Whether group `g` would be skipped as a whole ([`Self::skip_whole`]).
    pub(super) fn is_whole(&self, g: GroupId) -> bool {
        self.whole[g.index()]
    }

    /// Whether nothing of group `g` would run: every instance skipped,
    /// or the group as a whole.
    fn all_skipped(&self, graph: &Graph, g: GroupId) -> bool {
        let (marks, count) = (&self.marks[g.index()], graph.group(g).count);
        self.is_whole(g) || count > 0 && marks.len() as u64 == count && marks.iter().all(|&s| s)
    }

    /// For group `id`, whose instances are known only at run time: why it
    /// would be skipped as a whole — every task it waits for to succeed,
    /// the writers of its file among them, would have nothing run, so
    /// the file is never written for this run — and marks it so; `None`
    /// when something it waits for may run.
    pub(super) fn skip_whole(&mut self, graph: &Graph, id: GroupId) -> Option<String> {
        let mut last = None;
        for e in graph.edges.iter().filter(|e| e.to == id && e.on == EdgeOn::Success) {
            if !self.all_skipped(graph, e.from) {
                return None;
            }
            last = Some(e.from);
        }
        let from = last?;
        self.whole[id.index()] = true;
        Some(format!("{} was skipped", self.last_label(graph, from)))
    }

    /// The instance of group `g` a skip of all of it is told by: its last,
    /// or the group itself when skipped as a whole.
    fn last_label(&self, graph: &Graph, g: GroupId) -> String {
        match graph.group(g).count {
            0 => graph.group(g).name.clone(),
            count => graph.label(TaskId::new(g, count - 1)),
        }
    }

    /// Why `task` would be skipped for what it waits on, as a run decides
    /// it: an instance it waits for element-wise is skipped, or every
    /// instance it waits for is: each task it waits for as a whole had
    /// every instance skipped (or was skipped whole), and it waits for no
    /// single instance.
    pub(super) fn skipped_upstream(&self, graph: &Graph, task: TaskId) -> Option<String> {
        let (mut whole_skipped, mut other) = (None, false);
        for e in graph.edges.iter().filter(|e| e.to == task.group && e.on == EdgeOn::Success) {
            let marks = &self.marks[e.from.index()];
            let count = graph.group(e.from).count;
            if self.is_whole(e.from) {
                whole_skipped = Some(format!("{} was skipped", self.last_label(graph, e.from)));
                continue;
            }
            if count == 0 {
                // Not known yet: it may run.
                other |= graph.is_dynamic(e.from);
                continue;
            }
            if let Domain::Nested { parent, parts, .. } = graph.base_domain(task.group)
                && *parent == e.from
                && e.origin == EdgeOrigin::Expansion
            {
                // A part follows its parent instance, whatever the positions.
                let outer = parts.locate(task.instance).map(|(part, _)| part.outer);
                if let Some(outer) = outer.filter(|&o| marks.get(o as usize) == Some(&true)) {
                    return Some(format!("{} was skipped", graph.label(TaskId::new(e.from, outer))));
                }
                other = true;
            } else if e.kind == EdgeKind::All {
                if self.all_skipped(graph, e.from) {
                    whole_skipped = Some(format!("{} was skipped", self.last_label(graph, e.from)));
                } else {
                    other = true;
                }
            } else {
                let mut sources = e.kind.sources(task.instance, count).peekable();
                other |= sources.peek().is_some();
                if let Some(s) = sources.find(|&s| marks.get(s as usize) == Some(&true)) {
                    return Some(format!("{} was skipped", graph.label(TaskId::new(e.from, s))));
                }
            }
        }
        whole_skipped.filter(|_| !other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::testing::graph;

    /// Issue 26: a stage whose list is written by a skipped task is
    /// skipped as a whole, and so is what waits for all of it; while the
    /// writer may run, it is not, and what waits for it may run.
    #[test]
    fn a_stage_whose_list_writer_is_skipped_is_skipped_whole() {
        let graph = graph(
            "[[tasks]]\nname = \"c\"\ncommand = \"true\"\noutputs = [\"hits.txt\"]\n\
             [[tasks]]\nname = \"d\"\neach_line = \"hits.txt\"\ncommand = \"true\"\n\
             [[tasks]]\nname = \"e\"\nafter = [\"d\"]\ncommand = \"true\"\n",
        );
        let [c, d, e] = ["c", "d", "e"].map(|name| graph.find(name).unwrap());
        let mut skips = ForeseenSkips::new(graph.groups.len());
        assert_eq!(skips.skip_whole(&graph, d), None);
        assert_eq!(skips.skipped_upstream(&graph, TaskId::new(e, 0)), None);
        skips.mark(c, 1, 0);
        assert!(skips.is_marked(c, 0));
        assert_eq!(skips.skip_whole(&graph, d), Some("c was skipped".to_owned()));
        assert!(skips.is_whole(d));
        assert_eq!(skips.skipped_upstream(&graph, TaskId::new(e, 0)), Some("d was skipped".to_owned()));
    }
}
