//! A task `y` of the model check reading a directory and a symlink:
//! `inputs = ["data", "in/link.txt"]`, where `data/` holds a file, a
//! symlink and, at times, one more file, and `in/link.txt` points to one
//! of two targets whose contents may be the same. The edits retarget the
//! links, edit the targets and the file, and add or remove the extra one.
//! Its key is what flow hashes: of the link input its contents, of the
//! directory every entry's path, a file's contents, a link's target.

use super::sources::Sources;

/// The extra file of `data/`, there only at times.
pub const EXTRA: &str = "data/extra.txt";

/// The task, given the gate that makes it fail, its label and the log.
pub fn task(gate: &str, label: &str, log: &str) -> String {
    let listing = "cd data && find . | LC_ALL=C sort | while read -r f; do if [ -L \"$f\" ]; then echo \"$f -> $(readlink \"$f\")\"; elif [ -f \"$f\" ]; then echo \"$f\"; cat \"$f\"; fi; done";
    format!(
        "\n[[tasks]]\nname = \"y\"\ninputs = [\"data\", \"in/link.txt\"]\noutputs = [\"y.txt\"]\ncommand = '''{gate} && ( cat in/link.txt; {listing} ) > y.txt && echo \"{label}|y.txt|tree=$(cksum < y.txt)\" >> {log}'''\n"
    )
}

/// The regular files: path → contents.
pub fn files(src: &Sources) -> Vec<(&'static str, String)> {
    let mut files = vec![
        ("in/t0.txt", format!("target {}\n", src.targets[0])),
        ("in/t1.txt", format!("target {}\n", src.targets[1])),
        ("data/one.txt", format!("one {}\n", src.data)),
    ];
    if src.extra {
        files.push((EXTRA, "extra\n".to_owned()));
    }
    files
}

/// The symlinks: path → target.
pub fn links(src: &Sources) -> Vec<(&'static str, String)> {
    vec![("in/link.txt", format!("t{}.txt", src.links[0])), ("data/ln", format!("../in/t{}.txt", src.links[1]))]
}
