//! [`Linker`]: dependency inference, pass two — rendered inputs and `after`
//! selectors matched against the producers found in pass one.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use super::ctx::Ctx;
use super::draft::{Draft, base_domain, instance_name, is_deferred};
use super::edge_builder::EdgeBuilder;
use super::output_index::OutputIndex;
use super::rendered::Rendered;
use super::symbolic;
use crate::diag::{Code, Diagnostic, closest};
use crate::ir::Selector;
use crate::ir::{Edge, EdgeOn, EdgeOrigin};
use crate::paths::{glob_exists_on_disk, glob_matcher, is_glob};

/// A glob's producers, grouped by group with sorted instance lists.
type GlobMatches = Result<Vec<(u32, Vec<u64>)>, InputProblem>;

/// What can be wrong with one rendered input.
#[derive(Debug, Clone, PartialEq, Eq)]
enum InputProblem {
    /// No task produces it and it is not on disk (for a glob: nothing matches).
    Missing,
    /// The instance lists the file in both `inputs` and `outputs`.
    OwnOutput,
    /// The glob does not parse.
    BadGlob(String),
}

impl InputProblem {
    fn diagnostic(&self, path: &str, instance: &str, span: std::ops::Range<usize>) -> Diagnostic {
        match self {
            InputProblem::Missing => {
                let what = if is_glob(path) {
                    "matches no file, and no task produces one"
                } else {
                    "does not exist, and no task produces it"
                };
                Diagnostic::new(Code::CompileMissingInput, format!("input `{path}`{instance} {what}"))
                    .at(span, "needed here")
                    .help("create the file, fix the path (relative to the workflow file), or add a task that lists it in `outputs`")
            }
            InputProblem::OwnOutput => Diagnostic::new(
                Code::CompileInputIsOutput,
                format!("`{path}` is both an input and an output{instance}"),
            )
            .at(span, "also an output of this instance")
            .help("a task cannot read the file it writes; remove it from `inputs` or give the output another name"),
            InputProblem::BadGlob(why) => {
                Diagnostic::new(Code::CompileBadGlob, format!("bad glob `{path}`{instance}: {why}"))
                    .at(span, "invalid pattern")
                    .help("globs use `*`, `**`, `?`, `[abc]` and `{a,b}`; write `[[]` for a literal `[`")
            }
        }
    }
}

/// Turns rendered inputs and selectors into edges.
pub struct Linker<'a> {
    producers: &'a OutputIndex,
    /// Outputs of groups known only at run time, as patterns.
    later: &'a [(u32, globset::GlobMatcher)],
    counts: &'a [u64],
    base: PathBuf,
    globs: HashMap<String, GlobMatches>,
    edges: EdgeBuilder,
    /// Whether every task compiled, so a missing producer is certain.
    complete: bool,
}

impl<'a> Linker<'a> {
    /// A linker over the outputs of all groups.
    pub fn new(
        producers: &'a OutputIndex,
        later: &'a [(u32, globset::GlobMatcher)],
        counts: &'a [u64],
        base: PathBuf,
        complete: bool,
    ) -> Self {
        Self { producers, later, counts, base, globs: HashMap::new(), edges: EdgeBuilder::default(), complete }
    }

    /// The edges found, compressed.
    pub fn finish(self) -> Vec<Edge> {
        self.edges.finish(self.counts)
    }

    /// Links the inputs of group `g`.
    pub fn inputs(&mut self, ctx: &mut Ctx, drafts: &[Option<Draft>], g: u32, r: &Rendered) {
        let mut failed = vec![false; r.input_spans.len()];
        let mut start = 0;
        for (i, &end) in r.input_ends.iter().enumerate() {
            let i = i as u64;
            for k in start..end {
                let (path, key) = (r.inputs.get(k).unwrap_or_default(), r.input_keys[k] as usize);
                if failed[key] {
                    continue;
                }
                if let Some(problem) = self.input(path, g, i) {
                    if problem == InputProblem::Missing && !self.complete {
                        continue;
                    }
                    failed[key] = true;
                    let instance = if self.counts[g as usize] > 1 {
                        format!(" (in {})", instance_name(drafts, (g, i)))
                    } else {
                        String::new()
                    };
                    ctx.report(problem.diagnostic(path, &instance, r.input_spans[key].clone()));
                }
            }
            start = end;
        }
    }

