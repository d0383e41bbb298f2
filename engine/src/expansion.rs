//! Expansion files: the text of an `each_line`, `each_chunk` or `from_json`
//! file turned into a [`Domain`]. The compiler reads the files that exist
//! before a run; the runtime reads a file a task of the run writes
//! ([`Expansion`]) once that task has finished.

use crate::ir::{Domain, Expansion, StrPool};

/// What is wrong with an expansion file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// It has no lines or elements.
    Empty(&'static str),
    /// `from_json`: the top level is not an array.
    NotAnArray,
    /// `from_json`: not JSON; 1-based line and column, and why.
    BadJson {
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// What the parser said.
        why: String,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Empty(what) => write!(f, "it has no {what}"),
            Problem::NotAnArray => f.write_str("it does not hold a JSON array"),
            Problem::BadJson { line, column, why } => write!(f, "it is not valid JSON at {line}:{column}: {why}"),
        }
    }
}

/// The non-empty lines of `text`, one item each.
pub fn lines(text: &str) -> Result<StrPool, Problem> {
    let mut items = StrPool::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        items.push(line);
    }
    if items.is_empty() { Err(Problem::Empty("non-empty lines")) } else { Ok(items) }
}

/// The non-empty lines of `text` in chunks of `lines` (each ending in a
/// newline), and how many lines there are in all.
pub fn chunks(text: &str, lines: u64) -> Result<(StrPool, u64), Problem> {
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if all.is_empty() {
        return Err(Problem::Empty("non-empty lines"));
    }
    let mut items = StrPool::default();
    for part in all.chunks(lines.max(1) as usize) {
        let mut chunk_text = part.join("\n");
        chunk_text.push('\n');
        items.push(&chunk_text);
    }
    Ok((items, all.len() as u64))
}

/// Each element of the JSON array in `text`, as compact JSON.
pub fn json(text: &str) -> Result<StrPool, Problem> {
    let items = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Array(items)) => items,
        Ok(_) => return Err(Problem::NotAnArray),
        Err(e) => {
            let why = e.to_string();
            let why = why.split(" at line ").next().unwrap_or_default().to_owned();
            return Err(Problem::BadJson { line: e.line(), column: e.column(), why });
        }
    };
    let mut pool = StrPool::default();
    for item in &items {
        pool.push(&item.to_string());
    }
    if pool.is_empty() { Err(Problem::Empty("elements")) } else { Ok(pool) }
}

/// The domain a deferred expansion becomes once its file holds `text`, and
/// its number of instances. A file with nothing in it gives no instances:
/// a stage that found nothing to refine is not an error.
pub fn resolve(expansion: &Expansion, text: &str) -> Result<(Domain, u64), Problem> {
    let empty = |p: &Problem| matches!(p, Problem::Empty(_));
    let file = expansion.file().to_owned();
    let domain = match expansion {
        Expansion::Lines { .. } => match lines(text) {
            Err(p) if empty(&p) => Domain::Lines { file, items: StrPool::default() },
            r => Domain::Lines { file, items: r? },
        },
        Expansion::Json { .. } => match json(text) {
            Err(p) if empty(&p) => Domain::Json { file, items: StrPool::default() },
            r => Domain::Json { file, items: r? },
        },
        Expansion::Chunks { dir, lines: per, stdin, .. } => {
            let (items, total_lines) = match chunks(text, *per) {
                Err(p) if empty(&p) => (StrPool::default(), 0),
                r => r?,
            };
            Domain::Chunks { file, dir: dir.clone(), lines: *per, total_lines, stdin: *stdin, items }
        }
    };
    let count = match &domain {
        Domain::Lines { items, .. } | Domain::Json { items, .. } | Domain::Chunks { items, .. } => items.len() as u64,
        _ => 0,
    };
    Ok((domain, count))
}

/// The items `text` gives for `expansion` (none for an empty file): what
/// one part of a nested task holds.
pub fn items(expansion: &Expansion, text: &str) -> Result<StrPool, Problem> {
    Ok(match resolve(expansion, text)?.0 {
        Domain::Lines { items, .. } | Domain::Json { items, .. } | Domain::Chunks { items, .. } => items,
        _ => StrPool::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_chunks_and_json() {
        assert_eq!(lines("a\n\n b\n").unwrap().iter().collect::<Vec<_>>(), ["a", " b"]);
        assert_eq!(lines(" \n"), Err(Problem::Empty("non-empty lines")));
        let (pool, total) = chunks("1\n2\n3\n", 2).unwrap();
        assert_eq!((pool.iter().collect::<Vec<_>>(), total), (vec!["1\n2\n", "3\n"], 3));
        assert_eq!(json("[1, {\"a\": 2}]").unwrap().iter().collect::<Vec<_>>(), ["1", "{\"a\":2}"]);
        assert_eq!(json("{}"), Err(Problem::NotAnArray));
        assert!(matches!(json("[1,"), Err(Problem::BadJson { line: 1, .. })));
    }

    #[test]
    fn a_deferred_file_with_nothing_in_it_has_no_instances() {
        let lines = Expansion::Lines { file: "hits.txt".into() };
        assert_eq!(resolve(&lines, "").unwrap().1, 0);
        assert_eq!(resolve(&lines, "a\nb\n").unwrap().1, 2);
        let json = Expansion::Json { file: "hits.json".into() };
        assert_eq!(resolve(&json, "[]").unwrap().1, 0);
        assert_eq!(resolve(&json, "{}").unwrap_err(), Problem::NotAnArray);
        let chunks = Expansion::Chunks { file: "f".into(), dir: ".flow/chunks/x".into(), lines: 2, stdin: false };
        let (domain, count) = resolve(&chunks, "1\n2\n3\n").unwrap();
        assert_eq!(count, 2);
        assert!(matches!(domain, Domain::Chunks { total_lines: 3, .. }));
    }
}
