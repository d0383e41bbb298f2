//! The source files and variables a generated workflow reads, and how
//! its workers are described: everything a clean run starts from, which
//! the edits change between runs.

use std::collections::{BTreeMap, BTreeSet};

use super::workflows::Shape;
use super::{edits, included, trees};

/// The words lists are made of; the last is a poison (`POISON`).
pub const WORDS: [&str; 8] = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "kappa", "omega"];

/// The source files and variables: everything a clean run starts from.
#[derive(Clone, Debug)]
pub struct Sources {
    pub list: Vec<&'static str>,
    pub n: u8,
    pub tag: u8,
    pub common: u8,
    pub script: u8,
    pub sub_script: u8,
    /// `-v b_on=…`.
    pub b_on: bool,
    /// `-v cut=…`: the index `b` skips (`skips`).
    pub cut: u8,
    /// The indices listed in `poison.txt`.
    pub poison: BTreeSet<u8>,
    /// What `in/stdin.txt` and `env.sh` hold (features `stdin`, `setup`).
    pub stdin: u8,
    pub setup: u8,
    /// The workflow is written as `workflow.yaml` (in YAML's JSON form), not `workflow.toml`.
    pub yaml: bool,
    /// The include's `as` names `lib2`, not `lib`.
    pub renamed_namespace: bool,
    /// The include's `vars = { word = … }`.
    pub lib_word: u8,
    /// The included file's command version and default `word`, and what `lib/in.txt` holds.
    pub lib: [u8; 3],
    /// The tasks renamed (`c` is called `c_r`).
    pub renamed: BTreeSet<&'static str>,
    /// The tasks are written in the reverse order.
    pub reversed: bool,
    /// Which target each link of `trees` points to, what the targets hold,
    /// what `data/one.txt` holds, and whether `data/extra.txt` is there.
    pub links: [u8; 2],
    pub targets: [u8; 2],
    pub data: u8,
    pub extra: bool,
    /// The `licence` the workers have (`--resource licence=…`; none at 0).
    pub licence: u8,
    /// The workers' memory: none given, `1 GiB`, or `5 MiB` (too little
    /// for the first attempt of `grows`).
    pub memory: u8,
}

/// The profiles file: `--profile remote` is `--listen 127.0.0.1:0 --no-local-worker`.
pub const PROFILES: &str = "flow.profiles.toml";

/// The names the workflow file may have.
pub const WORKFLOW_FILES: [&str; 2] = ["workflow.toml", "workflow.yaml"];

impl Sources {
    pub fn new() -> Self {
        Self {
            list: vec!["alpha", "beta", "gamma"],
            n: 3,
            tag: 0,
            common: 0,
            script: 0,
            sub_script: 0,
            b_on: true,
            cut: 0,
            poison: BTreeSet::new(),
            stdin: 0,
            setup: 0,
            yaml: false,
            renamed_namespace: false,
            lib_word: 0,
            lib: [0; 3],
            renamed: BTreeSet::new(),
            reversed: false,
            links: [0; 2],
            targets: [0, 1],
            data: 0,
            extra: false,
            licence: 1,
            memory: 0,
        }
    }

    /// Path → contents of every source file.
    pub fn files(&self, shape: &Shape) -> BTreeMap<&'static str, String> {
        let list: String = self.list.iter().map(|w| format!("{w}\n")).collect();
        let json = self.list.iter().map(|w| format!("{{\"v\": \"{w}\"}}")).collect::<Vec<_>>().join(", ");
        let mut text = edits::rewrite(&shape.workflow(), self);
        if shape.include.is_some() {
            text.insert_str(0, &included::line(shape, self));
        }
        let workflow = if self.yaml {
            let value: serde_json::Value = toml::from_str(&text).expect("the generated TOML parses");
            ("workflow.yaml", serde_json::to_string_pretty(&value).expect("JSON") + "\n")
        } else {
            ("workflow.toml", text)
        };
        let mut files = BTreeMap::from([
            workflow,
            ("list.txt", list),
            ("data.json", format!("[{json}]\n")),
            ("in/common.txt", format!("common {}\n", self.common)),
            ("s.sh", format!("echo script {}\n", self.script)),
            ("sub/s.sh", format!("echo sub script {}\n", self.sub_script)),
            (PROFILES, "[profile.remote]\nlisten = \"127.0.0.1:0\"\nlocal_worker = false\n".to_owned()),
        ]);
        if shape.fragile.is_some() {
            files.insert("poison.txt", self.poison.iter().map(|i| format!("{i}\n")).collect());
        }
        if shape.vars_file {
            files.insert("vars.toml", format!("tag = \"t{}\"\n", self.tag));
        }
        if shape.stdin {
            files.insert("in/stdin.txt", format!("stdin {}\n", self.stdin));
        }
        if shape.setup {
            files.insert("env.sh", format!("export SETUP={}\n", self.setup));
        }
        if shape.include.is_some() {
            files.insert(included::PATH, included::file(self));
            files.insert(included::INPUT, included::input(self));
        }
        if shape.tree {
            files.extend(trees::files(self));
        }
        files
    }

    /// Path → target of every symlink among the sources.
    pub fn links(&self, shape: &Shape) -> BTreeMap<&'static str, String> {
        if shape.tree { trees::links(self).into_iter().collect() } else { BTreeMap::new() }
    }

    /// `-v` and `--vars` arguments (besides `aux`).
    pub fn vars(&self, shape: &Shape) -> Vec<String> {
        let b_on = if self.b_on { "yes" } else { "no" };
        let tag = if shape.vars_file {
            ["--vars".into(), "vars.toml".into()]
        } else {
            ["-v".into(), format!("tag=t{}", self.tag)]
        };
        let mut args = vec!["-v".into(), format!("n={}", self.n), "-v".into(), format!("b_on={b_on}")];
        args.extend(["-v".into(), format!("cut={}", self.cut)]);
        args.extend(tag);
        args
    }

    /// How the workers are described (`--gpus`, `--memory`, `--resource`),
    /// the same for `flow run` and `flow worker`.
    pub fn worker(&self, shape: &Shape) -> Vec<String> {
        let mut args = Vec::new();
        if shape.gpus {
            args.extend(["--gpus".to_owned(), "1".to_owned()]);
        }
        if self.licence > 0 {
            args.extend(["--resource".to_owned(), format!("licence={}", self.licence)]);
        }
        match self.memory {
            1 => args.extend(["--memory".to_owned(), "1 GiB".to_owned()]),
            2 => args.extend(["--memory".to_owned(), "5 MiB".to_owned()]),
            _ => {}
        }
        args
    }

    /// Whether a task can never run on the workers described: `flow run`
    /// refuses the workflow (status 2) and changes nothing.
    pub fn refused(&self, shape: &Shape) -> bool {
        (shape.licensed && self.licence == 0) || (shape.grows && self.memory == 2)
    }
}
