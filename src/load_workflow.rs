//! Finding, reading, parsing and compiling the workflow named on the command line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use flow_engine::compile::{self, Options};
use flow_engine::diag::{Code, Diagnostic, Source};
use flow_engine::ir::{Amount, Graph};
use flow_engine::resources::Capacity;
use flow_engine::spec::{self, Format};
use flow_engine::text_file::{MAX_TEXT_FILE, read_bytes};

use crate::args::{WorkerArgs, WorkflowArgs};
use crate::failure::Failure;

/// A compiled workflow and the file it came from.
pub struct Loaded {
    /// The compiled graph.
    pub graph: Graph,
    /// The workflow file's text, followed by the texts of the files it includes.
    pub source: Arc<Source>,
    /// The workflow file.
    pub path: PathBuf,
}

impl Loaded {
    /// The workflow file's absolute path.
    pub fn absolute(&self) -> Result<PathBuf, Failure> {
        self.path.canonicalize().map_err(|e| Failure::Usage(format!("{}: {e}", self.path.display())))
    }

    /// The workflow's directory, absolute: where its profiles file and
    /// `.flow` directory are.
    pub fn dir(&self) -> Result<PathBuf, Failure> {
        Ok(self.absolute()?.parent().map(Path::to_path_buf).unwrap_or_default())
    }
}

const DEFAULT_NAMES: [&str; 3] = ["workflow.toml", "workflow.yaml", "workflow.yml"];

/// Loads and compiles the workflow `args` name.
pub fn load(args: &WorkflowArgs, worker: Option<Capacity>) -> Result<Loaded, Failure> {
    let path = match &args.workflow {
        Some(p) => p.clone(),
        None => DEFAULT_NAMES.iter().map(PathBuf::from).find(|p| p.exists()).ok_or_else(|| {
            Failure::Usage("no workflow.toml, workflow.yaml or workflow.yml here; name the workflow file".into())
        })?,
    };
    let format = Format::from_path(&path).unwrap_or(Format::Toml);
    let root = read_source(&path)?;
    let (workflow, source, spec_diags) = spec::load(&root, &path, format);
    let invalid = |diagnostics| Failure::Invalid { source: source.clone(), diagnostics };
    let Some(workflow) = workflow else { return Err(invalid(spec_diags)) };

    let mut vars = Vec::new();
    if let Some(file) = &args.vars_file {
        let vars_source = read_source(file)?;
        let format = Format::from_path(file).unwrap_or(Format::Toml);
        let parsed = spec::parse_vars(&vars_source, format)
            .map_err(|diagnostics| Failure::Invalid { source: vars_source.clone(), diagnostics })?;
        vars.extend(parsed.into_iter().map(|(k, v)| (k, v.value)));
    }
    for pair in &args.vars {
        vars.push(parse_var(pair)?);
    }
    let base_dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let options = Options { base_dir, vars, worker, max_instances: args.max_instances };
    match compile::compile(&workflow, &source, &options) {
        Ok(graph) if spec_diags.is_empty() => Ok(Loaded { graph, source, path }),
        Ok(_) => Err(invalid(spec_diags)),
        Err(compile_diags) => Err(invalid(merge(&workflow, spec_diags, compile_diags))),
    }
}

/// Problems from both stages, in file order. A task with a problem in the
/// file as written keeps only those: what the compiler says about it then
/// is usually the same mistake seen again (a misspelt `command` is also a
/// missing command). "No tasks" after a problem in the file as written is
/// that problem again (a misspelt `[[tasks]]`).
fn merge(workflow: &spec::Workflow, spec_diags: Vec<Diagnostic>, compile_diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let inside = |d: &Diagnostic, span: &std::ops::Range<usize>| {
        d.source.is_none() && d.span.as_ref().is_some_and(|s| span.start <= s.start && s.start < span.end)
    };
    // A TOML task's span is its `[[tasks]]` header; it extends to the next task.
    let starts: Vec<usize> = workflow.tasks.iter().map(|t| t.span.start).chain([usize::MAX]).collect();
    let extents = workflow.tasks.iter().zip(&starts[1..]).map(|(t, &next)| t.span.start..t.span.end.max(next));
    let spoiled: Vec<_> = extents.filter(|t| spec_diags.iter().any(|d| inside(d, t))).collect();
    let no_tasks_again = |d: &Diagnostic| d.code == Code::CompileNoTasks && !spec_diags.is_empty();
    let compile_diags: Vec<Diagnostic> = compile_diags.into_iter().filter(|d| !no_tasks_again(d)).collect();
    let mut all = spec_diags;
    all.extend(compile_diags.into_iter().filter(|d| !spoiled.iter().any(|t| inside(d, t))));
    all.sort_by_key(|d| (d.source.is_some(), d.span.as_ref().map(|s| s.start)));
    all
}

