//! Every relative link of the book (`docs/`) and the README reaches a file
//! that exists, and every `#anchor` a heading of the page it names, with
//! ids made from headings as mdBook makes them — checked without mdBook
//! (issue 27: `conditions.md` linked a page that does not exist).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use regex::Regex;

use crate::support::root;

/// The text of a page outside its fenced code blocks, line by line
/// (1-based), with inline code spans blanked.
fn prose(text: &str) -> Vec<(usize, String)> {
    let code = Regex::new("`[^`]*`").expect("regex");
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m => fence = None,
            (None, None) => lines.push((n + 1, code.replace_all(line, "").into_owned())),
            _ => {}
        }
    }
    lines
}

/// The ids mdBook gives the headings of `text`: the heading's text without
/// its markup, lowercased, spaces as `-`, only letters, digits, `_` and
/// `-` kept; a repeated id gets `-1`, `-2`, ….
fn anchors(text: &str) -> BTreeSet<String> {
    let link = Regex::new(r"\[([^\]]*)\]\([^)]*\)").expect("regex");
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut ids = BTreeSet::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        }
        let Some(heading) = line.strip_prefix('#').filter(|_| !fence) else { continue };
        let heading = link.replace_all(heading.trim_start_matches('#').trim(), "$1");
        let id = slug(&heading);
        let count = seen.entry(id.clone()).or_default();
        ids.insert(if *count == 0 { id.clone() } else { format!("{id}-{count}") });
        *count += 1;
    }
    ids
}

/// mdBook's `normalize_id`.
fn slug(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// `path` with `.` and `..` resolved, without touching the file system.
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The pages checked: the README and every page of the book.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs_err::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut pages = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut pages);
    pages.sort();
    pages
}

/// What is wrong with the relative links of `page`, one line each.
fn broken_links(page: &Path) -> Vec<String> {
    let link = Regex::new(r#"\]\(([^)\s]+)(?:\s+"[^"]*")?\)"#).expect("regex");
    let text = fs_err::read_to_string(page).expect("read page");
    let shown = page.strip_prefix(root()).unwrap_or(page).display().to_string();
    let mut broken = Vec::new();
    for (n, line) in prose(&text) {
        for target in link.captures_iter(&line).map(|c| c[1].to_owned()) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = target.split_once('#').map_or((target.as_str(), None), |(p, a)| (p, Some(a)));
            let file = match path {
                "" => page.to_path_buf(),
                path => clean(&page.parent().expect("page dir").join(path)),
            };
            if !file.exists() {
                broken.push(format!("{shown}:{n}: `{target}`: no file {}", file.display()));
            } else if let Some(anchor) = anchor.filter(|_| file.extension().is_some_and(|e| e == "md")) {
                let ids = anchors(&fs_err::read_to_string(&file).expect("read target"));
                if !ids.contains(anchor) {
                    broken.push(format!("{shown}:{n}: `{target}`: no heading with the id `{anchor}`"));
                }
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_and_anchor_of_the_docs_resolves() {
    let broken: Vec<String> = pages().iter().flat_map(|page| broken_links(page)).collect();
    assert!(broken.is_empty(), "{} broken links:\n{}", broken.len(), broken.join("\n"));
}

/// The checker finds what it guards against: a missing page, a missing
/// anchor, and accepts ids made as mdBook makes them.
#[test]
fn the_link_check_catches_missing_pages_and_anchors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("page.md");
    fs_err::write(dir.path().join("other.md"), "# Other\n## `flow log` and the formats\n## Again\n## Again\n")
        .expect("write");
    fs_err::write(
        &page,
        "See [gone](gone.md), [other](other.md#flow-log-and-the-formats), [again](other.md#again-1),\n\
         [no anchor](other.md#formats), `[code](gone.md)` and [web](https://example.org/x.md).\n\
         ```md\n[in a block](gone.md)\n```\n",
    )
    .expect("write");
    let broken: Vec<String> =
        broken_links(&page).iter().map(|b| b.split_once(": ").expect("location").1.to_owned()).collect();
    assert_eq!(
        broken,
        [
            format!("`gone.md`: no file {}", dir.path().join("gone.md").display()),
            "`other.md#formats`: no heading with the id `formats`".to_owned(),
        ]
    );
}

/// Issue 27: the book is built with one pinned pair of tools — the README
/// names it, and CI (`.ci/run`) installs the same pair.
#[test]
fn the_readme_and_ci_install_the_same_book_tools() {
    let install = Regex::new(r"cargo install --locked mdbook@[0-9.]+ mdbook-linkcheck@[0-9.]+").expect("regex");
    let pair = |path: &str| {
        let text = fs_err::read_to_string(root().join(path)).expect("readable");
        install.find(&text).map(|m| m.as_str().to_owned()).unwrap_or_else(|| panic!("{path} installs no pair"))
    };
    assert_eq!(pair("README.md"), "cargo install --locked mdbook@0.4.52 mdbook-linkcheck@0.7.7");
    assert_eq!(pair(".ci/run"), pair("README.md"));
}
