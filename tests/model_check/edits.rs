//! The edits between runs of the model check: what a user changes in the
//! files, the variables and the workflow text itself, and the strategies
//! that draw them.

use proptest::prelude::*;

use super::sources::{Sources, WORDS};
use super::workflows::{Draw, Shape, shape};

/// The tasks an edit may rename: no other task names them (`a` and `b`
/// are named by `for_each` and `after`, and the oracle knows `h` by name).
pub const RENAMED: [&str; 4] = ["c", "d", "e", "n"];

/// The workflow text `text` with the tasks `src` renames renamed and,
/// with `src.reversed`, its tasks in the reverse order.
pub fn rewrite(text: &str, src: &Sources) -> String {
    let mut text = text.to_owned();
    for task in &src.renamed {
        text = text.replace(&format!("name = \"{task}\"\n"), &format!("name = \"{task}_r\"\n"));
    }
    if !src.reversed {
        return text;
    }
    let mut parts: Vec<&str> = text.split("[[tasks]]\n").collect();
    let head = parts.remove(0);
    let tasks: String = parts.iter().rev().map(|t| format!("[[tasks]]\n{}\n", t.trim_end())).collect();
    format!("{head}{tasks}")
}

/// A change between two runs.
#[derive(Clone, Debug)]
pub enum Edit {
    /// Run again with nothing changed.
    Nothing,
    /// Insert a word at the top of the list (grows the list and what is made from it).
    InsertTop(usize),
    /// Append a word.
    Append(usize),
    /// Remove the line at a position.
    Remove(usize),
    /// Swap a line with the next one.
    Swap(usize),
    /// Replace a line by another word.
    Replace(usize, usize),
    /// `-v n=…` (the length of the `range`).
    SetN(u8),
    /// `-v tag=…` (used in commands).
    SetTag(u8),
    /// New contents of `in/common.txt`.
    Common(u8),
    /// Rewrite every source file with the same bytes.
    Touch,
    /// Edit `s.sh` (false) or `sub/s.sh` (true).
    Script(bool, u8),
    /// Delete an output (chosen among the outputs on disk).
    DeleteOutput(usize),
    /// Change an output's bytes by hand.
    CorruptOutput(usize),
    /// Make one instance (chosen among the instances) fail in the next run; fixed after it.
    Fail(usize),
    /// Move the whole directory elsewhere.
    Move,
    /// `kill -9` the run this many milliseconds after it starts.
    Kill(u16),
    /// Ctrl-C (SIGINT) the run this many milliseconds after it starts.
    Interrupt(u16),
    /// `-v b_on=…` (`b`'s condition, when it has one).
    SetBOn(bool),
    /// `-v cut=…` (`b`'s per-instance condition, when it has one).
    Cut(u8),
    /// Run with `--force`.
    Force,
    /// Run with `--only` one of the tasks (chosen among them).
    Only(usize),
    /// List the index in `poison.txt`, or take it out.
    Poison(u8),
    /// Convert the workflow file between TOML and YAML.
    Syntax,
    /// New contents of `in/stdin.txt` (feature `stdin`).
    Stdin(u8),
    /// New contents of `env.sh` (feature `setup`).
    Setup(u8),
    /// Rename the include's namespace (`as`), when it has one.
    Namespace,
    /// The include's `vars = { word = … }`.
    IncludeVar(u8),
    /// Edit the included file (0: its command, 1: its default for the
    /// variable the include sets) or what it reads (2: `lib/in.txt`).
    Included(usize, u8),
    /// Rename one of the tasks that no other task names (or back).
    Rename(usize),
    /// Write the tasks in the reverse order (or back).
    Reorder,
    /// Point the link `in/link.txt` (0) or `data/ln` (1) to the other target.
    Retarget(usize),
    /// New contents of the link target `in/t0.txt` (0) or `in/t1.txt` (1).
    Target(usize, u8),
    /// New contents of `data/one.txt`.
    DataFile(u8),
    /// Add `data/extra.txt`, or remove it.
    DataExtra,
    /// Run with `--listen` and `--no-local-worker` (or, with `true`,
    /// `--profile remote`, which says the same), on one `flow worker`.
    Remote(bool),
    /// The workers have this much `licence` (`--resource`; none at 0).
    Licence(u8),
    /// The workers' memory ([`super::sources::Sources::memory`]).
    Memory(u8),
    /// Run once with this option.
    Policy(Policy),
    /// Two edits before one run.
    Both(Box<Edit>, Box<Edit>),
}

/// An option of one run about failures and stale outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// `--keep-going`: what the workflow does anyway (its `max_fails` is 50).
    KeepGoing,
    /// `--max-fails N`.
    MaxFails(u8),
    /// `--keep-stale-outputs`.
    KeepStale,
}

impl Policy {
    pub fn args(self) -> Vec<String> {
        match self {
            Policy::KeepGoing => vec!["--keep-going".to_owned()],
            Policy::MaxFails(n) => vec!["--max-fails".to_owned(), n.to_string()],
            Policy::KeepStale => vec!["--keep-stale-outputs".to_owned()],
        }
    }
}

