//! [`Resolved`]: one `[[tasks]]` entry with its template and `[defaults]`
//! folded in, as the passes after layering read it.

use std::ops::Range;

use crate::spec::{Sp, TaskSpec};

/// A task with its template and the defaults folded in.
#[derive(Debug)]
pub struct Resolved {
    /// The task's name.
    pub name: String,
    /// Span of the name value.
    pub name_span: Range<usize>,
    /// All keys after layering.
    pub spec: TaskSpec,
}

impl Resolved {
    /// The template keys rendered only when an instance starts: `command`,
    /// `argv`, `cwd`, `stdin`, `stdout`, `stderr`, `setup` and `env.NAME`, with their text.
    pub fn run_time_keys(&self) -> Vec<(String, Sp<String>)> {
        let spec = &self.spec;
        let single = [
            ("command", &spec.command),
            ("cwd", &spec.cwd),
            ("stdin", &spec.stdin),
            ("stdout", &spec.stdout),
            ("stderr", &spec.stderr),
            // A `when` left by the condition pass names the instance: it is
            // rendered as it starts, so a misspelt name is caught here.
            ("when", &spec.when),
        ];
        let mut keys: Vec<(String, Sp<String>)> =
            single.into_iter().filter_map(|(key, s)| Some((key.to_owned(), s.clone()?))).collect();
        keys.extend(spec.argv.iter().flat_map(|l| l.value.iter()).map(|s| ("argv".to_owned(), s.clone())));
        keys.extend(spec.setup.iter().flat_map(|l| l.value.iter()).map(|s| ("setup".to_owned(), s.clone())));
        keys.extend(
            spec.env
                .iter()
                .flat_map(|e| e.value.iter())
                .map(|(k, v)| (format!("env.{k}"), Sp::new(v.value.0.clone(), v.span.clone()))),
        );
        keys
    }

    /// The key holding the file of a nested task (`for_each` with a file expansion).
    pub fn nested_file(&self) -> Option<&Sp<String>> {
        let spec = &self.spec;
        spec.each_line.as_ref().or(spec.from_json.as_ref()).or(spec.each_chunk.as_ref().map(|c| &c.value.file))
    }
}
