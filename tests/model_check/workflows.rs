//! The generated side of the model check: small workflows from a grammar of
//! what users combine, the source files they read, and the edits between
//! runs. Every command writes its outputs from what it reads and appends
//! one line to the execution log outside the workflow directory:
//! `label|outputs|key material`, the key material being what the
//! fingerprint is made of (the item, the rendered values, the checksums of
//! the files it reads), computed by the command itself.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use proptest::prelude::*;

use super::trees;

/// How the first task expands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `range = "1-{{ vars.n }}"`.
    Range,
    /// `each_line = "list.txt"`; outputs named by the item, or by the index.
    EachLine { by_item: bool },
    /// `each_chunk = { file = "list.txt", lines = 2 }`.
    EachChunk,
    /// `from_json = "data.json"`, built from the same list.
    FromJson,
    /// A fixed 2×2 `matrix`.
    Matrix,
}

/// One generated workflow: task `a` expands over `source`; the others are optional.
#[derive(Clone, Debug)]
pub struct Shape {
    pub source: Source,
    /// `a` uses `[templates.base]` (its `env` and `retries`).
    pub template: bool,
    /// `a` has two variants, the first needing a GPU.
    pub variants: bool,
    /// `a` runs in `sub` (`cwd = "sub"`), so its script is `sub/s.sh`.
    pub cwd: bool,
    /// `a` runs `sh s.sh`; `Some(true)` also lists it in `inputs`.
    pub script: Option<bool>,
    /// `a` reads `in/common.txt` (declared).
    pub common: bool,
    /// `b`: `for_each = "a"`, reads `a`'s output element-wise; `Some(true)` adds `after = ["a[{{ index }}]"]`.
    pub mirror: Option<bool>,
    /// `b` has `when = "{{ vars.b_on }}"`: dropped, with what needs it, while `b_on` is false.
    pub gated: bool,
    /// `c`: a glob over `b/*.txt` (or `a/*.txt`) writing `all.txt` and the list `hits.txt`.
    pub combine: bool,
    /// `d`: a dynamic stage over `hits.txt`, and `e` combining its outputs (needs `combine`).
    pub dynamic: bool,
    /// `n`: a per-instance fan-out over `a`'s output files (not with `dynamic`).
    pub nested: bool,
    /// `b` fails, leaving part of its output behind, where its index is listed in
    /// `poison.txt` (an input of `b`), or the `a` output it reads holds a
    /// poison (`omega`, or the index `4` of a `range`): the edits add and
    /// remove both. `Some(true)` gives it `continue_on_failure = true`.
    /// Needs `mirror`.
    pub fragile: Option<bool>,
    /// `h`: waits for `b` with `on = "failure"` or `"always"` (needs
    /// `mirror`), and writes what it was told failed to its output.
    pub handler: Option<Handler>,
    /// A workflow `name`, `max_fails` and `[defaults]` (`priority`,
    /// `timeout`, `crash_limit`, `time_request`, `nodes`).
    pub defaults: bool,
    /// A `[finally]` command writing `finally.txt`.
    pub finally: bool,
    /// `c` prints to `stdout = "c.out"` and `stderr = "c.err"` (needs
    /// `combine`; feature `streams`, off by default).
    pub streams: bool,
    /// `a` asks for `memory = "{{ 10 * (attempt + 1) }} MiB"`, has it in
    /// its `env`, and fails its first attempt (too little memory): a retry
    /// (`retries`, `retry_on`, `retry_delay`) that then succeeds. Not with
    /// `template` or `variants`.
    pub grows: bool,
    /// `a` has `implicit_inputs = false` (not when its script is tracked only implicitly).
    pub untracked: bool,
    /// `tag` comes from `--vars vars.toml`, not `-v`.
    pub vars_file: bool,
    /// `h` runs an `argv`, not a `command`.
    pub argv: bool,
    /// `a` reads `in/stdin.txt` on its `stdin` (feature `stdin`, off by default).
    pub stdin: bool,
    /// `a` sources `env.sh` in a `setup` line (feature `setup`, off by default).
    pub setup: bool,
    /// `c` appends to its outputs (`>>`) (feature `append`, off by default).
    pub append: bool,
    /// `b` has a per-instance `when = "{{ index != vars.cut }}"`, which the
    /// edits flip both ways (feature `skips`, off by default; not with `gated`).
    pub skips: bool,
    /// An included file (`included`) with a task `x`; `Some(true)` names
    /// its namespace with `as`.
    pub include: Option<bool>,
    /// A task `y` reading a directory and a symlink (`trees`).
    pub tree: bool,
    /// Every run describes its workers with `--gpus 1`: the first of
    /// `variants` fits (feature `gpus`).
    pub gpus: bool,
    /// `a` asks for `resources = { licence = 1 }` and names the amount in
    /// its command; the workers have what `Sources::licence` says (feature
    /// `licence`).
    pub licensed: bool,
}