    /// Makes every instance of group `g` wait for the instance that writes
    /// one of the `scripts` its command or setup lines run; a script no
    /// task writes is left alone (the runtime hashes it, or notes it).
    pub fn scripts(&mut self, g: u32, scripts: &[String]) {
        for script in scripts {
            let Some((pg, pi)) = self.producers.get(script) else { continue };
            if pg == g {
                continue;
            }
            for i in 0..self.counts[g as usize] {
                self.edges.add(pg, pi, g, i, EdgeOrigin::Files);
            }
        }
    }

    /// Links one input of instance `i` of group `g`; returns what is wrong with it.
    fn input(&mut self, path: &str, g: u32, i: u64) -> Option<InputProblem> {
        if path.is_empty() || path == "." {
            return None;
        }
        if symbolic::is_symbolic(path) {
            // The symbolic instance of a group known only at run time: what
            // the same instance of its base group writes, or any match.
            if let Some((pg, pi)) = self.producers.get(path) {
                self.edges.add(pg, pi, g, i, EdgeOrigin::Files);
                return None;
            }
            return self.input(&symbolic::to_glob(path), g, i);
        }
        if !is_glob(path) {
            return match self.producers.get(path) {
                Some(p) if p == (g, i) => Some(InputProblem::OwnOutput),
                Some((pg, pi)) => {
                    self.edges.add(pg, pi, g, i, EdgeOrigin::Files);
                    None
                }
                None if self.later_writer(path, g, i) => None,
                // A directory: its tree is read, so what is written under it first.
                None if self.base.join(path).is_dir() => {
                    self.link_glob(&format!("{path}/**"), g, i);
                    None
                }
                None if self.base.join(path).exists() => None,
                None => Some(InputProblem::Missing),
            };
        }
        self.link_glob(path, g, i)
    }

    /// Links glob `path`, an input of instance `i` of group `g`, to the
    /// instances that write what it matches; returns what is wrong with it.
    fn link_glob(&mut self, path: &str, g: u32, i: u64) -> Option<InputProblem> {
        let matches = self.glob(path);
        let groups = match matches {
            Ok(groups) => groups.clone(),
            Err(problem) => return Some(problem.clone()),
        };
        for (pg, insts) in groups {
            if pg != g && insts.len() as u64 == self.counts[pg as usize] {
                self.edges.add_whole(pg, g, i, EdgeOrigin::Files);
            } else {
                for pi in insts.into_iter().filter(|&pi| (pg, pi) != (g, i)) {
                    self.edges.add(pg, pi, g, i, EdgeOrigin::Files);
                }
            }
        }
        None
    }

    /// Makes instance `i` of `g` wait for the groups known only at run time
    /// that may write `path`; whether there is one.
    fn later_writer(&mut self, path: &str, g: u32, i: u64) -> bool {
        let writers: Vec<u32> =
            self.later.iter().filter(|(w, m)| *w != g && m.is_match(path)).map(|(w, _)| *w).collect();
        for &w in &writers {
            self.edges.add_whole(w, g, i, EdgeOrigin::Files);
        }
        !writers.is_empty()
    }