impl Edit {
    /// The edits this one makes, in order.
    pub fn parts(&self) -> Vec<Edit> {
        match self {
            Edit::Both(a, b) => [a.parts(), b.parts()].concat(),
            e => vec![e.clone()],
        }
    }
}

/// One edit, not two at once.
fn single() -> impl Strategy<Value = Edit> {
    let w = 0..WORDS.len();
    prop_oneof![
        1 => Just(Edit::Nothing),
        2 => w.clone().prop_map(Edit::InsertTop),
        1 => w.clone().prop_map(Edit::Append),
        2 => (0..6usize).prop_map(Edit::Remove),
        1 => (0..6usize).prop_map(Edit::Swap),
        1 => (0..6usize, w).prop_map(|(i, j)| Edit::Replace(i, j)),
        1 => (0..6usize).prop_map(|i| Edit::Replace(i, WORDS.len() - 1)),
        2 => (1..=5u8).prop_map(Edit::SetN),
        1 => (0..3u8).prop_map(Edit::SetTag),
        2 => (0..3u8).prop_map(Edit::Common),
        1 => Just(Edit::Touch),
        2 => (any::<bool>(), 0..3u8).prop_map(|(sub, v)| Edit::Script(sub, v)),
        2 => (0..20usize).prop_map(Edit::DeleteOutput),
        2 => (0..20usize).prop_map(Edit::CorruptOutput),
        1 => (0..20usize).prop_map(Edit::Fail),
        1 => Just(Edit::Move),
        1 => (0..150u16).prop_map(Edit::Kill),
        1 => (0..150u16).prop_map(Edit::Interrupt),
        3 => any::<bool>().prop_map(Edit::SetBOn),
        2 => (0..4u8).prop_map(Edit::Cut),
        1 => Just(Edit::Force),
        1 => (0..8usize).prop_map(Edit::Only),
        4 => (1..=4u8).prop_map(Edit::Poison),
        1 => Just(Edit::Syntax),
        1 => (0..3u8).prop_map(Edit::Stdin),
        1 => (0..3u8).prop_map(Edit::Setup),
        1 => Just(Edit::Namespace),
        1 => (0..3u8).prop_map(Edit::IncludeVar),
        2 => (0..3usize, 0..3u8).prop_map(|(part, v)| Edit::Included(part, v)),
        1 => (0..RENAMED.len()).prop_map(Edit::Rename),
        1 => Just(Edit::Reorder),
        2 => (0..2usize).prop_map(Edit::Retarget),
        1 => (0..2usize, 0..2u8).prop_map(|(i, v)| Edit::Target(i, v)),
        1 => (0..2u8).prop_map(Edit::DataFile),
        1 => Just(Edit::DataExtra),
        1 => any::<bool>().prop_map(Edit::Remote),
        1 => (0..3u8).prop_map(Edit::Licence),
        1 => (0..3u8).prop_map(Edit::Memory),
        2 => prop_oneof![
            Just(Policy::KeepGoing),
            Just(Policy::MaxFails(1)),
            Just(Policy::MaxFails(50)),
            Just(Policy::KeepStale)
        ]
        .prop_map(Edit::Policy),
    ]
}

pub fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        8 => single(),
        1 => (single(), single()).prop_map(|(a, b)| Edit::Both(Box::new(a), Box::new(b))),
    ]
}

/// Whether `draw` lets `edit` (and what it holds) be drawn.
fn drawn(draw: &Draw, edit: &Edit) -> bool {
    match edit {
        Edit::Kill(_) => draw.has("kill"),
        Edit::Interrupt(_) => draw.has("interrupt"),
        Edit::Force | Edit::Only(_) => draw.has("force"),
        Edit::Fail(_) => draw.has("fail"),
        Edit::CorruptOutput(_) => draw.has("corrupt"),
        Edit::InsertTop(_) => draw.has("insert"),
        Edit::Syntax => draw.has("syntax"),
        Edit::Namespace | Edit::IncludeVar(_) | Edit::Included(..) => draw.has("include"),
        Edit::Rename(_) => draw.has("rename"),
        Edit::Reorder => draw.has("reorder"),
        Edit::Remote(_) => draw.has("remote"),
        Edit::Licence(_) | Edit::Memory(_) => draw.has("worker"),
        Edit::Policy(_) => draw.has("policy"),
        Edit::Retarget(_) | Edit::Target(..) | Edit::DataFile(_) | Edit::DataExtra => draw.has("tree"),
        Edit::Both(a, b) => draw.has("both") && drawn(draw, a) && drawn(draw, b),
        _ => true,
    }
}

/// A workflow and the edits made before each rerun.
pub fn sequence(
    edits: std::ops::RangeInclusive<usize>,
    draw: &Draw,
) -> impl Strategy<Value = (Shape, Vec<Edit>)> + use<> {
    let d = draw.clone();
    let edits =
        proptest::collection::vec(edit().prop_filter("left out by FLOW_MODEL_SKIP", move |e| drawn(&d, e)), edits);
    (shape(draw), edits)
}