fn read_source(path: &Path) -> Result<Arc<Source>, Failure> {
    match read_bytes(path, MAX_TEXT_FILE) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Ok(Source::new(path.display().to_string(), text)),
            Err(e) => Err(not_utf8(path, e)),
        },
        Err(e) => Err(Failure::Usage(format!("cannot read `{}`: {e}", path.display()))),
    }
}

/// A diagnostic at the first byte of `path` that is not UTF-8.
fn not_utf8(path: &Path, e: std::string::FromUtf8Error) -> Failure {
    let at = e.utf8_error().valid_up_to();
    let byte = e.as_bytes()[at];
    // In the lossy text every byte before `at` is where it was; the bad one is U+FFFD.
    let source = Source::new(path.display().to_string(), String::from_utf8_lossy(e.as_bytes()).into_owned());
    let diagnostic = Diagnostic::new(Code::SpecNotUtf8, format!("the file is not UTF-8 text: byte 0x{byte:02x}"))
        .at(at..at + '\u{fffd}'.len_utf8(), "not UTF-8")
        .help("save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`); workflow files are UTF-8 text");
    Failure::Invalid { source, diagnostics: vec![diagnostic] }
}

/// `NAME=VALUE`, the value typed as an integer, float, boolean or string.
fn parse_var(pair: &str) -> Result<(String, serde_json::Value), Failure> {
    let Some((name, value)) = pair.split_once('=') else {
        return Err(Failure::Usage(format!("`-v {pair}` needs the form NAME=VALUE")));
    };
    let value = if let Ok(n) = value.parse::<i64>() {
        n.into()
    } else if let Ok(b) = value.parse::<bool>() {
        b.into()
    } else if let Some(f) = value.parse::<f64>().ok().filter(|f| f.is_finite()) {
        f.into()
    } else {
        value.into()
    };
    Ok((name.trim().to_owned(), value))
}

/// The worker described by `--cpus/--gpus/--memory/--resource`, if any
/// flag is given: what a flag leaves out is unknown, so it limits nothing.
pub fn worker(args: &WorkerArgs) -> Result<Option<Capacity>, Failure> {
    if args.cpus.is_none() && args.gpus.is_none() && args.memory.is_none() && args.resources.is_empty() {
        return Ok(None);
    }
    let amount = |flag: &str, v: Option<f64>| {
        v.map(|v| {
            Amount::from_f64(v).ok_or_else(|| Failure::Usage(format!("`--{flag} {v}` must be a non-negative number")))
        })
        .transpose()
    };
    let memory = args.memory_bytes().map_err(Failure::Usage)?;
    let custom = if args.resources.is_empty() { None } else { Some(custom_resources(&args.resources)?) };
    Ok(Some(Capacity { cpus: amount("cpus", args.cpus)?, gpus: amount("gpus", args.gpus)?, memory, custom }))
}

/// `--resource NAME=AMOUNT` flags as a map.
pub fn custom_resources(pairs: &[String]) -> Result<BTreeMap<String, Amount>, Failure> {
    let mut custom = BTreeMap::new();
    for pair in pairs {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| Failure::Usage(format!("`--resource {pair}` needs the form NAME=AMOUNT")))?;
        let value = value.parse::<f64>().ok().and_then(Amount::from_f64);
        let value = value
            .ok_or_else(|| Failure::Usage(format!("`--resource {pair}`: the amount must be a non-negative number")))?;
        custom.insert(name.to_owned(), value);
    }
    Ok(custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_values_are_typed() {
        let v = |s: &str| parse_var(s).ok().map(|(_, v)| v);
        assert_eq!(v("a=5"), Some(5.into()));
        assert_eq!(v("a=0.5"), Some(0.5.into()));
        assert_eq!(v("a=true"), Some(true.into()));
        assert_eq!(v("a=x=y"), Some("x=y".into()));
        assert!(parse_var("novalue").is_err());
    }
}
