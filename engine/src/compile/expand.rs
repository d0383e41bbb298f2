//! Expansion: a task's `range`, `each_line`, `each_chunk`, `from_json`,
//! `matrix` or `for_each` turned into an IR [`Domain`] (a `for_each`
//! placeholder is pointed at its task afterwards, by the `for_each` pass).

use super::ctx::Ctx;
use super::nested;
use super::resolved::Resolved;
use super::writers::Writers;
use crate::diag::{Code, Diagnostic, Source};
use crate::expansion;
use crate::ir::parse_ranges;
use crate::ir::{Domain, Expansion, GroupId, IntRange};
use crate::spec::{RangeSpec, Sp, TaskSpec};

const KEYS: [&str; 6] = ["range", "each_line", "each_chunk", "from_json", "matrix", "for_each"];

/// The domain and instance count of a task (a `for_each` placeholder until
/// the `for_each` pass runs), and the tasks whose end makes a deferred
/// domain known. `g` is the task's position; `writers` tells which files
/// other tasks write.
pub fn domain(ctx: &mut Ctx, writers: &Writers, r: &Resolved, g: usize) -> Option<(Domain, u64, Vec<usize>)> {
    let spec = &r.spec;
    let present = expansion_spans(spec);
    if let Some(nested) = nested::domain(ctx, writers, r, g, &present) {
        return nested;
    }
    if present.len() > 1 {
        let names: Vec<&str> = present.iter().map(|(k, _)| *k).collect();
        ctx.report(
            Diagnostic::new(
                Code::CompileTwoExpansions,
                format!("task `{}` has more than one expansion: {}", r.name, names.join(", ")),
            )
            .at(present[1].1.clone(), "second expansion")
            .help("a task expands in one way; split it into two tasks, or use `matrix` for combinations"),
        );
        return None;
    }
    let known = |d: Option<(Domain, u64)>| d.map(|(d, n)| (d, n, Vec::new()));
    if let Some(range) = &spec.range {
        return known(range_domain(ctx, range));
    }
    if let Some(file) = &spec.each_line {
        let path = ctx.render_vars(file, "each_line")?;
        if let Some(deferred) = deferred(writers, g, Expansion::Lines { file: path.clone() }) {
            return Some(deferred);
        }
        let text = read(ctx, file, &path, "each_line")?;
        let items = checked(ctx, expansion::lines(&text), file, &path)?;
        let count = within_limit(ctx, items.len() as u64, file.span.clone(), "`each_line`")?;
        return Some((Domain::Lines { file: path, items }, count, Vec::new()));
    }
    if let Some(chunk) = &spec.each_chunk {
        let lines = ctx.count(&chunk.value.lines, "lines", 1)?;
        let file = &chunk.value.file;
        let path = ctx.render_vars(file, "each_chunk.file")?;
        let dir = format!(".flow/chunks/{}", r.name);
        let stdin = chunk.value.stdin.as_ref().is_some_and(|s| s.value);
        let expansion = Expansion::Chunks { file: path.clone(), dir: dir.clone(), lines, stdin };
        if let Some(deferred) = deferred(writers, g, expansion) {
            return Some(deferred);
        }
        let text = read(ctx, file, &path, "each_chunk.file")?;
        let (items, total) = checked(ctx, expansion::chunks(&text, lines), file, &path)?;
        let count = within_limit(ctx, items.len() as u64, chunk.span.clone(), "`each_chunk`")?;
        return Some((Domain::Chunks { file: path, dir, lines, total_lines: total, stdin, items }, count, Vec::new()));
    }
    if let Some(file) = &spec.from_json {
        let path = ctx.render_vars(file, "from_json")?;
        if let Some(deferred) = deferred(writers, g, Expansion::Json { file: path.clone() }) {
            return Some(deferred);
        }
        return known(json_domain(ctx, file, path));
    }
    if let Some(matrix) = &spec.matrix {
        return known(matrix_domain(ctx, matrix));
    }
    if spec.for_each.is_some() {
        return Some((Domain::Same { group: GroupId(u32::MAX) }, 0, Vec::new()));
    }
    Some((Domain::Single, 1, Vec::new()))
}

