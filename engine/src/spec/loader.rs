//! [`load`]: a workflow file and every file it includes, read into one
//! [`Workflow`] and one [`Source`] whose text holds them all, so every span
//! of the workflow points into the file it was written in.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::format::Format;
use super::include::Include;
use super::namespace::{Graft, graft};
use super::parse::read_at;
use super::sp::Sp;
use super::workflow::Workflow;
use crate::diag::{Code, Diagnostic, Part, Source, closest};

/// How many files deep includes may nest. Each level nests the included
/// file's variables one level deeper under its namespace; with
/// [`super::tree::MAX_DEPTH`] this keeps every accepted workflow readable
/// back from its run directory (issue 29).
pub(crate) const MAX_INCLUDE_DEPTH: usize = 16;

/// Reads the workflow file `root` (at `path`, in `format`) and the files it
/// includes, and their includes: the workflow with every included task and
/// template under its namespace (`None` only when the root file cannot be
/// read as a table), the source of all the files, and every problem found
/// in any of them, with spans into that source.
pub fn load(root: &Arc<Source>, path: &Path, format: Format) -> (Option<Workflow>, Arc<Source>, Vec<Diagnostic>) {
    let (workflow, diagnostics) = read_at::<Workflow>(root, format, "a workflow file", 0);
    let mut loader = Loader { text: root.text.to_string(), parts: Vec::new(), diagnostics };
    let workflow = workflow.map(|mut workflow| {
        let mut chain = vec![(canonical(path), root.name.clone())];
        loader.includes(&mut workflow, path, &mut chain);
        workflow
    });
    let Loader { text, parts, diagnostics } = loader;
    let source = if parts.is_empty() { root.clone() } else { Source::with_parts(root.name.clone(), text, parts) };
    (workflow, source, diagnostics)
}

struct Loader {
    /// The text of every file read so far, one after the other.
    text: String,
    parts: Vec<Part>,
    diagnostics: Vec<Diagnostic>,
}

impl Loader {
    /// Grafts the files `workflow` (read from `file`) includes into it;
    /// `chain` holds the files being included, the outermost first.
    fn includes(&mut self, workflow: &mut Workflow, file: &Path, chain: &mut Vec<(PathBuf, String)>) {
        self.check_names(workflow);
        let dir = file.parent().unwrap_or(Path::new(""));
        let mut namespaces: HashMap<String, Range<usize>> = HashMap::new();
        for entry in std::mem::take(&mut workflow.include) {
            let (path, named, vars) = match entry.value {
                Include::Path(p) => (Sp::new(p, entry.span.clone()), None, Default::default()),
                Include::Table(t) => (t.path, t.namespace, t.vars),
            };
            if chain.len() > MAX_INCLUDE_DEPTH {
                self.diagnostics.push(too_deep(&path, chain));
                continue;
            }
            let stem = Path::new(&path.value).file_stem().map(|s| s.to_string_lossy().into_owned());
            let (namespace, ns_span) = match (&named, stem) {
                (Some(n), _) => (n.value.clone(), n.span.clone()),
                (None, Some(stem)) => (stem, path.span.clone()),
                (None, None) => {
                    self.diagnostics.push(
                        Diagnostic::new(
                            Code::IncludeMissing,
                            format!("cannot include `{}`: it names no file", path.value),
                        )
                        .at(path.span.clone(), "not a file name")
                        .help("name a TOML or YAML workflow file, relative to the directory of this file"),
                    );
                    continue;
                }
            };
            if !self.namespace_ok(workflow, &namespace, &ns_span, named.is_some(), &mut namespaces) {
                continue;
            }
            let target = dir.join(&path.value);
            let Some((canon, source)) = self.read(&target, &path, chain) else { continue };
            let start = self.text.len() + 1;
            self.text.push('\n');
            self.text.push_str(&source.text);
            self.parts.push(Part { start, source: source.clone(), included_at: entry.span.clone() });
            let format = Format::from_path(&target).unwrap_or(Format::Toml);
            let (file, found) = read_at::<Workflow>(&source, format, "an included workflow file", start);
            self.diagnostics.extend(found);
            let Some(mut file) = file else { continue };
            self.check_run_keys(&file);
            chain.push((canon, source.name.clone()));
            self.includes(&mut file, &target, chain);
            chain.pop();
            for (name, value) in &vars {
                if !file.vars.contains_key(name) {
                    self.diagnostics.push(unknown_var(name, &value.span, &file, &path.value));
                }
            }
            let vars = vars.into_iter().filter(|(name, _)| file.vars.contains_key(name)).collect();
            let rel = Path::new(&path.value).parent().unwrap_or(Path::new(""));
            graft(workflow, Graft { file, namespace: &namespace, dir: rel, vars, at: entry.span.clone() });
        }
    }

    /// Reports the keys of an included file that belong to the whole run
    /// (`max_fails`, `continue_on_failure`, `finally`, `containers`): only
    /// the including file may set them.
    fn check_run_keys(&mut self, file: &Workflow) {
        let spans = [
            ("max_fails", file.max_fails.as_ref().map(|k| k.span.clone())),
            ("continue_on_failure", file.continue_on_failure.as_ref().map(|k| k.span.clone())),
            ("finally", file.finally.as_ref().map(|k| k.span.clone())),
            ("containers", file.containers.as_ref().map(|k| k.span.clone())),
        ];
        for (key, span) in spans {
            let Some(span) = span else { continue };
            self.diagnostics.push(
                Diagnostic::new(Code::IncludeBadValue, format!("`{key}` in an included file"))
                    .at(span, "set for the whole run")
                    .help(format!(
                        "`{key}` holds for the whole run: set it in the workflow file that `flow run` is given"
                    )),
            );
        }
    }