/// A task `h` that waits for `b`'s end however.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handler {
    /// `on = "always"`, else `on = "failure"`.
    pub always: bool,
    /// Element-wise (`for_each = "b"`, `after = [{ task = "b[{{ index }}]", … }]`), else on the whole of `b`.
    pub each: bool,
}

/// What `a`'s output holds when `b` fails on it.
pub const POISON: [&str; 2] = ["omega", "4"];

impl Shape {
    /// The tasks present, in file order, with the tasks each one reads from.
    pub fn tasks(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        let mut tasks = vec![("a", vec![])];
        if self.mirror.is_some() {
            tasks.push(("b", vec!["a"]));
        }
        if self.combine {
            tasks.push(("c", vec![if self.mirror.is_some() { "b" } else { "a" }]));
        }
        if self.combine && self.dynamic {
            tasks.push(("d", vec!["c"]));
            tasks.push(("e", vec!["d"]));
        }
        if self.nested && !self.dynamic {
            tasks.push(("n", vec!["a"]));
        }
        if self.handler.is_some() {
            tasks.push(("h", vec!["b"]));
        }
        if self.include.is_some() {
            tasks.push(("x", vec![]));
        }
        if self.tree {
            tasks.push(("y", vec![]));
        }
        tasks
    }

    /// Tasks whose instances are known only at run time.
    pub fn is_dynamic(task: &str) -> bool {
        matches!(task, "d" | "n")
    }

