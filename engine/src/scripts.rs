//! The scripts a command and its setup lines name: their words, split as
//! the shell splits them, resolved from the task's working directory. A
//! word counts when it names an executable file or one with a script's
//! extension, or follows a word that reads a file as a script (`.`,
//! `source`, `sh`, `bash`, …). The runtime hashes those inside the
//! workflow directory as implicit inputs of the task, and the compiler
//! makes the task wait for the task that writes one; `flow check` and
//! `flow plan --why` note those that look like scripts but cannot be
//! tracked. This module never renders templates and never runs anything.
//!
//! Design: the "what a fingerprint covers" section of `docs/guide/resume.md`.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::ir::{Command, Graph, GroupId};
use crate::paths::normalize;

/// File name extensions of scripts a command may name.
pub const SCRIPTS: &[&str] = &["py", "sh", "bash", "zsh", "r", "pl", "rb", "jl", "awk", "sed", "js", "lua", "tcl", "m"];

/// Words after which the next one is a file read as a script, whatever
/// its name: `. env`, `source env`, `sh run`, `bash run`.
const SOURCING: &[&str] = &[".", "source", "sh", "bash", "zsh", "dash", "ksh"];

/// How deep shell text inside a word (`sh -c "sh helper.sh"`) is split again.
const NESTING: u32 = 3;

/// What a task runs, as text: a shell command, or an argv.
#[derive(Debug, Clone, Copy)]
pub enum CommandText<'a> {
    /// Run with `sh -c`.
    Shell(&'a str),
    /// Run directly; an element may itself be shell text (`bash -c "…"`).
    Argv(&'a [String]),
}

/// One word of a command, quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word's text.
    pub text: String,
    /// Whether the shell changes it before use: it holds an unquoted or
    /// double-quoted `$` or a backtick, or starts with `~`.
    pub expands: bool,
}

/// A word that looks like a script but is not counted as an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untracked {
    /// The word as written.
    pub word: String,
    /// Why it is not tracked.
    pub why: UntrackedWhy,
}

/// Why a script word is not tracked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UntrackedWhy {
    /// The shell expands it (`$PWD/helper.sh`, `~/x.py`).
    Expands,
    /// No such file, seen from the task's working directory.
    Missing,
}

impl fmt::Display for Untracked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.why {
            UntrackedWhy::Expands => write!(f, "`{}` (the shell expands it)", self.word),
            UntrackedWhy::Missing => write!(f, "`{}` (no such file)", self.word),
        }
    }
}

/// The scripts of one command.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Scripts {
    /// Files inside the workflow directory it names, absolute and normalised.
    pub tracked: Vec<PathBuf>,
    /// Words that look like scripts but name no file flow can track.
    pub untracked: Vec<Untracked>,
}

/// The scripts `command` and the `setup` lines name, resolved from `cwd`
/// (absolute): a word counts when it names a regular file inside `base`
/// (the workflow directory), outside `base/.flow`, that is executable,
/// has a script's extension or follows a word of [`SOURCING`], and is not
/// in `declared` (the task's inputs and outputs, which are hashed or
/// written anyway). Words holding `{{` (an unrendered template) are skipped.
pub fn scripts(command: CommandText<'_>, setup: &[String], cwd: &Path, base: &Path, declared: &[PathBuf]) -> Scripts {
    let mut found = Scripts::default();
    let declared: Vec<PathBuf> = declared.iter().map(|p| lexical(p)).collect();
    let look = Look { cwd, base, declared: &declared };
    for words in texts(command, setup) {
        look.words(words, NESTING, &mut found);
    }
    found
}

/// The words of `command`, then of each `setup` line.
fn texts<'a>(command: CommandText<'a>, setup: &'a [String]) -> impl Iterator<Item = Vec<Word>> + 'a {
    let command = match command {
        CommandText::Shell(text) => shell_words(text),
        CommandText::Argv(args) => args.iter().map(|a| Word { text: a.clone(), expands: false }).collect(),
    };
    std::iter::once(command).chain(setup.iter().map(|line| shell_words(line)))
}