    /// A glob's producers, computed once per distinct pattern.
    fn glob(&mut self, pattern: &str) -> &GlobMatches {
        if !self.globs.contains_key(pattern) {
            let result = match glob_matcher(pattern) {
                Err(e) => Err(InputProblem::BadGlob(e.to_string())),
                Ok(m) => {
                    let mut by_group: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
                    for (path, (g, i)) in self.producers.iter() {
                        // A pattern (a task known only at run time) matches
                        // when some file it names would.
                        let pattern = symbolic::is_symbolic(path) && symbolic::may_match(pattern, path);
                        if pattern || m.is_match(path) {
                            by_group.entry(g).or_default().push(i);
                        }
                    }
                    if by_group.is_empty() && !glob_exists_on_disk(&self.base, pattern, &m) {
                        Err(InputProblem::Missing)
                    } else {
                        Ok(by_group
                            .into_iter()
                            .map(|(g, mut v)| {
                                (g, {
                                    v.sort_unstable();
                                    v
                                })
                            })
                            .collect())
                    }
                }
            };
            self.globs.insert(pattern.to_owned(), result);
        }
        &self.globs[pattern]
    }

    /// Links the `after` selectors of group `g`.
    pub fn after(&mut self, ctx: &mut Ctx, names: &[&str], drafts: &[Option<Draft>], g: u32, r: &Rendered) {
        let mut failed = vec![false; r.after_spans.len()];
        let mut start = 0;
        for (i, &end) in r.after_ends.iter().enumerate() {
            let i = i as u64;
            for k in start..end {
                let (text, key) = (r.after.get(k).unwrap_or_default(), r.after_keys[k] as usize);
                if failed[key] {
                    continue;
                }
                let on = r.after_on.get(key).copied().unwrap_or_default();
                if let Some((message, help)) = self.selector(text, on, names, drafts, g, i) {
                    failed[key] = true;
                    ctx.report(
                        Diagnostic::new(Code::CompileBadAfter, message)
                            .at(r.after_spans[key].clone(), "in this `after`")
                            .help(help),
                    );
                }
            }
            start = end;
        }
    }

    fn selector(
        &mut self,
        text: &str,
        on: EdgeOn,
        names: &[&str],
        drafts: &[Option<Draft>],
        g: u32,
        i: u64,
    ) -> Option<(String, String)> {
        if text.trim().is_empty() {
            return None;
        }
        let sel = match Selector::parse(text) {
            Ok(sel) => sel,
            Err(e) => return Some((e.to_string(), "write `task` or `task[1-10,20]`".to_owned())),
        };
        let Some(t) = names.iter().position(|n| *n == sel.name) else {
            let help = closest(&sel.name, names.iter().copied())
                .map_or_else(|| format!("tasks are: {}", names.join(", ")), |b| format!("did you mean `{b}`?"));
            return Some((format!("`after` names unknown task `{}`", sel.name), help));
        };
        // A task that failed to compile was reported already.
        drafts[t].as_ref()?;
        let t = t as u32;
        let Some(indices) = sel.indices else {
            self.edges.add_whole_on(t, g, i, EdgeOrigin::After, on);
            return None;
        };
        if is_deferred(drafts, t as usize) {
            return Some((
                format!("`{text}` selects instances of `{}`, whose instances are known only at run time", sel.name),
                format!("wait for the whole task: `after = [\"{}\"]`", sel.name),
            ));
        }
        if sel.subindices.is_some() {
            return Some((
                format!("`{text}` has two levels of indices, but `{}` has one", sel.name),
                format!("write `{}[3]`", sel.name),
            ));
        }
        let domain = base_domain(drafts, t as usize);
        let count = self.counts[t as usize];
        for range in indices {
            for n in 0..range.count {
                let index = range.get(n);
                match domain.position(index, count) {
                    Some(p) if (t, p) == (g, i) => {
                        return Some((
                            format!("`{text}` makes an instance wait for itself"),
                            "select other instances".to_owned(),
                        ));
                    }
                    Some(p) => self.edges.add_on(t, p, g, i, EdgeOrigin::After, on),
                    None => {
                        let first = domain.index(0);
                        let last = domain.index(count.saturating_sub(1));
                        return Some((
                            format!("`{text}` selects index {index}, which `{}` does not have", sel.name),
                            format!("`{}` has {count} instances with indices from {first} to {last}", sel.name),
                        ));
                    }
                }
            }
        }
        None
    }
}