    /// The workflow file.
    pub fn workflow(&self) -> String {
        // The key of an instance in file names.
        let k = match self.source {
            Source::EachLine { by_item: true } => "{{ item }}",
            _ => "{{ index }}",
        };
        let log = "{{ vars.aux }}/exec.log";
        let label = "$FLOW_TASK[$FLOW_INDEX${FLOW_SUBINDEX:+.$FLOW_SUBINDEX}]";
        // A task fails while its marker exists (edit `Fail`).
        let gate = "test ! -e {{ vars.aux }}/fail/$FLOW_TASK.$FLOW_INDEX${FLOW_SUBINDEX:+.$FLOW_SUBINDEX}";
        let item = "item=$(printf %s \"$FLOW_ITEM\" | cksum)";
        let mut w = String::new();
        if self.defaults {
            w.push_str(
                "name = \"model\"\nmax_fails = 50\n\n[defaults]\npriority = 1\ntimeout = \"10m\"\ncrash_limit = 3\ntime_request = \"1h\"\nnodes = 1\n\n",
            );
        }
        if self.finally {
            w.push_str("[finally]\ncommand = \"echo finished > finally.txt\"\ntimeout = \"1m\"\n\n");
        }
        w.push_str("[vars]\ntag = \"t0\"\nn = 3\naux = \"/nonexistent\"\nb_on = true\ncut = 0\n\n");
        if self.template {
            w.push_str("[templates.base]\nenv = { NT = \"{{ resources.cpus }}\" }\nretries = 1\n\n");
        }
        // a
        let up = if self.cwd { "../" } else { "" };
        let mut body =
            String::from("{ printf '%s\\n' \"$FLOW_ITEM\" | tr -dc 'a-z0-9\\n'; echo; echo {{ vars.tag }} $NT;");
        let mut key = format!("{item} tag={{{{ vars.tag }}}} nt=$NT");
        if self.grows {
            key.push_str(" mem=$MEM");
        }
        if self.licensed {
            key.push_str(" lic={{ resources.licence }}");
        }
        if self.stdin {
            key.push_str(" si=$(cksum)");
        }
        // With `implicit_inputs = false` the sourced file is not tracked.
        if self.setup && !self.untracked {
            key.push_str(" setup=$SETUP");
        }
        let mut inputs = Vec::new();
        if self.script.is_some() {
            body.push_str(" sh s.sh;");
            key.push_str(" s=$(cksum < s.sh)");
            if self.script == Some(true) {
                inputs.push(if self.cwd { "sub/s.sh" } else { "s.sh" }.to_owned());
            }
        }
        if self.common {
            let _ = write!(body, " cat {up}in/common.txt;");
            let _ = write!(key, " in=$(cksum < {up}in/common.txt)");
            inputs.push("in/common.txt".to_owned());
        }
        body.push_str(" }");
        // Too little memory on the first attempt: it fails, the retry succeeds.
        let grown = if self.grows { "test $MEM -ge 20 && " } else { "" };
        let env = match (self.template, self.grows) {
            (true, _) => "use = \"base\"\n",
            (false, false) => "env = { NT = \"{{ resources.cpus }}\" }\n",
            (false, true) => {
                "env = { NT = \"{{ resources.cpus }}\", MEM = \"{{ resources.memory }}\" }\nmemory = \"{{ 10 * (attempt + 1) }} MiB\"\nretries = 1\nretry_on = [1]\nretry_delay = { first = \"0s\", factor = 2, max = \"1s\" }\n"
            }
        };
        let _ = write!(
            w,
            "[[tasks]]\nname = \"a\"\n{}{env}command = '''{grown}{gate} && {body} > {up}a/{k}.txt && echo \"{label}|a/{k}.txt|{key}\" >> {log}'''\noutputs = [\"a/{k}.txt\"]\ninputs = {inputs:?}\n",
            match self.source {
                Source::Range => "range = \"1-{{ vars.n }}\"\n",
                Source::EachLine { .. } => "each_line = \"list.txt\"\n",
                Source::EachChunk => "each_chunk = { file = \"list.txt\", lines = 2 }\n",
                Source::FromJson => "from_json = \"data.json\"\n",
                Source::Matrix => "matrix = { x = [\"p\", \"q\"], y = [1, 2] }\n",
            },
        );
        if self.untracked {
            w.push_str("implicit_inputs = false\n");
        }
        if self.licensed {
            w.push_str("resources = { licence = 1 }\n");
        }
        if self.stdin {
            w.push_str("stdin = \"in/stdin.txt\"\n");
        }
        if self.setup {
            let _ = writeln!(w, "setup = [\". ./{up}env.sh\"]");
        }
        if self.cwd {
            w.push_str("cwd = \"sub\"\n");
        }
        if self.variants {
            w.push_str("[[tasks.variants]]\ngpus = 1\ncpus = 1\n[[tasks.variants]]\ncpus = 2\n");
        }
        // b
        if let Some(after) = self.mirror {
            let mut b_key = format!("{item} in=$(cksum < a/{k}.txt)");
            let mut b_inputs = vec![format!("a/{k}.txt")];
            // A failure is logged with `!` for outputs, after part of the output is written.
            let fails = match self.fragile {
                Some(_) => {
                    // The command names `{{ index }}`: it is part of the definition.
                    b_key.push_str(" i={{ index }} p=$(cksum < poison.txt)");
                    b_inputs.push("poison.txt".to_owned());
                    format!(
                        "if grep -qx {{{{ index }}}} poison.txt || grep -q{} a/{k}.txt; then echo partial > b/{k}.txt; echo \"{label}|!|{b_key}\" >> {log}; exit 1; fi && ",
                        POISON.iter().map(|p| format!(" -e {p}")).collect::<String>()
                    )
                }
                None => String::new(),
            };
            let _ = write!(
                w,
                "\n[[tasks]]\nname = \"b\"\nfor_each = \"a\"\n{}{}{}command = '''{gate} && {fails}head -c 3 a/{k}.txt > b/{k}.txt && echo \"{label}|b/{k}.txt|{b_key}\" >> {log}'''\ninputs = {b_inputs:?}\noutputs = [\"b/{k}.txt\"]\n",
                if after { "after = [\"a[{{ index }}]\"]\n" } else { "" },
                match (self.gated, self.skips) {
                    (true, _) => "when = \"{{ vars.b_on }}\"\n",
                    (false, true) => "when = \"{{ index != vars.cut }}\"\n",
                    (false, false) => "",
                },
                if self.fragile == Some(true) { "continue_on_failure = true\n" } else { "" },
            );
        }
        // c
        if self.combine {
            let x = if self.mirror.is_some() { "b" } else { "a" };
            let to = if self.append { ">>" } else { ">" };
            // With `streams`, what it prints goes to files of the directory,
            // which are its outputs as much as the declared ones.
            let (say, streams, written) = if self.streams {
                (" && wc -l < all.txt && echo note >&2", "stdout = \"c.out\"\nstderr = \"c.err\"\n", ",c.out,c.err")
            } else {
                ("", "", "")
            };
            let _ = write!(
                w,
                "\n[[tasks]]\nname = \"c\"\ncommand = '''{gate} && cat /dev/null $(ls {x}/*.txt 2>/dev/null) {to} all.txt && {{ cut -c1-2 all.txt | tr -dc 'a-z\\n' | sort -u; echo zz; }} > hits.txt{say} && echo \"{label}|all.txt,hits.txt{written}|files=$(echo {x}/*.txt) in=$(cat {x}/*.txt | cksum)\" >> {log}'''\ninputs = [\"{x}/*.txt\"]\noutputs = [\"all.txt\", \"hits.txt\"]\n{streams}"
            );
        }
        if self.combine && self.dynamic {
            let _ = write!(
                w,
                "\n[[tasks]]\nname = \"d\"\neach_line = \"hits.txt\"\ncommand = '''{gate} && echo {{{{ item }}}} {{{{ vars.tag }}}} > r/{{{{ index }}}}.txt && echo \"{label}|r/{{{{ index }}}}.txt|{item} tag={{{{ vars.tag }}}}\" >> {log}'''\noutputs = [\"r/{{{{ index }}}}.txt\"]\n"
            );
            let _ = write!(
                w,
                "\n[[tasks]]\nname = \"e\"\ncommand = '''{gate} && cat r/*.txt > final.txt && echo \"{label}|final.txt|files=$(echo r/*.txt) in=$(cat r/*.txt | cksum)\" >> {log}'''\ninputs = [\"r/*.txt\"]\noutputs = [\"final.txt\"]\n"
            );
        }
        if self.nested && !self.dynamic {
            let out = "nn/{{ index }}.{{ subindex }}.txt";
            let _ = write!(
                w,
                "\n[[tasks]]\nname = \"n\"\nfor_each = \"a\"\neach_line = \"a/{k}.txt\"\ncommand = '''{gate} && echo {{{{ item }}}} > {out} && echo \"{label}|{out}|{item}\" >> {log}'''\noutputs = [\"{out}\"]\n"
            );
        }
        if let Some(Handler { always, each }) = self.handler {
            let on = if always { "always" } else { "failure" };
            let (each, of, out) = if each {
                ("for_each = \"b\"\n", "b[{{ index }}]", "hout/{{ index }}.txt")
            } else {
                ("", "b", "hout.txt")
            };
            // What it was told failed is its output, and its key.
            let run = format!(
                "{gate} && mkdir -p hout && echo failed=$FLOW_FAILED_TASKS > {out} && echo \"{label}|{out}|{item} failed=$FLOW_FAILED_TASKS\" >> {log}"
            );
            let run = if self.argv {
                format!("argv = [\"sh\", \"-c\", '''{run}''']")
            } else {
                format!("command = '''{run}'''")
            };
            let _ = write!(
                w,
                "\n[[tasks]]\nname = \"h\"\n{each}after = [{{ task = \"{of}\", on = \"{on}\" }}]\n{run}\noutputs = [\"{out}\"]\n"
            );
        }
        if self.tree {
            w.push_str(&trees::task(gate, label, log));
        }
        w
    }
}