/// The files `command` and the `setup` lines (templates masked,
/// [`mask_templates`]) name as scripts, as the words [`scripts`] looks at,
/// whether they exist or not: paths from the workflow directory, given the
/// working directory `cwd` from there. The compiler matches them against
/// the outputs of other tasks.
pub fn named_scripts(command: CommandText<'_>, setup: &[String], cwd: &str) -> Vec<String> {
    let mut found = Vec::new();
    for words in texts(command, setup) {
        named_in(words, cwd, NESTING, &mut found);
    }
    found
}

fn named_in(words: Vec<Word>, cwd: &str, depth: u32, found: &mut Vec<String>) {
    let mut sourced = false;
    for word in words {
        let text = word.text.as_str();
        let after_sourcing = std::mem::replace(&mut sourced, is_sourcing(text));
        if text.is_empty() || text.starts_with('-') || text.contains("{{") || word.expands {
            continue;
        }
        if text.contains(char::is_whitespace) {
            if depth > 0 {
                named_in(shell_words(text), cwd, depth - 1, found);
            }
            continue;
        }
        if after_sourcing || looks_like_script(text) {
            let path = if cwd.is_empty() { text.to_owned() } else { format!("{cwd}/{text}") };
            let path = normalize(&path).into_owned();
            if !found.contains(&path) {
                found.push(path);
            }
        }
    }
}

/// Whether `word` makes the next word a file read as a script.
fn is_sourcing(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    SOURCING.contains(&name)
}

/// The note `flow check` prints for task `task` whose scripts `untracked`
/// are not tracked (not empty).
pub fn untracked_note(task: &str, untracked: &[Untracked]) -> String {
    let words: Vec<String> = untracked.iter().map(ToString::to_string).collect();
    let (words, one) = match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => (format!("{} and {last}", rest.join(", ")), "one"),
        _ => (words.concat(), "it"),
    };
    format!(
        "`{task}` runs {words}, which flow does not track: editing {one} does not rerun the task; \
         to track it, add its path from the workflow directory to the task's `inputs`"
    )
}

/// The tasks of `graph` (compiled from a workflow in `base`) whose command
/// names scripts flow will not track, with those scripts, as `flow check`
/// notes them: one list per task, judged from its unrendered templates (a
/// word holding a template is skipped; with a templated `cwd`, only words
/// the shell expands are listed). A file some task declares as an output is
/// not missing: it will be there when the task runs.
pub fn untracked_in(graph: &Graph, base: &Path) -> Vec<(GroupId, Vec<Untracked>)> {
    let outputs = declared_outputs(graph, base);
    let mut found = Vec::new();
    for (id, group) in graph.groups.iter().enumerate() {
        if !group.implicit_inputs {
            continue;
        }
        let template = &group.template;
        let (cwd, known) = match &template.cwd {
            Some(cwd) if mask_templates(cwd) != *cwd => (base.to_path_buf(), false),
            Some(cwd) => (base.join(cwd), true),
            None => (base.to_path_buf(), true),
        };
        let mut declared = outputs.clone();
        declared.extend(template.inputs.iter().map(|i| base.join(i)));
        let masked: Vec<String>;
        let command = match &template.command {
            Command::Shell(text) => {
                masked = vec![mask_templates(text)];
                CommandText::Shell(&masked[0])
            }
            Command::Argv(args) => {
                masked = args.iter().map(|a| mask_templates(a)).collect();
                CommandText::Argv(&masked)
            }
        };
        let setup: Vec<String> = template.setup.iter().map(|l| mask_templates(l)).collect();
        let mut untracked = scripts(command, &setup, &cwd, base, &declared).untracked;
        untracked.retain(|u| known || u.why == UntrackedWhy::Expands);
        if !untracked.is_empty() {
            found.push((GroupId(id as u32), untracked));
        }
    }
    found
}

/// The outputs the tasks of `graph` declare without a template, in `base`.
pub fn declared_outputs(graph: &Graph, base: &Path) -> Vec<PathBuf> {
    let outputs = graph.groups.iter().flat_map(|g| &g.template.outputs);
    outputs.filter(|o| mask_templates(o) == **o).map(|o| base.join(o)).collect()
}