/// A domain known at run time when another task writes the expansion file:
/// its instances come into existence once that task has finished, and the
/// file is never read before (an old copy on disk would be stale).
fn deferred(writers: &Writers, g: usize, expansion: Expansion) -> Option<(Domain, u64, Vec<usize>)> {
    let writers = writers.of(expansion.file(), g);
    (!writers.is_empty()).then_some((Domain::Deferred { expansion }, 0, writers))
}

/// The items, or a diagnostic at the expansion key.
fn checked<T>(ctx: &mut Ctx, items: Result<T, expansion::Problem>, file: &Sp<String>, path: &str) -> Option<T> {
    match items {
        Ok(items) => Some(items),
        Err(expansion::Problem::Empty(what)) => {
            ctx.report(
                Diagnostic::new(Code::CompileEmptyExpansion, format!("`{path}` has no {what}"))
                    .at(file.span.clone(), "expands to nothing")
                    .help("a task array needs at least one instance; fill the file or point at another one"),
            );
            None
        }
        Err(problem) => {
            ctx.report(
                Diagnostic::new(Code::CompileBadExpansion, format!("`{path}` cannot be expanded: {problem}"))
                    .at(file.span.clone(), "this file"),
            );
            None
        }
    }
}

pub(super) fn expansion_spans(spec: &TaskSpec) -> Vec<(&'static str, std::ops::Range<usize>)> {
    let spans = [
        spec.range.as_ref().map(|s| s.span.clone()),
        spec.each_line.as_ref().map(|s| s.span.clone()),
        spec.each_chunk.as_ref().map(|s| s.span.clone()),
        spec.from_json.as_ref().map(|s| s.span.clone()),
        spec.matrix.as_ref().map(|s| s.span.clone()),
        spec.for_each.as_ref().map(|s| s.span.clone()),
    ];
    let mut present: Vec<_> = KEYS.iter().zip(spans).filter_map(|(k, s)| Some((*k, s?))).collect();
    present.sort_by_key(|(_, s)| s.start);
    present
}

fn range_domain(ctx: &mut Ctx, range: &Sp<RangeSpec>) -> Option<(Domain, u64)> {
    let ranges = match &range.value {
        RangeSpec::List(values) => runs(values),
        RangeSpec::Text(text) => {
            let text = ctx.render_vars(&Sp::new(text.clone(), range.span.clone()), "range")?;
            match parse_ranges(&text) {
                Ok(r) => r,
                Err(msg) => {
                    ctx.report(
                        Diagnostic::new(Code::CompileBadRange, format!("bad `range`: {msg}"))
                            .at(range.span.clone(), "invalid range")
                            .help("write ranges like \"1-1000\", \"1-100:2\" (step 2) or \"1,5,10-20\""),
                    );
                    return None;
                }
            }
        }
    };
    let count = ranges.iter().try_fold(0u64, |sum, r| sum.checked_add(r.count)).unwrap_or(u64::MAX);
    if count == 0 {
        ctx.report(
            Diagnostic::new(Code::CompileBadRange, "`range` is empty")
                .at(range.span.clone(), "no indices")
                .help("list at least one index"),
        );
        return None;
    }
    let count = within_limit(ctx, count, range.span.clone(), "`range`")?;
    Some((Domain::Range { ranges }, count))
}

/// `count`, or a diagnostic at `span` when it is over the instance limit.
fn within_limit(ctx: &mut Ctx, count: u64, span: std::ops::Range<usize>, what: &str) -> Option<u64> {
    let limit = ctx.options().max_instances;
    if count <= limit {
        return Some(count);
    }
    let shown = if count == u64::MAX { "more than 18446744073709551614".to_owned() } else { count.to_string() };
    ctx.report(
        Diagnostic::new(Code::CompileTooManyInstances, format!("{what} expands to {shown} instances, over the limit of {limit}"))
            .at(span, "too many instances")
            .help("narrow it, or raise the limit with `--max-instances N` (or FLOW_MAX_INSTANCES) if the machine can hold them"),
    );
    None
}

