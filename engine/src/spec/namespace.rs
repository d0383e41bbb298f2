//! [`graft`]: an included file's `vars`, `templates`, `tasks` and
//! `defaults` brought into the including file under a namespace, its names
//! prefixed and its paths made relative to the including file.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use super::sp::Sp;
use super::workflow::{TaskSpec, Workflow};

/// What an include brings in: the file read, its namespace, its directory
/// relative to the including file's, the values the include gives its
/// variables, and the span of the include.
pub(crate) struct Graft<'a> {
    /// The included file, its own includes already grafted into it.
    pub(crate) file: Workflow,
    /// The namespace (`ligen`).
    pub(crate) namespace: &'a str,
    /// The file's directory relative to the including file's (`lib`), or empty.
    pub(crate) dir: &'a Path,
    /// The include's `vars`.
    pub(crate) vars: BTreeMap<String, Sp<serde_json::Value>>,
    /// The include entry's span.
    pub(crate) at: Range<usize>,
}

/// Moves `graft`'s file into `into`: task `score` becomes `ns.score`,
/// template `gpu` becomes `ns.gpu`, and so do the names its `after`, `use`
/// and `for_each` give; relative paths gain the file's directory, and tasks
/// run there unless they say otherwise; its variables become `vars.ns`
/// (only its own tasks see them as `vars`), and its `defaults` apply to
/// its own tasks.
pub(crate) fn graft(into: &mut Workflow, graft: Graft) {
    let Graft { file, namespace, dir, vars, at } = graft;
    let prefix = format!("{namespace}.");
    let dir = dir.to_string_lossy().into_owned();
    let place = |spec: &mut TaskSpec| {
        rename(spec, &prefix);
        rebase(spec, &dir);
    };
    for mut task in file.tasks {
        place(&mut task.value);
        if let Some(name) = &mut task.value.name {
            name.value = format!("{prefix}{}", name.value);
        }
        into.tasks.push(task);
    }
    for (name, mut template) in file.templates {
        place(&mut template.value);
        into.templates.insert(format!("{prefix}{name}"), template);
    }
    for (name, mut defaults) in file.namespace_defaults {
        place(&mut defaults.value);
        into.namespace_defaults.insert(format!("{prefix}{name}"), defaults);
    }
    let mut defaults = file.defaults.unwrap_or_else(|| Sp::new(TaskSpec::default(), at.clone()));
    place(&mut defaults.value);
    if defaults.value.cwd.is_none() && !dir.is_empty() {
        defaults.value.cwd = Some(Sp::new(dir.clone(), at.clone()));
    }
    into.namespace_defaults.insert(namespace.to_owned(), defaults);

    let mut values: serde_json::Map<String, serde_json::Value> =
        file.vars.into_iter().map(|(k, v)| (k, v.value)).collect();
    values.extend(vars.into_iter().map(|(k, v)| (k, v.value)));
    into.vars.insert(namespace.to_owned(), Sp::new(serde_json::Value::Object(values), at));
}

/// Prefixes the task names `spec` refers to with `prefix`.
fn rename(spec: &mut TaskSpec, prefix: &str) {
    let names = spec.after.iter_mut().flat_map(|a| a.value.iter_mut()).map(|a| &mut a.task);
    for name in names.chain(&mut spec.use_template).chain(&mut spec.for_each) {
        name.value = format!("{prefix}{}", name.value);
    }
}

/// Makes the relative paths of `spec` relative to the including file by
/// putting `dir` before them. A path that starts with `/` or `~` is
/// absolute, and one that starts with a template expression (`{{
/// vars.data }}/x`) is taken as written: its value may come from the
/// including file.
fn rebase(spec: &mut TaskSpec, dir: &str) {
    if dir.is_empty() {
        return;
    }
    let paths = spec.inputs.iter_mut().chain(&mut spec.outputs).flat_map(|l| l.value.iter_mut());
    let singles = [&mut spec.cwd, &mut spec.stdin, &mut spec.each_line, &mut spec.from_json].into_iter().flatten();
    let sinks =
        [&mut spec.stdout, &mut spec.stderr].into_iter().flatten().filter(|s| !matches!(&*s.value, "log" | "none"));
    let chunk = spec.each_chunk.iter_mut().map(|c| &mut c.value.file);
    // An image file (`.sif`), not an image name, is a path.
    let image = spec.container.iter_mut().filter(|c| c.value.ends_with(".sif") && !c.value.contains("://"));
    for path in paths.chain(singles).chain(sinks).chain(chunk).chain(image) {
        if !(path.value.starts_with(['/', '~']) || path.value.starts_with("{{")) {
            path.value = if path.value == "." { dir.to_owned() } else { format!("{dir}/{}", path.value) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str) -> Sp<TaskSpec> {
        Sp::new(TaskSpec { name: Some(Sp::new(name.into(), 0..0)), ..TaskSpec::default() }, 0..0)
    }

    fn strings(list: &[&str]) -> Option<Sp<Vec<Sp<String>>>> {
        Some(Sp::new(list.iter().map(|s| Sp::new((*s).to_owned(), 0..0)).collect(), 0..0))
    }

    #[test]
    fn names_and_paths_move_under_the_namespace() {
        let mut score = task("score");
        let dock = super::super::After { task: Sp::new("dock[{{ index }}]".into(), 0..0), on: None };
        score.value.after = Some(Sp::new(vec![dock], 0..0));
        score.value.use_template = Some(Sp::new("gpu".into(), 0..0));
        score.value.inputs = strings(&["data/x.txt", "/abs/y", "{{ vars.z }}"]);
        score.value.stdout = Some(Sp::new("log".into(), 0..0));
        score.value.stderr = Some(Sp::new("err.txt".into(), 0..0));
        let mut file = Workflow { tasks: vec![score], ..Workflow::default() };
        file.templates.insert("gpu".into(), Sp::new(TaskSpec::default(), 0..0));
        file.vars.insert("receptor".into(), Sp::new("a.pdb".into(), 0..0));
        let vars = BTreeMap::from([("receptor".to_owned(), Sp::new("b.pdb".into(), 0..0))]);
        let mut root = Workflow::default();
        graft(&mut root, Graft { file, namespace: "lg", dir: Path::new("lib"), vars, at: 3..9 });

        let t = &root.tasks[0].value;
        let value = |s: &Option<Sp<String>>| s.as_ref().map(|s| s.value.clone());
        assert_eq!(value(&t.name).as_deref(), Some("lg.score"));
        assert_eq!(value(&t.use_template).as_deref(), Some("lg.gpu"));
        let list = |l: &Option<Sp<Vec<Sp<String>>>>| {
            l.iter().flat_map(|l| l.value.iter().map(|s| s.value.clone())).collect::<Vec<_>>()
        };
        let after: Vec<_> = t.after.iter().flat_map(|l| l.value.iter().map(|a| a.task.value.clone())).collect();
        assert_eq!(after, ["lg.dock[{{ index }}]"]);
        assert_eq!(list(&t.inputs), ["lib/data/x.txt", "/abs/y", "{{ vars.z }}"]);
        assert_eq!(value(&t.stdout).as_deref(), Some("log"));
        assert_eq!(value(&t.stderr).as_deref(), Some("lib/err.txt"));
        assert!(root.templates.contains_key("lg.gpu"));
        assert_eq!(root.vars["lg"].value, serde_json::json!({ "receptor": "b.pdb" }));
        let defaults = &root.namespace_defaults["lg"];
        assert_eq!(value(&defaults.value.cwd).as_deref(), Some("lib"));
        assert_eq!(defaults.span, 3..9);
    }
}