/// `path` with `.` and `..` resolved in its text ([`normalize`]).
impl Scripts {
    /// The tracked scripts that are not in `declared` (a task's inputs and
    /// outputs, which are hashed or written anyway): what [`scripts`] finds
    /// given `declared`, from what it found given none. So the words of a
    /// command shared by many instances are looked up once, and each
    /// instance leaves out its own files.
    pub fn tracked_except(&self, declared: &[PathBuf]) -> Vec<PathBuf> {
        let declared: Vec<PathBuf> = declared.iter().map(|p| lexical(p)).collect();
        self.tracked.iter().filter(|p| !declared.contains(p)).cloned().collect()
    }
}

fn lexical(path: &Path) -> PathBuf {
    PathBuf::from(normalize(&path.to_string_lossy()).as_ref())
}

/// Where [`scripts`] looks words up.
struct Look<'a> {
    cwd: &'a Path,
    base: &'a Path,
    declared: &'a [PathBuf],
}

impl Look<'_> {
    /// Adds what `words` name to `found`.
    fn words(&self, words: Vec<Word>, depth: u32, found: &mut Scripts) {
        let mut sourced = false;
        for word in words {
            let after_sourcing = std::mem::replace(&mut sourced, is_sourcing(&word.text));
            self.resolve(word, after_sourcing, depth, found);
        }
    }

    /// Adds what `word` names to `found`; `sourced` when it follows a
    /// word of [`SOURCING`].
    fn resolve(&self, word: Word, sourced: bool, depth: u32, found: &mut Scripts) {
        let (cwd, base, declared) = (self.cwd, self.base, self.declared);
        let text = word.text.as_str();
        if text.is_empty() || text.starts_with('-') || text.contains("{{") {
            return;
        }
        let path = lexical(&cwd.join(text));
        // A declared input or output is hashed or stamped as such: no need to look.
        if !word.expands && declared.contains(&path) {
            return;
        }
        let inside = path.starts_with(base) && path != base && !path.starts_with(base.join(".flow"));
        let meta = (!word.expands).then(|| std::fs::metadata(&path).ok()).flatten();
        if let Some(meta) = &meta {
            if inside && meta.is_file() && (sourced || executable(meta) || has_script_extension(&path)) {
                if !found.tracked.contains(&path) && !declared.contains(&path) {
                    found.tracked.push(path);
                }
                return;
            }
        }
        // Shell text inside a word: `sh -c "sh helper.sh"`, `argv = ["bash", "-lc", "…"]`.
        if text.contains(char::is_whitespace) {
            if depth > 0 {
                self.words(shell_words(text), depth - 1, found);
            }
            return;
        }
        // A declared input of the same name is taken to be the file the shell finds.
        let named = |d: &PathBuf| d.file_name() == Path::new(text).file_name();
        let why = match (word.expands, &meta) {
            (true, _) if !declared.iter().any(named) => UntrackedWhy::Expands,
            (false, None) if inside && !declared.contains(&path) => UntrackedWhy::Missing,
            _ => return,
        };
        if (sourced || looks_like_script(text)) && !found.untracked.iter().any(|u| u.word == text) {
            found.untracked.push(Untracked { word: word.text, why });
        }
    }
}

/// Whether `word` looks like a script: it has a script's extension or
/// starts with `./`.
fn looks_like_script(word: &str) -> bool {
    word.starts_with("./") || has_script_extension(Path::new(word))
}

fn has_script_extension(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| SCRIPTS.contains(&e.to_ascii_lowercase().as_str()))
}

fn executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

