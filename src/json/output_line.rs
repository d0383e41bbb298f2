//! [`OutputLine`] and [`OutputChunk`]: the lines of `flow log grep --json`,
//! and the output records of `flow log export`, `cat` and `tail --json`.

use flow_engine::log::OutputStream;
use schemars::JsonSchema;
use serde::Serialize;

use super::TaskRef;

/// A line of `flow log grep --json`: one line an attempt wrote.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OutputLine<'a> {
    /// Which instance.
    #[serde(flatten)]
    pub task: TaskRef,
    /// The attempt that wrote it, 0 first.
    pub attempt: u32,
    /// The stream it went to.
    #[serde(serialize_with = "stream_name")]
    #[schemars(with = "Stream")]
    pub stream: OutputStream,
    /// The line, without its newline.
    pub line: &'a str,
}

/// A record of the output log, as `flow log export --json` (and `cat`,
/// `tail`) print it: a chunk as an attempt wrote it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OutputChunk<'a> {
    /// Which instance.
    #[serde(flatten)]
    pub task: TaskRef,
    /// The attempt that wrote it, 0 first.
    pub attempt: u32,
    /// The stream it went to.
    #[serde(serialize_with = "stream_name")]
    #[schemars(with = "Stream")]
    pub stream: OutputStream,
    /// When it was written, µs since the Unix epoch.
    pub time_us: u64,
    /// The bytes as written, invalid UTF-8 replaced by `�`.
    pub data: &'a str,
}

/// The words for an output stream, as [`OutputStream::as_str`] writes them.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code, reason = "only its schema is used")]
enum Stream {
    /// The task's standard output.
    Stdout,
    /// The task's standard error.
    Stderr,
    /// flow's own messages about the task.
    System,
    /// A cluster allocation's output.
    Allocation,
}

fn stream_name<S: serde::Serializer>(stream: &OutputStream, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(stream.as_str())
}
