//! [`Domain`]: the index domain of a task group, stored without expanding it.

use serde::{Deserialize, Serialize};

use super::{GroupId, Parts, StrPool};

/// The instances of a group. An array of a million instances is one value
/// here: integer ranges, a packed string pool, or matrix axes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Domain {
    /// A plain task: one instance with index 0.
    Single,
    /// `range`: one instance per integer; `index` and `item` are the integer.
    Range {
        /// The integers, in order.
        ranges: Vec<IntRange>,
    },
    /// `each_line`: one instance per non-empty line; `item` is the line.
    Lines {
        /// The file the lines were read from (relative to the workflow).
        file: String,
        /// The lines.
        items: StrPool,
    },
    /// `from_json`: one instance per array element; `item` is the element.
    Json {
        /// The file the array was read from.
        file: String,
        /// Each element as compact JSON text.
        items: StrPool,
    },
    /// `each_chunk`: one instance per `lines` non-empty lines of `file`.
    Chunks {
        /// The file being split.
        file: String,
        /// Directory (relative to the workflow) where the runtime writes chunk files.
        dir: String,
        /// Non-empty lines per chunk (the last may be shorter).
        lines: u64,
        /// Number of non-empty lines in the file.
        total_lines: u64,
        /// Also feed the chunk on stdin.
        stdin: bool,
        /// The chunks' text.
        items: StrPool,
    },
    /// `matrix`: the cartesian product of the axes, last axis varying fastest.
    Matrix {
        /// Axis names and values, in name order.
        axes: Vec<(String, Vec<serde_json::Value>)>,
    },
    /// `for_each`: the same instances as another group.
    Same {
        /// The group whose domain this mirrors.
        group: GroupId,
    },
    /// `each_line`, `each_chunk` or `from_json` over a file that a task of
    /// this run writes: the instances are known once the tasks it waits for
    /// through [`super::EdgeOrigin::Expansion`] edges have finished, and the
    /// runtime then replaces this domain with the one the file gives.
    Deferred {
        /// What the file becomes.
        expansion: Expansion,
    },
    /// `for_each` together with `each_line`, `each_chunk` or `from_json`:
    /// the file is rendered for each instance of `parent`, and each parent
    /// instance's file gives its own instances (a part) once that instance
    /// is done. `refine[12.3]` is item 3 of the part of the parent instance
    /// whose `index` is 12.
    Nested {
        /// The group whose instances each give a file.
        parent: GroupId,
        /// What each file becomes; its `file` is a template rendered with
        /// the parent instance's `index` and `item`.
        expansion: Expansion,
        /// The parts known so far (kept in the run directory's
        /// `parts.jsonl`, not in `graph.json`).
        #[serde(skip)]
        parts: Parts,
    },
}

/// An expansion over a file that is read when the run reaches it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Expansion {
    /// `each_line`.
    Lines {
        /// The file, relative to the workflow.
        file: String,
    },
    /// `from_json`.
    Json {
        /// The file, relative to the workflow.
        file: String,
    },
    /// `each_chunk`.
    Chunks {
        /// The file, relative to the workflow.
        file: String,
        /// Directory (relative to the workflow) where the runtime writes chunk files.
        dir: String,
        /// Non-empty lines per chunk.
        lines: u64,
        /// Also feed the chunk on stdin.
        stdin: bool,
    },
}

impl Expansion {
    /// The file the instances come from.
    pub fn file(&self) -> &str {
        match self {
            Expansion::Lines { file } | Expansion::Json { file } | Expansion::Chunks { file, .. } => file,
        }
    }

    /// Points it at `file` (a nested group's file, once rendered).
    pub fn set_file(&mut self, to: String) {
        match self {
            Expansion::Lines { file } | Expansion::Json { file } | Expansion::Chunks { file, .. } => *file = to,
        }
    }

    /// The key it was written with.
    pub fn key(&self) -> &'static str {
        match self {
            Expansion::Lines { .. } => "each_line",
            Expansion::Json { .. } => "from_json",
            Expansion::Chunks { .. } => "each_chunk",
        }
    }
}