/// Whether `FLOW_MODEL_SKIP` names `what`: a check (`stale`, `plan`,
/// `dry`) or a feature of the grammar ([`Draw`]), left out to look past a
/// known defect.
pub fn left_out(what: &str) -> bool {
    std::env::var("FLOW_MODEL_SKIP").unwrap_or_default().split(',').any(|s| s.trim() == what)
}

/// Features of the grammar, and checks, made only when `FLOW_MODEL_DRAW`
/// names them: each finds a defect not fixed yet, and is switched on once
/// the fix is in. Switched on since: `stdin`, `setup`, `append`, `skips`,
/// `streams` and the check `why` (`flow plan --why` names the file an
/// edit changed, not one only touched).
pub const DEFAULT_OFF: [&str; 0] = [];

/// Which features of the grammar are drawn: `variants`, `cwd`, `combine`,
/// `dynamic`, `nested`, `when`, `fragile`, `handler`, `defaults`, `grows`,
/// `untracked`, `vars_file`, `argv`, `finally`, `include`, `tree`, `gpus`,
/// `licence`; edits `kill`, `interrupt`, `fail`, `corrupt`, `insert`,
/// `syntax`, `rename`, `reorder`, `remote`, `both`, `force`, `worker` (the
/// workers' `--resource` and `--memory`), `policy` (`--keep-going`,
/// `--max-fails`, `--keep-stale-outputs`); and those of [`DEFAULT_OFF`].
#[derive(Clone, Debug, Default)]
pub struct Draw {
    skip: BTreeSet<String>,
    on: BTreeSet<String>,
    everything: bool,
}