/// `text` with each template tag (`{{ … }}`, `{% … %}`, `{# … #}`)
/// replaced by `{{}}`, so that splitting it into words keeps a tag inside
/// one word, which [`scripts`] then skips.
pub fn mask_templates(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['{']) {
        let close = match rest[at..].chars().nth(1) {
            Some('{') => "}}",
            Some('%') => "%}",
            Some('#') => "#}",
            _ => {
                out.push_str(&rest[..=at]);
                rest = &rest[at + 1..];
                continue;
            }
        };
        out.push_str(&rest[..at]);
        out.push_str("{{}}");
        rest = match rest[at + 2..].find(close) {
            Some(end) => &rest[at + 2 + end + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// The words of shell text `text`, quotes removed: split at blanks and at
/// the operators `;&|()<>`, with `#` comments dropped. Good enough to find
/// file names; it does not parse the shell's grammar.
pub fn shell_words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut word = Word { text: String::new(), expands: false };
    let mut started = false;
    let mut chars = text.chars().peekable();
    let mut end = |word: &mut Word, started: &mut bool| {
        if std::mem::take(started) {
            words.push(std::mem::replace(word, Word { text: String::new(), expands: false }));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() || ";&|()<>".contains(c) => end(&mut word, &mut started),
            '#' if !started => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\'' => {
                started = true;
                word.text.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                started = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if chars.peek().is_some_and(|n| "\"\\$`\n".contains(*n)) => {
                            word.text.extend(chars.next());
                        }
                        c => {
                            word.expands |= c == '$' || c == '`';
                            word.text.push(c);
                        }
                    }
                }
            }
            '\\' => {
                started = true;
                word.text.extend(chars.next());
            }
            c => {
                word.expands |= c == '$' || c == '`' || (c == '~' && !started);
                started = true;
                word.text.push(c);
            }
        }
    }
    end(&mut word, &mut started);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<(String, bool)> {
        shell_words(text).into_iter().map(|w| (w.text, w.expands)).collect()
    }

    #[test]
    fn splits_shell_words() {
        let w = |s: &str, e: bool| (s.to_owned(), e);
        assert_eq!(words("python3 s.py > ../o1.txt"), [w("python3", false), w("s.py", false), w("../o1.txt", false)]);
        assert_eq!(
            words("a&&b;c|d 2>&1"),
            [w("a", false), w("b", false), w("c", false), w("d", false), w("2", false), w("1", false)]
        );
        assert_eq!(
            words(r#"sh -c "sh helper.sh" 'my x.sh'"#),
            [w("sh", false), w("-c", false), w("sh helper.sh", false), w("my x.sh", false)]
        );
        assert_eq!(
            words("sh $PWD/h.sh ~/x.py a~b '$y.sh'"),
            [w("sh", false), w("$PWD/h.sh", true), w("~/x.py", true), w("a~b", false), w("$y.sh", false)]
        );
        assert_eq!(
            words(r#"echo "$(cat f)" `date` a\ b # sh c.sh"#),
            [w("echo", false), w("$(cat f)", true), w("`date`", true), w("a b", false)]
        );
    }

    #[test]
    fn masks_templates() {
        assert_eq!(mask_templates("sh {{ x }}.sh {% if a %}b{% endif %} {# c #}{x}"), "sh {{}}.sh {{}}b{{}} {{}}{x}");
        assert_eq!(mask_templates("a {{ b"), "a {{}}");
    }

    /// A command in a table case.
    enum Cmd {
        Sh(&'static str),
        Argv(&'static [&'static str]),
    }
    use Cmd::{Argv, Sh};

    /// `(cwd, command, tracked (from base), untracked)`.
    type Case = (&'static str, Cmd, &'static [&'static str], &'static [&'static str]);

    /// Issue 18: script words are resolved from the task's `cwd`, kept only
    /// inside the workflow directory, and noted when they cannot be tracked.
    #[test]
    fn resolves_words_from_the_working_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().join("wf");
        for file in ["sub/s.sh", "sub/deep/t.py", "top.sh", "s.sh", ".flow/x.sh", "data.txt"] {
            let path = base.join(file);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, "").expect("write");
        }
        std::fs::write(dir.path().join("outside.sh"), "").expect("write");
        let cases: Vec<Case> = vec![
            ("sub", Sh("sh s.sh > ../o1.txt"), &["sub/s.sh"], &[]),
            ("sub", Sh("python3 deep/t.py; sh ../top.sh"), &["sub/deep/t.py", "top.sh"], &[]),
            ("sub/deep", Sh("sh ../s.sh ./t.py"), &["sub/s.sh", "sub/deep/t.py"], &[]),
            ("", Sh("sh s.sh sub/s.sh ./s.sh"), &["s.sh", "sub/s.sh"], &[]),
            ("", Sh("sh ../outside.sh .flow/x.sh data.txt"), &[], &[]),
            ("sub", Sh("sh ../../outside.sh"), &[], &[]),
            (
                "",
                Sh("sh $PWD/helper.sh && python3 $HOME/x.py ~/y.sh $X"),
                &[],
                &[
                    "`$PWD/helper.sh` (the shell expands it)",
                    "`$HOME/x.py` (the shell expands it)",
                    "`~/y.sh` (the shell expands it)",
                ],
            ),
            (
                "",
                Sh("sh gone.sh ./tool --x=a.py {{}}.py"),
                &[],
                &["`gone.sh` (no such file)", "`./tool` (no such file)"],
            ),
            ("sub", Sh("bash -lc 'sh s.sh; python3 deep/t.py'"), &["sub/s.sh", "sub/deep/t.py"], &[]),
            ("", Argv(&["sh", "-c", "sh sub/s.sh > o.txt"]), &["sub/s.sh"], &[]),
            ("sub", Argv(&["python3", "deep/t.py", "$X.py"]), &["sub/deep/t.py"], &["`$X.py` (no such file)"]),
        ];
        for (cwd, cmd, tracked, untracked) in cases {
            let args: Vec<String>;
            let command = match cmd {
                Sh(text) => CommandText::Shell(text),
                Argv(a) => {
                    args = a.iter().map(|s| (*s).to_owned()).collect();
                    CommandText::Argv(&args)
                }
            };
            let found = scripts(command, &[], &base.join(cwd), &base, &[]);
            let shown: Vec<String> =
                found.tracked.iter().map(|p| p.strip_prefix(&base).expect("inside").display().to_string()).collect();
            assert_eq!(shown, tracked, "{cwd}: {command:?}");
            let notes: Vec<String> = found.untracked.iter().map(ToString::to_string).collect();
            assert_eq!(notes, untracked, "{cwd}: {command:?}");
        }
    }

    /// Issue 26: a word after `.`, `source`, `sh`, … is a script whatever
    /// its name, in the command and in setup lines; `named_scripts` lists
    /// what a task that writes them must write first.
    #[test]
    fn sourced_files_and_setup_lines_count() {
        let dir = tempfile::tempdir().expect("tempdir");
        for file in ["env", "prepare", "data.txt"] {
            std::fs::write(dir.path().join(file), "").expect("write");
        }
        let setup = [". ./env".to_owned(), "Y=$(sh prepare)".to_owned(), "cat data.txt".to_owned()];
        let found = scripts(CommandText::Shell("source gone"), &setup, dir.path(), dir.path(), &[]);
        let tracked: Vec<&Path> = found.tracked.iter().map(|p| p.strip_prefix(dir.path()).expect("inside")).collect();
        assert_eq!(tracked, [Path::new("env"), Path::new("prepare")]);
        let notes: Vec<String> = found.untracked.iter().map(ToString::to_string).collect();
        assert_eq!(notes, ["`gone` (no such file)"]);
        let named = named_scripts(CommandText::Shell("sh gen.sh {{}}.sh && bash -c 'sh ../x'"), &setup, "sub");
        assert_eq!(named, ["sub/gen.sh", "x", "sub/env", "sub/prepare"]);
    }

    #[test]
    fn declared_files_are_not_implicit() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.sh"), "").expect("write");
        let declared = [dir.path().join("./a.sh")];
        let found = scripts(CommandText::Shell("sh a.sh"), &[], dir.path(), dir.path(), &declared);
        assert_eq!(found, Scripts::default());
        let declared = [dir.path().join("b.sh")];
        let found = scripts(CommandText::Shell("sh b.sh; sh $PWD/b.sh"), &[], dir.path(), dir.path(), &declared);
        assert_eq!(found, Scripts::default());
    }

    /// What a command names given no declared files, less an instance's
    /// declared ones, is what it names given them.
    #[test]
    fn tracked_except_declared_is_tracked_given_declared() {
        let dir = tempfile::tempdir().expect("tempdir");
        for file in ["a.sh", "b.py", "sub/c.sh"] {
            std::fs::create_dir_all(dir.path().join(file).parent().expect("parent")).expect("mkdir");
            std::fs::write(dir.path().join(file), "").expect("write");
        }
        let command = CommandText::Shell("sh a.sh && python3 b.py; sh sub/c.sh");
        let all = scripts(command, &[], dir.path(), dir.path(), &[]);
        for declared in
            [vec![], vec![dir.path().join("./a.sh")], vec![dir.path().join("b.py"), dir.path().join("sub/c.sh")]]
        {
            let given = scripts(command, &[], dir.path(), dir.path(), &declared).tracked;
            assert_eq!(all.tracked_except(&declared), given, "{declared:?}");
        }
    }
}