/// Packs a list of integers into runs of consecutive values.
fn runs(values: &[i64]) -> Vec<IntRange> {
    let mut out: Vec<IntRange> = Vec::new();
    for &v in values {
        match out.last_mut() {
            Some(r) if r.step == 1 && r.start.checked_add(r.count as i64) == Some(v) => r.count += 1,
            _ => out.push(IntRange { start: v, count: 1, step: 1 }),
        }
    }
    out
}

/// Reads the expansion file `path` (as rendered from `file`).
fn read(ctx: &mut Ctx, file: &Sp<String>, path: &str, key: &str) -> Option<String> {
    let full = ctx.options().base_dir.join(path);
    // A FIFO would block `flow check` and a device such as /dev/urandom
    // never ends: only regular files (or links to them) are read.
    if let Some(kind) = fs_err::metadata(&full).ok().and_then(|m| crate::text_file::special_kind(&m.file_type())) {
        ctx.report(
            Diagnostic::new(Code::CompileNotAFile, format!("`{path}` for `{key}` is {kind}, not a regular file"))
                .at(file.span.clone(), "this path")
                .help("point at a regular file; to read a stream, save it to a file first"),
        );
        return None;
    }
    match fs_err::read_to_string(full) {
        Ok(text) => Some(text),
        Err(e) => {
            let cause = match e.kind() {
                std::io::ErrorKind::NotFound => "no such file".to_owned(),
                std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
                _ => e.to_string(),
            };
            ctx.report(
                Diagnostic::new(Code::CompileUnreadableFile, format!("cannot read `{path}` for `{key}`: {cause}"))
                    .at(file.span.clone(), "this file")
                    .help("the path is relative to the workflow file's directory; check that it exists"),
            );
            None
        }
    }
}

fn json_domain(ctx: &mut Ctx, file: &Sp<String>, path: String) -> Option<(Domain, u64)> {
    let text = read(ctx, file, &path, "from_json")?;
    let pool = match expansion::json(&text) {
        Err(expansion::Problem::NotAnArray) => {
            ctx.report(
                Diagnostic::new(Code::CompileNotAnArray, format!("`{path}` does not hold a JSON array"))
                    .at(file.span.clone(), "from_json file")
                    .help("from_json expects a top-level array: one instance per element"),
            );
            return None;
        }
        Err(expansion::Problem::BadJson { line, column, why }) => {
            let shown = ctx.options().base_dir.join(&path);
            let source = Source::new(shown.strip_prefix("./").unwrap_or(&shown).display().to_string(), text);
            let offset = offset_of(&source.text, line, column);
            ctx.report(
                Diagnostic::new(Code::CompileBadJson, format!("`{path}` (from `from_json`) is not valid JSON: {why}"))
                    .at(offset..offset, "here")
                    .help("fix the JSON syntax at this position")
                    .in_source(source),
            );
            return None;
        }
        items => checked(ctx, items, file, &path)?,
    };
    let count = within_limit(ctx, pool.len() as u64, file.span.clone(), "`from_json`")?;
    Some((Domain::Json { file: path, items: pool }, count))
}

/// Byte offset of a 1-based line and column.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (start + column.saturating_sub(1)).min(text.len())
}

fn matrix_domain(
    ctx: &mut Ctx,
    matrix: &Sp<std::collections::BTreeMap<String, Sp<Vec<serde_json::Value>>>>,
) -> Option<(Domain, u64)> {
    let mut count: u64 = 1;
    for (name, values) in &matrix.value {
        if values.value.is_empty() {
            ctx.report(
                Diagnostic::new(Code::CompileEmptyExpansion, format!("matrix axis `{name}` is empty"))
                    .at(values.span.clone(), "no values")
                    .help("give the axis at least one value, or remove it"),
            );
            return None;
        }
        count = count.saturating_mul(values.value.len() as u64);
    }
    if matrix.value.is_empty() {
        ctx.report(
            Diagnostic::new(Code::CompileEmptyExpansion, "`matrix` has no axes")
                .at(matrix.span.clone(), "empty matrix")
                .help("add axes like `matrix = { lr = [0.1, 0.01] }`"),
        );
        return None;
    }
    let count = within_limit(ctx, count, matrix.span.clone(), "`matrix`")?;
    let axes = matrix.value.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect();
    Some((Domain::Matrix { axes }, count))
}
