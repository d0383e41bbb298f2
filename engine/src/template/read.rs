//! `read(path)`: the text of a file, for a `when` decided once a task of the
//! run has written the file. Only the renderers made for `when` have it
//! ([`super::Renderer::reading`], [`super::Renderer::recording`]); in any
//! other key `read` is an unknown function.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use minijinja::{Environment, Error, ErrorKind};

use crate::text_file::read_text;

/// The name of the function, as templates call it.
pub const READ: &str = "read";

/// The paths `read` was called with, in call order, as written.
#[derive(Debug, Clone, Default)]
pub struct Reads(Arc<Mutex<Vec<String>>>);

impl Reads {
    /// Takes the paths recorded since the last call.
    pub fn take(&self) -> Vec<String> {
        self.0.lock().map(|mut paths| std::mem::take(&mut *paths)).unwrap_or_default()
    }

    fn push(&self, path: &str) {
        if let Ok(mut paths) = self.0.lock() {
            paths.push(path.to_owned());
        }
    }
}

/// Registers a `read` that returns the text of the file at `path` (from
/// `base`) without its final line break, and records the path in `reads`.
/// It reads what an include would ([`read_text`]): a FIFO or a device is
/// an error, not a wait.
pub(super) fn register_reading(env: &mut Environment<'static>, base: PathBuf, reads: Reads) {
    env.add_function(READ, move |path: String| {
        reads.push(&path);
        read_text(&base.join(&path))
            .map(|text| without_final_newline(&text).to_owned())
            .map_err(|why| Error::new(ErrorKind::InvalidOperation, format!("cannot read `{path}`: {why}")))
    });
}

/// Registers a `read` that only records its path in `reads` and returns
/// empty text: the file is not final before the run.
pub(super) fn register_recording(env: &mut Environment<'static>, reads: Reads) {
    env.add_function(READ, move |path: String| {
        reads.push(&path);
        String::new()
    });
}

/// `text` without one final `\n` (or `\r\n`).
fn without_final_newline(text: &str) -> &str {
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.strip_suffix('\r').unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::Renderer;

    #[test]
    fn one_final_line_break_is_dropped() {
        assert_eq!(without_final_newline("yes\n"), "yes");
        assert_eq!(without_final_newline("yes\r\n"), "yes");
        assert_eq!(without_final_newline("a\n\n"), "a\n");
        assert_eq!(without_final_newline("no"), "no");
    }

    #[test]
    fn reading_returns_the_text_and_records_the_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("qc")).expect("dir");
        std::fs::write(dir.path().join("qc/pass.txt"), "yes\n").expect("write");
        let reads = Reads::default();
        let mut r = Renderer::reading(dir.path().to_path_buf(), reads.clone());
        let scope = minijinja::Value::from(());
        let out = r.render_str("{{ read('qc/pass.txt') == 'yes' }}", &scope).expect("renders");
        assert_eq!(out, "True");
        assert_eq!(reads.take(), ["qc/pass.txt"]);
        let err = r.render_str("{{ read('qc/gone.txt') }}", &scope).expect_err("missing file");
        assert!(err.to_string().contains("cannot read `qc/gone.txt`: no such file"), "{err}");
    }

    #[test]
    fn recording_reads_nothing_and_the_default_renderer_has_no_read() {
        let reads = Reads::default();
        let mut r = Renderer::recording(reads.clone());
        let scope = minijinja::Value::from(());
        assert_eq!(r.render_str("{{ read('qc/' ~ 'a.txt') }}", &scope).expect("renders"), "");
        assert_eq!(reads.take(), ["qc/a.txt"]);
        let err = Renderer::default().render_str("{{ read('a') }}", &scope).expect_err("unknown");
        assert_eq!(err.kind(), ErrorKind::UnknownFunction);
    }
}
