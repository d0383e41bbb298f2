//! [`Writers`]: the files each task may write, as patterns, for telling
//! which expansion files a task of the run writes.

use super::ctx::Ctx;
use super::resolved::Resolved;
use super::symbolic::{self, ANY};
use crate::paths::{glob_matcher, normalize};

/// The files each task may write, as patterns.
pub struct Writers {
    patterns: Vec<(usize, globset::GlobMatcher)>,
}

impl Writers {
    /// The `outputs` of every task, rendered symbolically. Patterns without
    /// any known text (an output named just `{{ item }}`) could be anything
    /// and are left out.
    pub fn new(ctx: &mut Ctx, resolved: &[Resolved]) -> Writers {
        let mut patterns = Vec::new();
        for (g, r) in resolved.iter().enumerate() {
            let scope = symbolic::scope(ctx, &r.name, true);
            for output in r.spec.outputs.iter().flat_map(|l| l.value.iter()) {
                let text = match ctx.render_str(&output.value, &scope) {
                    Ok(text) => text,
                    Err(_) => symbolic::fallback(&output.value),
                };
                if text.chars().all(|ch| ch == ANY) {
                    continue;
                }
                if let Ok(m) = glob_matcher(&symbolic::to_glob(&text)) {
                    patterns.push((g, m));
                }
            }
        }
        Writers { patterns }
    }

    /// The tasks other than `except` that may write `path`.
    pub fn of(&self, path: &str, except: usize) -> Vec<usize> {
        let path = normalize(path);
        let mut groups: Vec<usize> =
            self.patterns.iter().filter(|(g, m)| *g != except && m.is_match(path.as_ref())).map(|(g, _)| *g).collect();
        groups.dedup();
        groups
    }

    /// The tasks other than `except` that may write a file named by
    /// `pattern` (a name with unknown parts, from [`symbolic::render`]): those whose
    /// outputs match it with its unknown parts filled in, or whose literal
    /// outputs it matches.
    pub fn of_pattern(&self, pattern: &str, except: usize) -> Vec<usize> {
        let probe = pattern.replace(ANY, "0");
        let probe = normalize(&probe);
        let glob = glob_matcher(&symbolic::to_glob(pattern)).ok();
        let mut groups: Vec<usize> = self
            .patterns
            .iter()
            .filter(|(g, m)| {
                let literal = m.glob().glob();
                *g != except
                    && (m.is_match(probe.as_ref())
                        || !literal.contains('*') && glob.as_ref().is_some_and(|gl| gl.is_match(literal)))
            })
            .map(|(g, _)| *g)
            .collect();
        groups.dedup();
        groups
    }
}
