//! What varies between runs, replaced by placeholders, so a test can state
//! the whole output it expects: run ids (`20261123-122534-966`) become
//! `[RUN]`, durations (`0.1s`, `12ms`, `1m01s`, `2h07m`) `[TIME]`, sizes from a KiB up
//! (`22.1 MiB`) `[SIZE]`, and the gaps between table columns one width, as
//! those widths follow the masked values, and socket addresses
//! (`127.0.0.1:40123`) `[ADDR]`. [`normalize_in`] also replaces the test's
//! directory with `[DIR]`, the `flow` binary with `[FLOW]` and this
//! machine's host name with `[HOST]`.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

static RUN_ID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b\d{8}-\d{6}-\d{3}\b").expect("run id pattern"));
static TIME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(\d+h\d{2}m|(\d+m)?\d+(\.\d+)?(s|ms|µs))\b").expect("time pattern"));
static SIZE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b\d+(\.\d+)? [KMG]iB\b").expect("size pattern"));
static ADDR: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b\d{1,3}(\.\d{1,3}){3}:\d+\b").expect("address pattern"));
static GAP: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(\S) {2,}").expect("gap pattern"));

/// `text` with run ids, durations, sizes and addresses masked and column gaps made two spaces wide.
pub fn normalize(text: &str) -> String {
    let text = RUN_ID.replace_all(text, "[RUN]");
    let text = ADDR.replace_all(&text, "[ADDR]");
    let text = TIME.replace_all(&text, "[TIME]");
    let text = SIZE.replace_all(&text, "[SIZE]");
    GAP.replace_all(&text, "$1  ").into_owned()
}

/// `text` with the `flow` binary replaced by `[FLOW]`, `dir` (as given and
/// canonical) by `[DIR]` and the host name (a whole word) by `[HOST]`, then [`normalize`]d.
pub fn normalize_in(text: &str, dir: &Path) -> String {
    static HOST: LazyLock<Option<Regex>> = LazyLock::new(|| {
        let name = fs_err::read_to_string("/proc/sys/kernel/hostname").ok()?;
        Regex::new(&format!(r"\b{}\b", regex::escape(name.trim()))).ok().filter(|_| !name.trim().is_empty())
    });
    let mut text = text.replace(&*super::process::flow_bin().to_string_lossy(), "[FLOW]");
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    for dir in [canonical.as_path(), dir] {
        text = text.replace(&*dir.to_string_lossy(), "[DIR]");
    }
    if let Some(host) = &*HOST {
        text = host.replace_all(&text, "[HOST]").into_owned();
    }
    normalize(&text)
}

#[test]
fn masks_what_varies_between_runs() {
    let text = "run 20261123-122534-966: 3 succeeded in 1.25s (12ms each), 22.1 MiB\nname    state\n";
    assert_eq!(normalize(text), "run [RUN]: 3 succeeded in [TIME] ([TIME] each), [SIZE]\nname  state\n");
    assert_eq!(normalize("joined: vm (127.0.0.1:40123)"), "joined: vm ([ADDR])");
    assert_eq!(normalize("in 1m01s, then 2h07m"), "in [TIME], then [TIME]");
    let dir = Path::new("/tmp/flow-xyz");
    assert_eq!(normalize_in("wrote /tmp/flow-xyz/out.txt\n", dir), "wrote [DIR]/out.txt\n");
}
