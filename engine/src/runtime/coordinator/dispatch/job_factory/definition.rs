//! A job's definition: the text its fingerprint is made of.

use std::path::{Path, PathBuf};

use crate::runtime::protocol::job::{JobCommand, relative};

/// What determines a job's result besides its input files, as one text:
/// also the item, which reaches the task through `FLOW_ITEM` or the chunk
/// file even when no template mentions it; the setup lines and the
/// container image's identity when the task has them (not the engine: the
/// same image gives the same result under another engine), and the files
/// its stdout and stderr go to when they go to files.
/// Paths inside the workflow directory are written relative to it.
#[allow(clippy::too_many_arguments)]
pub(super) fn definition(
    command: &JobCommand,
    base: &Path,
    cwd: &Path,
    env: &[(String, String)],
    stdin: Option<&Path>,
    outputs: &[PathBuf],
    item: &str,
    setup: &[String],
    image: Option<&str>,
    streams: [Option<&Path>; 2],
) -> String {
    let text = |p: &Path| relative(p, base).to_string_lossy().into_owned();
    let definition = Definition {
        command: match command {
            JobCommand::Shell(s) => DefinitionCommand::Shell(s),
            JobCommand::Argv(a) => DefinitionCommand::Argv(a),
        },
        container: image,
        cwd: text(cwd),
        env,
        item,
        outputs: outputs.iter().map(|p| text(p)).collect(),
        setup,
        stderr: streams[1].map(text),
        stdin: stdin.map(text),
        stdout: streams[0].map(text),
    };
    // Strings, lists and pairs of strings always serialize.
    serde_json::to_string(&definition).unwrap_or_default()
}

/// The fields of a job's [`definition`], in the order of their names: the
/// text is what a JSON object with these keys has always been written as,
/// so the fingerprints of earlier runs still match.
/// `setup`, `container`, `stdout` and `stderr` are written only when a
/// task has them, so the fingerprints of other tasks stay as they were.
#[derive(serde::Serialize)]
struct Definition<'a> {
    command: DefinitionCommand<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    container: Option<&'a str>,
    cwd: String,
    env: &'a [(String, String)],
    item: &'a str,
    outputs: Vec<String>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    setup: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    stderr: Option<String>,
    stdin: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stdout: Option<String>,
}

/// A job's command inside its [`Definition`]: the shell text, or the argv list.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum DefinitionCommand<'a> {
    Shell(&'a str),
    Argv(&'a [String]),
}