/// The value an instance sees as `item`.
#[derive(Debug, Clone, PartialEq)]
pub enum Item<'a> {
    /// A plain task has no item.
    None,
    /// An integer from a `range`.
    Int(i64),
    /// A line or a chunk of lines.
    Text(&'a str),
    /// A JSON array element, as JSON text.
    Json(&'a str),
    /// A matrix combination.
    Object(serde_json::Map<String, serde_json::Value>),
}

impl Domain {
    /// The `index` of instance `i`: the integer for ranges, the position otherwise.
    pub fn index(&self, i: u64) -> i64 {
        match self {
            Domain::Range { ranges } => {
                let mut i = i;
                for r in ranges {
                    if i < r.count {
                        return r.get(i);
                    }
                    i -= r.count;
                }
                i as i64
            }
            Domain::Nested { parts, .. } => parts.locate(i).map_or(i as i64, |(p, _)| p.index),
            _ => i as i64,
        }
    }

    /// The chunk file of instance `i` (relative to the workflow), for
    /// `each_chunk`: `DIR/3.txt`, or `DIR/12.3.txt` in a nested task.
    pub fn chunk_file(&self, i: u64) -> Option<String> {
        match self {
            Domain::Chunks { dir, .. } => Some(format!("{dir}/{i}.txt")),
            Domain::Nested { expansion: Expansion::Chunks { dir, .. }, .. } => {
                Some(format!("{dir}/{}.{}.txt", self.index(i), self.subindex(i)?))
            }
            _ => None,
        }
    }

    /// The position of instance `i` in its part, for a [`Domain::Nested`].
    pub fn subindex(&self, i: u64) -> Option<u64> {
        match self {
            Domain::Nested { parts, .. } => parts.locate(i).map(|(_, sub)| sub),
            _ => None,
        }
    }

    /// The position of the instance whose `index` is `index`, given the instance count.
    pub fn position(&self, index: i64, count: u64) -> Option<u64> {
        match self {
            Domain::Range { ranges } => {
                let mut before = 0;
                for r in ranges {
                    if let Some(p) = r.position(index) {
                        return Some(before + p);
                    }
                    before += r.count;
                }
                None
            }
            Domain::Nested { .. } => None,
            _ => u64::try_from(index).ok().filter(|&i| i < count),
        }
    }

    /// The `item` of instance `i` (`Item::None` for `Same`, which must be resolved first).
    pub fn item(&self, i: u64) -> Item<'_> {
        match self {
            Domain::Single | Domain::Same { .. } | Domain::Deferred { .. } => Item::None,
            Domain::Range { .. } => Item::Int(self.index(i)),
            Domain::Lines { items, .. } | Domain::Chunks { items, .. } => {
                Item::Text(items.get(i as usize).unwrap_or_default())
            }
            Domain::Json { items, .. } => Item::Json(items.get(i as usize).unwrap_or("null")),
            Domain::Nested { expansion: Expansion::Json { .. }, parts, .. } => {
                Item::Json(parts.item(i).unwrap_or("null"))
            }
            Domain::Nested { parts, .. } => Item::Text(parts.item(i).unwrap_or_default()),
            Domain::Matrix { axes } => {
                let mut rest = i;
                let mut object = serde_json::Map::new();
                for (name, values) in axes.iter().rev() {
                    let n = values.len().max(1) as u64;
                    if let Some(v) = values.get((rest % n) as usize) {
                        object.insert(name.clone(), v.clone());
                    }
                    rest /= n;
                }
                Item::Object(object)
            }
        }
    }
}

/// `count` integers starting at `start`, `step` apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntRange {
    /// First integer.
    pub start: i64,
    /// How many integers.
    pub count: u64,
    /// Distance between consecutive integers (at least 1).
    pub step: u64,
}

impl IntRange {
    /// The integer at position `i` (< `count`).
    pub fn get(&self, i: u64) -> i64 {
        // The true value lies between `start` and the last integer, so the
        // wrapping sum is exact even when the offset does not fit an i64.
        self.start.wrapping_add(i.wrapping_mul(self.step) as i64)
    }

    /// The position of `value` in this range, if present.
    pub fn position(&self, value: i64) -> Option<u64> {
        let offset = u64::try_from(i128::from(value) - i128::from(self.start)).ok()?;
        (offset % self.step == 0 && offset / self.step < self.count).then_some(offset / self.step)
    }
}

/// As written in a workflow: `5`, `1-10`, `1-19:2` (nothing for an empty range).
impl std::fmt::Display for IntRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.count, self.step) {
            (0, _) => Ok(()),
            (1, _) => write!(f, "{}", self.start),
            (n, 1) => write!(f, "{}-{}", self.start, self.get(n - 1)),
            (n, step) => write!(f, "{}-{}:{step}", self.start, self.get(n - 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_positions() {
        let r = IntRange { start: 1, count: 50, step: 2 };
        assert_eq!(r.get(0), 1);
        assert_eq!(r.get(49), 99);
        assert_eq!(r.position(99), Some(49));
        assert_eq!(r.position(2), None);
        assert_eq!(r.position(101), None);
        assert_eq!(r.position(-1), None);
    }

    #[test]
    fn ranges_at_the_ends_of_i64() {
        let all = IntRange { start: i64::MIN, count: u64::MAX, step: 1 };
        assert_eq!(all.get(0), i64::MIN);
        assert_eq!(all.get(u64::MAX - 1), i64::MAX - 1);
        assert_eq!(all.position(10), Some(10u64.wrapping_sub(i64::MIN as u64)));
        assert_eq!(all.position(i64::MAX), None);
        let wide = IntRange { start: i64::MIN, count: 2, step: u64::MAX };
        assert_eq!(wide.get(1), i64::MAX);
        assert_eq!(wide.position(i64::MAX), Some(1));
    }
}