    /// Reports names written with a `.`, which only namespaces may add.
    fn check_names(&mut self, workflow: &Workflow) {
        let names = workflow.tasks.iter().filter_map(|t| t.value.name.as_ref());
        for name in names.filter(|n| n.value.contains('.')) {
            self.diagnostics.push(
                Diagnostic::new(Code::CompileBadName, format!("task name `{}` is not allowed", name.value))
                    .at(name.span.clone(), "bad name")
                    .help("the dot separates an included file's namespace from its names (`lib.task`); use letters, digits, `-` and `_`"),
            );
        }
    }

    /// Whether `namespace` is a valid name that clashes with nothing in `workflow`.
    fn namespace_ok(
        &mut self,
        workflow: &Workflow,
        namespace: &str,
        span: &Range<usize>,
        named: bool,
        namespaces: &mut HashMap<String, Range<usize>>,
    ) -> bool {
        let valid =
            !namespace.is_empty() && namespace.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        let problem = if !valid {
            let help = if named {
                "use letters, digits, `-` and `_`"
            } else {
                "name the namespace with `as`: `{ path = \"…\", as = \"lib\" }`"
            };
            Some(
                Diagnostic::new(Code::IncludeBadValue, format!("`{namespace}` cannot be a namespace"))
                    .at(span.clone(), "bad namespace")
                    .help(help),
            )
        } else if namespaces.contains_key(namespace) {
            Some(clash(namespace, span, "is already the namespace of another include"))
        } else if workflow.tasks.iter().any(|t| t.value.name.as_ref().is_some_and(|n| n.value == namespace)) {
            Some(clash(namespace, span, "is also the name of a task"))
        } else if workflow.vars.contains_key(namespace) {
            Some(clash(namespace, span, "is also the name of a variable"))
        } else {
            None
        };
        namespaces.insert(namespace.to_owned(), span.clone());
        match problem {
            Some(d) => {
                self.diagnostics.push(d);
                false
            }
            None => true,
        }
    }

    /// The included file at `target` (written as `path`), unless it cannot
    /// be read or is already being included.
    fn read(
        &mut self,
        target: &Path,
        path: &Sp<String>,
        chain: &[(PathBuf, String)],
    ) -> Option<(PathBuf, Arc<Source>)> {
        let shown = crate::paths::normalize(&target.to_string_lossy()).into_owned();
        let missing =
            |why: String| Diagnostic::new(Code::IncludeMissing, format!("cannot include `{}`: {why}", path.value));
        let canon = match target.canonicalize() {
            Ok(c) => c,
            Err(_) => {
                let d = missing("no such file".into()).at(path.span.clone(), "not found");
                self.diagnostics.push(match near_file(target) {
                    Some(near) => d.help(format!("did you mean `{near}`?")),
                    None => d.help("the path is relative to the directory of the file that includes it"),
                });
                return None;
            }
        };
        if let Some(at) = chain.iter().position(|(c, _)| *c == canon) {
            let round: Vec<&str> =
                chain[at..].iter().map(|(_, name)| name.as_str()).chain([chain[at].1.as_str()]).collect();
            self.diagnostics.push(
                Diagnostic::new(Code::IncludeCycle, format!("`{shown}` includes itself: {}", round.join(" → ")))
                    .at(path.span.clone(), "included again here")
                    .help("remove this include: a file cannot include itself, directly or through others"),
            );
            return None;
        }
        let text = crate::text_file::read_text(&canon).map_err(|e| e.to_string());
        match text {
            Ok(text) => Some((canon, Source::new(shown, text))),
            Err(why) => {
                self.diagnostics.push(missing(why).at(path.span.clone(), "cannot be read"));
                None
            }
        }
    }
}

/// The problem of an include nested more than [`MAX_INCLUDE_DEPTH`] files deep.
fn too_deep(path: &Sp<String>, chain: &[(PathBuf, String)]) -> Diagnostic {
    let outermost = chain.first().map_or("", |(_, name)| name.as_str());
    Diagnostic::new(
        Code::IncludeBadValue,
        format!("cannot include `{}`: includes nest more than {MAX_INCLUDE_DEPTH} files deep", path.value),
    )
    .at(path.span.clone(), "one include too many")
    .help(format!("include this file from a file nearer to `{outermost}`; at most {MAX_INCLUDE_DEPTH} files may include each other in a chain"))
}

fn clash(namespace: &str, span: &Range<usize>, what: &str) -> Diagnostic {
    Diagnostic::new(Code::IncludeClash, format!("namespace `{namespace}` {what}"))
        .at(span.clone(), "clashing namespace")
        .help("give the include another namespace with `as`: `{ path = \"…\", as = \"other\" }`")
}

fn unknown_var(name: &str, span: &Range<usize>, file: &Workflow, path: &str) -> Diagnostic {
    let d = Diagnostic::new(Code::IncludeBadValue, format!("`{path}` has no variable `{name}`"))
        .at(span.clone(), "unknown variable");
    match closest(name, file.vars.keys().map(String::as_str)) {
        Some(near) => d.help(format!("did you mean `{near}`?")),
        None => d.help("an include sets only the variables the included file declares under `vars`"),
    }
}

/// The path of a file beside `target` whose name is close to its name.
fn near_file(target: &Path) -> Option<String> {
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = target.file_name()?.to_string_lossy().into_owned();
    let names: Vec<String> =
        fs_err::read_dir(dir).ok()?.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    let near = closest(&name, names.iter().map(String::as_str))?;
    Some(target.with_file_name(near).display().to_string())
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}
