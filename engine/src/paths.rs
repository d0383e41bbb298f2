//! File names as dependency keys: lexical normalisation, glob detection and
//! globs matched against the disk.

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// `./a//b/../c` → `a/c`. Absolute paths stay absolute; leading `..` are kept.
pub fn normalize(path: &str) -> Cow<'_, str> {
    let clean = !path.starts_with("./")
        && !path.contains("//")
        && !path.contains("/./")
        && !path.contains("/../")
        && !path.ends_with("/.")
        && !path.ends_with("/..")
        && !path.starts_with("../")
        && !path.ends_with('/')
        && path != ".";
    if clean {
        return Cow::Borrowed(path);
    }
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    Cow::Owned(if absolute {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".to_owned()
    } else {
        joined
    })
}

/// Whether an input is a glob pattern rather than one file.
pub fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '[', '{'])
}

/// Whether any file under `base` matches the glob `pattern`.
pub fn glob_exists_on_disk(base: &Path, pattern: &str, matcher: &globset::GlobMatcher) -> bool {
    glob_walk(base, pattern, matcher, &mut |_| ControlFlow::Break(())).is_break()
}

/// Calls `found` with every path under `base` that matches the glob
/// `pattern` (relative to `base`, or absolute), until it breaks. Only the
/// directories the pattern can reach are read.
pub fn glob_walk(
    base: &Path,
    pattern: &str,
    matcher: &globset::GlobMatcher,
    found: &mut dyn FnMut(&Path) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let literal: Vec<&str> = pattern.split('/').take_while(|p| !is_glob(p)).collect();
    let prefix = literal.join("/");
    let depth = if pattern.contains("**") { usize::MAX } else { pattern.split('/').count() - literal.len() };
    let absolute = pattern.starts_with('/');
    let start = match (prefix.is_empty(), absolute) {
        (true, true) => PathBuf::from("/"),
        (true, false) => base.to_path_buf(),
        (false, _) => base.join(&prefix),
    };
    let strip = if absolute { Path::new("") } else { base };
    walk(&start, strip, depth, matcher, found)
}

fn walk(
    dir: &Path,
    strip: &Path,
    depth: usize,
    matcher: &globset::GlobMatcher,
    found: &mut dyn FnMut(&Path) -> ControlFlow<()>,
) -> ControlFlow<()> {
    if depth == 0 {
        return ControlFlow::Continue(());
    }
    let Ok(entries) = fs_err::read_dir(dir) else { return ControlFlow::Continue(()) };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path.strip_prefix(strip).unwrap_or(&path);
        if matcher.is_match(rel) {
            found(&path)?;
        }
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk(&path, strip, depth - 1, matcher, found)?;
        }
    }
    ControlFlow::Continue(())
}

/// How deep braces (`{a,{b,c}}`) may nest in a glob. Each level nests the
/// regex a glob becomes, and globset panics past the regex's own limit.
pub const MAX_BRACE_DEPTH: usize = 16;

/// The longest glob, in bytes: the longest path Linux resolves. A longer
/// one can match nothing, and its regex could outgrow globset's size limit.
pub const MAX_GLOB_LEN: usize = 4096;

/// Why a glob cannot be compiled.
#[derive(Debug, thiserror::Error)]
pub enum GlobError {
    /// The pattern is not a glob (an unclosed `[`, a stray `}`).
    #[error("{0}")]
    Syntax(globset::ErrorKind),
    /// Braces nested deeper than [`MAX_BRACE_DEPTH`].
    #[error("braces nest {0} deep; at most {MAX_BRACE_DEPTH} are allowed")]
    TooDeep(usize),
    /// A pattern longer than [`MAX_GLOB_LEN`].
    #[error("{0} bytes long; at most {MAX_GLOB_LEN} are allowed")]
    TooLong(usize),
}

/// Compiles a glob the way inputs use it: `*` stays within one directory, `**` crosses them.
pub fn glob_matcher(pattern: &str) -> Result<globset::GlobMatcher, GlobError> {
    if pattern.len() > MAX_GLOB_LEN {
        return Err(GlobError::TooLong(pattern.len()));
    }
    let depth = brace_depth(pattern);
    if depth > MAX_BRACE_DEPTH {
        return Err(GlobError::TooDeep(depth));
    }
    let glob = globset::GlobBuilder::new(pattern).literal_separator(true).build();
    Ok(glob.map_err(|e| GlobError::Syntax(e.kind().clone()))?.compile_matcher())
}

/// How deep `{` nest in `pattern`; an escaped brace (`\{`) counts too,
/// which can only refuse a pattern early.
fn brace_depth(pattern: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0);
    for c in pattern.chars() {
        match c {
            '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes() {
        for (a, b) in [
            ("a/b.txt", "a/b.txt"),
            ("./a/b", "a/b"),
            ("a//b", "a/b"),
            ("a/./b", "a/b"),
            ("a/x/../b", "a/b"),
            ("../a", "../a"),
            ("/x/../y", "/y"),
            ("a/", "a"),
            (".", "."),
        ] {
            assert_eq!(normalize(a), b, "{a}");
        }
    }

    /// Issue 29: braces nested 125 deep used to panic in globset.
    #[test]
    fn deeply_nested_braces_and_huge_globs_are_errors() {
        let nested = |n: usize| format!("{}b{}", "{a,".repeat(n), "}".repeat(n));
        assert!(glob_matcher(&nested(MAX_BRACE_DEPTH)).unwrap().is_match("b"));
        let err = glob_matcher(&nested(125)).unwrap_err();
        assert_eq!(err.to_string(), "braces nest 125 deep; at most 16 are allowed");
        let err = glob_matcher(&"a".repeat(5000)).unwrap_err();
        assert_eq!(err.to_string(), "5000 bytes long; at most 4096 are allowed");
        assert_eq!(glob_matcher("a/[b").unwrap_err().to_string(), "unclosed character class; missing ']'");
    }

    #[test]
    fn globs() {
        assert!(is_glob("scores/*.csv"));
        assert!(!is_glob("scores/1.csv"));
        let m = glob_matcher("scores/*.csv").unwrap();
        assert!(m.is_match("scores/1.csv"));
        assert!(!m.is_match("scores/a/1.csv"));
        assert!(glob_matcher("a/**/x").unwrap().is_match("a/b/c/x"));
    }

    #[test]
    fn finds_globs_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(dir.path().join("d/e")).unwrap();
        fs_err::write(dir.path().join("d/e/f.csv"), "").unwrap();
        let yes = |p: &str| glob_exists_on_disk(dir.path(), p, &glob_matcher(p).unwrap());
        assert!(yes("d/*/f.csv"));
        assert!(yes("d/**/*.csv"));
        assert!(!yes("d/*.csv"));
        assert!(!yes("x/*.csv"));
    }
}
