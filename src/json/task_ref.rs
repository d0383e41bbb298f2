//! [`TaskRef`]: how every `--json` names a task instance.

use flow_engine::ir::{Finally, Graph, TaskId};
use schemars::JsonSchema;
use serde::Serialize;

/// A task instance: the task's name, `name[index]` as flow writes it
/// everywhere, and the numbers in it: `index` (the integer of a `range`,
/// else the position; 0 for a plain task) and, for an instance of a nested
/// task (`refine[12.3]`), `sub`, its position in its parent's part.
/// Flattened into the objects that name one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TaskRef {
    /// The task's name.
    pub task: String,
    /// The instance's `index`; for a nested instance, its parent's.
    pub index: i64,
    /// For a nested instance, its position in its parent's part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<u64>,
    /// `name[index]`, `name[index.sub]`, or `name` for a plain task.
    pub label: String,
}

impl TaskRef {
    /// Instance `task` of `graph`; a group the graph lacks (a damaged run
    /// directory) is named `?` and labelled `#group[instance]`.
    pub fn new(graph: &Graph, task: TaskId) -> Self {
        match graph.groups.get(task.group.index()) {
            Some(group) => TaskRef::labelled(&group.name, graph.label(task)),
            None if task == Finally::TASK => TaskRef::labelled(Finally::LABEL, Finally::LABEL.to_owned()),
            None => TaskRef::labelled("?", format!("#{}[{}]", task.group.0, task.instance)),
        }
    }

    /// Task `name`'s instance labelled `label` (as [`Graph::label`] writes
    /// it); the numbers are read from the label, so a label the runtime
    /// made for an instance the caller's graph does not know yet reads right.
    pub fn labelled(name: &str, label: String) -> Self {
        let numbers = label.strip_suffix(']').and_then(|l| l.rsplit_once('[')).map(|(_, n)| n);
        let (index, sub) = match numbers.map(|n| n.split_once('.').unwrap_or((n, ""))) {
            Some((index, sub)) => (index.parse().unwrap_or(0), sub.parse().ok()),
            None => (0, None),
        };
        TaskRef { task: name.to_owned(), index, sub, label }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_come_from_the_label() {
        let read = |label: &str| {
            let r = TaskRef::labelled("t", label.to_owned());
            (r.index, r.sub)
        };
        assert_eq!(read("t"), (0, None));
        assert_eq!(read("t[-3]"), (-3, None));
        assert_eq!(read("t[12.3]"), (12, Some(3)));
        assert_eq!(read("t[12.?]"), (12, None));
    }
}