impl Draw {
    /// All but what `FLOW_MODEL_SKIP` leaves out, [`DEFAULT_OFF`] only as
    /// `FLOW_MODEL_DRAW` lists.
    pub fn from_env() -> Self {
        let list = |name: &str| -> BTreeSet<String> {
            std::env::var(name)
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        };
        Self { skip: list("FLOW_MODEL_SKIP"), on: list("FLOW_MODEL_DRAW"), everything: false }
    }

    /// Every feature: what the grammar can draw at all.
    pub fn everything() -> Self {
        Self { everything: true, ..Self::default() }
    }

    pub fn has(&self, feature: &str) -> bool {
        self.everything
            || !self.skip.contains(feature) && (!DEFAULT_OFF.contains(&feature) || self.on.contains(feature))
    }
}

pub fn shape(draw: &Draw) -> impl Strategy<Value = Shape> + use<> {
    let source = prop_oneof![
        Just(Source::Range),
        any::<bool>().prop_map(|by_item| Source::EachLine { by_item }),
        Just(Source::EachChunk),
        Just(Source::FromJson),
        Just(Source::Matrix),
    ];
    let opts = (any::<bool>(), any::<bool>(), any::<bool>(), proptest::option::of(any::<bool>()), any::<bool>());
    let rest = (proptest::option::of(any::<bool>()), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>());
    let handler = (any::<bool>(), any::<bool>()).prop_map(|(always, each)| Handler { always, each });
    let failures = (proptest::option::of(any::<bool>()), proptest::option::of(handler));
    let keys = proptest::collection::vec(any::<bool>(), 16);
    let d = draw.clone();
    (source, opts, rest, failures, keys).prop_map(
        move |(
            source,
            (template, variants, cwd, script, common),
            (mirror, combine, dynamic, nested, gated),
            (fragile, handler),
            keys,
        )| {
            let variants = variants && d.has("variants");
            let combine = combine && d.has("combine");
            let handler = handler.filter(|_| mirror.is_some() && d.has("handler"));
            Shape {
                source,
                template,
                variants,
                cwd: cwd && d.has("cwd"),
                script,
                common,
                mirror,
                gated: gated && mirror.is_some() && d.has("when"),
                combine,
                dynamic: dynamic && d.has("dynamic"),
                nested: nested && d.has("nested"),
                fragile: fragile.filter(|_| mirror.is_some() && d.has("fragile")),
                handler,
                defaults: keys[0] && d.has("defaults"),
                grows: keys[1] && !template && !variants && d.has("grows"),
                untracked: keys[2] && script != Some(false) && d.has("untracked"),
                vars_file: keys[3] && d.has("vars_file"),
                argv: keys[4] && handler.is_some() && d.has("argv"),
                stdin: keys[5] && d.has("stdin"),
                setup: keys[6] && d.has("setup"),
                append: keys[7] && combine && d.has("append"),
                finally: keys[8] && d.has("finally"),
                streams: keys[9] && combine && d.has("streams"),
                skips: keys[10] && mirror.is_some() && d.has("skips"),
                include: Some(keys[12]).filter(|_| keys[11] && d.has("include")),
                tree: keys[13] && d.has("tree"),
                gpus: keys[14] && d.has("gpus"),
                licensed: keys[15] && d.has("licence"),
            }
        },
    )
}
