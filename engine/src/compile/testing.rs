//! A workflow compiled from TOML text, for the unit tests of the layers
//! that read graphs.

use super::{Options, compile};
use crate::diag::Source;
use crate::ir::Graph;
use crate::spec::{Format, parse};

/// `text` as `workflow.toml`, compiled with its base directory in a
/// scratch directory; panics on a workflow that does not compile.
pub(crate) fn graph(text: &str) -> Graph {
    let source = Source::new("workflow.toml", text);
    let workflow = parse(&source, Format::Toml).expect("parses");
    let dir = tempfile::tempdir().expect("temp dir");
    compile(&workflow, &source, &Options { base_dir: dir.path().to_path_buf(), ..Options::default() })
        .expect("compiles")
}
