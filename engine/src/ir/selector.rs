//! [`Selector`]: `name` or `name[1-10,20]`, a task and optionally some of its indices.

use super::ranges::parse_ranges;
use super::selector_error::SelectorError;
use crate::ir::{Domain, Graph, GroupId, IntRange};

/// A task name with an optional list of `index` values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// The task name.
    pub name: String,
    /// Selected `index` values; `None` selects every instance.
    pub indices: Option<Vec<IntRange>>,
    /// For a nested task, the positions in each selected part
    /// (`refine[12.3]`, `refine[12.0-4]`); `None` selects whole parts.
    pub subindices: Option<Vec<IntRange>>,
}

impl Selector {
    /// Parses `name`, `name[3]`, `name[1-10:2,20]`, and for a nested task
    /// `name[12.3]` or `name[12.0-4]`.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let text = text.trim();
        let Some(open) = text.find('[') else {
            return Ok(Self { name: text.to_owned(), indices: None, subindices: None });
        };
        let inner =
            text[open + 1..].strip_suffix(']').ok_or_else(|| SelectorError::Unclosed { text: text.to_owned() })?;
        let (outer, sub) = match inner.split_once('.') {
            Some((outer, sub)) => (outer, Some(sub)),
            None => (inner, None),
        };
        let ranges =
            |s: &str| parse_ranges(s).map_err(|source| SelectorError::BadIndices { text: text.to_owned(), source });
        let subindices = sub.map(ranges).transpose()?;
        Ok(Self { name: text[..open].trim().to_owned(), indices: Some(ranges(outer)?), subindices })
    }
}

/// The instances a [`Selector`] names in a graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    /// The task.
    pub group: GroupId,
    /// The positions of the instances named, sorted; `None` for every instance.
    pub positions: Option<Vec<u64>>,
}

impl Selected {
    /// Whether instance `position` of `group` is named.
    pub fn contains(&self, group: GroupId, position: u64) -> bool {
        self.group == group && self.positions.as_ref().is_none_or(|p| p.binary_search(&position).is_ok())
    }
}

impl Selector {
    /// What this selector names in `graph`. The error says what is wrong:
    /// an unknown task (with the closest name, or the task list), an index
    /// the task does not have (with the ones it has), or indices of a task
    /// whose instances are known only at run time, or why a task of the
    /// file was dropped from the run.
    pub fn resolve(&self, graph: &Graph) -> Result<Selected, SelectorError> {
        let Some(group) = graph.find(&self.name) else {
            if let Some(d) = graph.dropped.iter().find(|d| d.name == self.name) {
                return Err(SelectorError::Dropped { name: d.name.clone(), reason: d.reason.to_string() });
            }
            let names = graph.groups.iter().map(|g| g.name.as_str());
            let name = self.name.clone();
            return Err(match crate::diag::closest(&self.name, names.clone()) {
                Some(close) => SelectorError::UnknownTaskLike { name, close: close.to_owned() },
                None => SelectorError::UnknownTask { name, tasks: names.collect::<Vec<_>>().join(", ") },
            });
        };
        let Some(ranges) = &self.indices else { return Ok(Selected { group, positions: None }) };
        if graph.is_deferred(group) {
            return Err(SelectorError::Deferred { name: self.name.clone() });
        }
        if let Domain::Nested { parts, parent, .. } = graph.base_domain(group) {
            if parts.list().is_empty() {
                let parent = graph.group(*parent).name.clone();
                return Err(SelectorError::PartsUnknown { name: self.name.clone(), parent });
            }
            return self.nested(parts, group, ranges);
        }
        if self.subindices.is_some() {
            return Err(SelectorError::OneLevel { name: self.name.clone() });
        }
        let mut positions = Vec::new();
        for index in ranges.iter().flat_map(|r| (0..r.count).map(|i| r.get(i))) {
            let position = graph.position(group, index).ok_or_else(|| SelectorError::NoIndex {
                name: self.name.clone(),
                index,
                indices: indices(graph, group),
            })?;
            positions.push(position);
        }
        positions.sort_unstable();
        positions.dedup();
        Ok(Selected { group, positions: Some(positions) })
    }
}

impl Selector {
    /// The instances of nested group `group` (parts `parts`) named by
    /// `ranges` (parent indices) and [`Selector::subindices`].
    fn nested(&self, parts: &super::Parts, group: GroupId, ranges: &[IntRange]) -> Result<Selected, SelectorError> {
        let mut positions = Vec::new();
        for index in ranges.iter().flat_map(|r| (0..r.count).map(|i| r.get(i))) {
            let part = parts.positions(index).ok_or_else(|| {
                let known: Vec<String> = parts.list().iter().map(|p| p.index.to_string()).collect();
                let known = if known.is_empty() { "none yet".to_owned() } else { known.join(", ") };
                SelectorError::NoPart { name: self.name.clone(), index, known }
            })?;
            let Some(subs) = &self.subindices else {
                positions.extend(part);
                continue;
            };
            for sub in subs.iter().flat_map(|r| (0..r.count).map(|i| r.get(i))) {
                let p = u64::try_from(sub).ok().map(|s| part.start + s).filter(|p| part.contains(p));
                let size = part.end - part.start;
                let missing = || SelectorError::NoInstance { name: self.name.clone(), index, sub, size };
                positions.push(p.ok_or_else(missing)?);
            }
        }
        positions.sort_unstable();
        positions.dedup();
        Ok(Selected { group, positions: Some(positions) })
    }
}

/// The `index` values a task has: `1-10`, `1-19:2, 40`, `0-99`.
fn indices(graph: &Graph, group: GroupId) -> String {
    let count = graph.group(group).count;
    match graph.base_domain(group) {
        Domain::Range { ranges } => {
            let each = ranges.iter().filter(|r| r.count > 0).map(ToString::to_string);
            each.collect::<Vec<_>>().join(", ")
        }
        _ if count == 0 => "none".to_owned(),
        _ if count == 1 => "0".to_owned(),
        _ => format!("0-{}", count - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_indices() {
        assert_eq!(
            Selector::parse("score").unwrap(),
            Selector { name: "score".into(), indices: None, subindices: None }
        );
        let nested = Selector::parse("refine[12.0-2]").unwrap();
        assert_eq!(nested.indices, Some(vec![IntRange { start: 12, count: 1, step: 1 }]));
        assert_eq!(nested.subindices, Some(vec![IntRange { start: 0, count: 3, step: 1 }]));
        let s = Selector::parse("expand[3]").unwrap();
        assert_eq!(s.name, "expand");
        assert_eq!(s.indices, Some(vec![IntRange { start: 3, count: 1, step: 1 }]));
        assert_eq!(Selector::parse("a[1-10:2,20]").unwrap().indices.unwrap().len(), 2);
        assert!(Selector::parse("a[1").is_err());
        assert!(Selector::parse("a[x]").is_err());
    }

    #[test]
    fn a_dropped_task_says_why() {
        let graph = Graph {
            name: "w".into(),
            vars: Default::default(),
            groups: Vec::new(),
            edges: Vec::new(),
            dropped: vec![super::super::Dropped {
                name: "dock".into(),
                reason: super::super::DropReason::Upstream { task: "prep".into() },
            }],
            max_fails: None,
            finally: None,
            container_engine: None,
            images: Default::default(),
        };
        let err = Selector::parse("dock").unwrap().resolve(&graph).unwrap_err();
        assert_eq!(err.to_string(), "`dock` is not in this run: it was dropped, needs `prep`, which is dropped");
    }
}
