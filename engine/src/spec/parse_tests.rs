//! Tests of [`super::parse`] and [`super::parse_vars`] over both formats:
//! spans, collected diagnostics, TOML/YAML equivalence, and robustness
//! against mangled input.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::sample::{Index, select};

use super::{Format, Workflow, parse, parse_vars};
use crate::diag::{Code, Diagnostic, Source};

const TOML: &str = r#"name = "demo"

[vars]
threads = 4
samples = ["a", "b"]

[defaults]
cpus = "{{ vars.threads }}"
retries = 2

[templates.big]
memory = "4 GiB"
gpus = 0.5

[[tasks]]
name = "prepare"
command = "mkdir -p out"
outputs = ["out/"]

[[tasks]]
name = "align"
use = "big"
range = "1-10"
argv = ["align", "--in", "{{ index }}"]
inputs = ["data/{{ index }}.fq"]
after = ["prepare"]
env = { OMP_NUM_THREADS = 4, MODE = "fast" }
variants = [{ cpus = 8, memory = "16 GiB" }, { cpus = 4 }]
each_chunk = { file = "list.txt", lines = 100, stdin = true }
matrix = { k = [1, 2], mode = ["x", "y"] }
resources = { fpga = 1 }
timeout = "1h30m"
"#;

const YAML: &str = r#"name: "demo"   # the same workflow as TOML
vars:
  threads: 4
  samples: ["a", "b"]
defaults:
  cpus: "{{ vars.threads }}"
  retries: 2
templates:
  big:
    memory: "4 GiB"
    gpus: 0.5
tasks:
  - name: "prepare"
    command: "mkdir -p out"
    outputs: ["out/"]

  - name: "align"
    use: "big"
    range: "1-10"
    argv: ["align", "--in", "{{ index }}"]
    inputs: ["data/{{ index }}.fq"]
    after: ["prepare"]
    env: { OMP_NUM_THREADS: 4, MODE: "fast" }
    variants: [{ cpus: 8, memory: "16 GiB" }, { cpus: 4 }]
    each_chunk: { file: "list.txt", lines: 100, stdin: true }
    matrix: { k: [1, 2], mode: ["x", "y"] }
    resources: { fpga: 1 }
    timeout: "1h30m"
"#;

fn parse_text(text: &str, format: Format) -> Result<Workflow, Vec<Diagnostic>> {
    parse(&Source::new("test", text), format)
}

fn ok(text: &str, format: Format) -> Workflow {
    parse_text(text, format).unwrap_or_else(|diags| panic!("{format:?} failed: {diags:#?}"))
}

/// The `Debug` text of `value` with every `span: A..B` blanked out.
fn without_spans(value: &impl std::fmt::Debug) -> String {
    let text = format!("{value:?}");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("span: ") {
        out.push_str(&rest[..at + 6]);
        rest = rest[at + 6..].trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        out.push('_');
    }
    out.push_str(rest);
    out
}

#[test]
fn toml_and_yaml_read_the_same_workflow() {
    let toml = ok(TOML, Format::Toml);
    let yaml = ok(YAML, Format::Yaml);
    assert_eq!(without_spans(&toml), without_spans(&yaml));
    assert_eq!(toml.tasks.len(), 2);
    assert!(without_spans(&toml).contains("Number(100.0)"));
}

#[test]
fn spans_point_at_the_values_as_written() {
    type Pick = fn(&Workflow) -> Option<Range<usize>>;
    let picks: &[(Pick, &str)] = &[
        (|w| Some(w.name.as_ref()?.span.clone()), r#""demo""#),
        (|w| Some(w.vars.get("threads")?.span.clone()), "4"),
        (|w| Some(w.vars.get("samples")?.span.clone()), r#"["a", "b"]"#),
        (|w| Some(w.defaults.as_ref()?.value.cpus.as_ref()?.span.clone()), r#""{{ vars.threads }}""#),
        (|w| Some(w.templates.get("big")?.value.memory.as_ref()?.span.clone()), r#""4 GiB""#),
        (|w| Some(w.templates.get("big")?.value.gpus.as_ref()?.span.clone()), "0.5"),
        (|w| Some(w.tasks[0].value.outputs.as_ref()?.span.clone()), r#"["out/"]"#),
        (|w| Some(w.tasks[1].value.argv.as_ref()?.value[2].span.clone()), r#""{{ index }}""#),
        (|w| Some(w.tasks[1].value.env.as_ref()?.value.get("MODE")?.span.clone()), r#""fast""#),
        (|w| Some(w.tasks[1].value.variants.as_ref()?.value[0].value.cpus.as_ref()?.span.clone()), "8"),
        (|w| Some(w.tasks[1].value.each_chunk.as_ref()?.value.lines.span.clone()), "100"),
        (|w| Some(w.tasks[1].value.each_chunk.as_ref()?.value.stdin.as_ref()?.span.clone()), "true"),
        (|w| Some(w.tasks[1].value.timeout.as_ref()?.span.clone()), r#""1h30m""#),
    ];
    for (text, format) in [(TOML, Format::Toml), (YAML, Format::Yaml)] {
        let workflow = ok(text, format);
        for (i, (pick, expected)) in picks.iter().enumerate() {
            let span = pick(&workflow).unwrap_or_else(|| panic!("{format:?} pick {i}: missing"));
            assert_eq!(&text[span], *expected, "{format:?} pick {i}");
        }
    }
}

#[test]
fn empty_files_are_empty_workflows() {
    let cases =
        [("", Format::Toml), ("", Format::Yaml), ("# nothing\n", Format::Yaml), ("tasks:\n# none yet\n", Format::Yaml)];
    for (text, format) in cases {
        let workflow = ok(text, format);
        assert!(workflow.name.is_none() && workflow.tasks.is_empty());
    }
}

/// One expected diagnostic: code, the text its span covers, and a piece of
/// its message, label or help.
type Expect = (Code, &'static str, &'static str);

fn check(name: &str, format: Format, text: &str, expected: &[Expect]) {
    let diags = match parse_text(text, format) {
        Ok(_) => panic!("{name}: parsed without errors"),
        Err(diags) => diags,
    };
    let shown: Vec<_> =
        diags.iter().map(|d| (d.code, &text[d.span.clone().unwrap_or(0..0)], &d.message, &d.help)).collect();
    assert_eq!(diags.len(), expected.len(), "{name}: {shown:#?}");
    for (diag, (code, snippet, needle)) in diags.iter().zip(expected) {
        assert_eq!(diag.code, *code, "{name}: {shown:#?}");
        assert_eq!(&text[diag.span.clone().unwrap_or(0..0)], *snippet, "{name}: {shown:#?}");
        let all = format!("{} | {:?} | {:?}", diag.message, diag.label, diag.help);
        assert!(all.contains(needle), "{name}: {all:?} lacks {needle:?}");
    }
}

#[test]
fn toml_mistakes_are_all_reported() {
    let cases: &[(&str, &str, &[Expect])] = &[
        (
            "typo",
            "[[tasks]]\nname = \"a\"\ncomand = \"echo\"\n",
            &[(Code::SpecUnknownKey, "comand", "did you mean `command`?")],
        ),
        (
            "unknown key without a near miss",
            "colour = 1\n",
            &[(Code::SpecUnknownKey, "colour", "expected one of: name, vars, defaults")],
        ),
        (
            "three independent mistakes",
            "[[tasks]]\nname = \"a\"\ncpus = [1]\ninputs = [\"a\", 2]\n\n[templates.t]\nbogus = 1\n",
            &[
                (Code::SpecType, "[1]", "`cpus` takes a number or a string"),
                (Code::SpecType, "2", "expected a string, found the number 2"),
                (Code::SpecUnknownKey, "bogus", "unknown key `bogus` in template"),
            ],
        ),
        (
            "wrong types",
            "name = 3\ntasks = [{ range = 1.5, each_chunk = { file = \"f\", lines = 1, stdin = \"yes\" } }]\n",
            &[
                (Code::SpecType, "3", "`name` takes a string"),
                (Code::SpecType, "1.5", "`range` takes a string like"),
                (Code::SpecType, "\"yes\"", "`stdin` takes true or false"),
            ],
        ),
        (
            "missing lines, inline",
            "[[tasks]]\neach_chunk = { file = \"f\" }\n",
            &[(Code::SpecMissingKey, "{ file = \"f\" }", "add `lines = ...`")],
        ),
        (
            "missing lines, table header",
            "[[tasks]]\nname = \"a\"\n[tasks.each_chunk]\nfile = \"f\"\n",
            &[(Code::SpecMissingKey, "[tasks.each_chunk]", "missing key `lines` in each_chunk")],
        ),
        (
            "a wrong value and the key it leaves missing are one mistake",
            "[[tasks]]\neach_chunk = { file = [1], lines = 2 }\n",
            &[(Code::SpecType, "[1]", "`file` takes a string")],
        ),
        (
            "dates",
            "[vars]\nday = 1979-05-27\n",
            &[(Code::SpecType, "1979-05-27", "dates are not supported; quote the value")],
        ),
        ("syntax", "name = \"x\nvars = 1\n", &[(Code::SpecSyntax, "", "invalid basic string")]),
        ("duplicate", "name = \"a\"\nname = \"b\"\n", &[(Code::SpecDuplicateKey, "name", "duplicate key")]),
    ];
    for (name, text, expected) in cases {
        check(name, Format::Toml, text, expected);
    }
}

#[test]
fn yaml_mistakes_are_all_reported() {
    let cases: &[(&str, &str, &[Expect])] = &[
        (
            "typo",
            "tasks:\n  - name: a\n    comand: echo\n",
            &[(Code::SpecUnknownKey, "comand", "did you mean `command`?")],
        ),
        ("synonym", "tasks:\n  - depends_on: [a]\n", &[(Code::SpecUnknownKey, "depends_on", "did you mean `after`?")]),
        (
            "three independent mistakes",
            "tasks:\n  - name: a\n    cpus: [1]\n    inputs: [a, 2]\ntemplates:\n  t:\n    bogus: 1\n",
            &[
                (Code::SpecType, "[1]", "`cpus` takes a number or a string"),
                (Code::SpecType, "2", "expected a string, found the number 2"),
                (Code::SpecUnknownKey, "bogus", "unknown key `bogus` in template"),
            ],
        ),
        (
            "wrong types",
            "name: 3\ntasks: {a: 1}\ndefaults: {variants: [{cpus: [2]}]}\n",
            &[
                (Code::SpecType, "3", "`name` takes a string"),
                (Code::SpecType, "{a: 1}", "expected a list, found a table"),
                (Code::SpecType, "[2]", "`cpus` takes a number"),
            ],
        ),
        (
            "missing lines",
            "tasks:\n  - each_chunk: {file: f}\n",
            &[(Code::SpecMissingKey, "{file: f}", "add `lines: ...`")],
        ),
        (
            "duplicate keys",
            "name: a\ntasks:\n  - name: x\n    command: a\n    command: b\n",
            &[(Code::SpecDuplicateKey, "command", "`command` is already set on line 4")],
        ),
        (
            "duplicate quoted keys, and a mistake after them",
            "\"name\": a\nname: b\nbogus: 1\n",
            &[
                (Code::SpecDuplicateKey, "name", "already set on line 1"),
                (Code::SpecUnknownKey, "bogus", "at top level"),
            ],
        ),
        (
            "non-ASCII before a syntax error",
            "name: \"ünï ✓\"\nvars: {a: 1}}\n",
            &[(Code::SpecSyntax, "}", "invalid YAML")],
        ),
        (
            "non-ASCII before a mistake",
            "name: \"ünï ✓\"  # ✓✓\ncomand: x\nretries: 2\n",
            &[
                (Code::SpecUnknownKey, "comand", "at top level"),
                (Code::SpecUnknownKey, "retries", "unknown key `retries`"),
            ],
        ),
        ("two documents", "name: a\n---\nname: b\n", &[(Code::SpecSyntax, "", "more than one YAML document")]),
        ("not a table", "- a\n- b\n", &[(Code::SpecType, "- a\n- b", "must be a table")]),
        ("bad tag", "name: !!int abc\n", &[(Code::SpecSyntax, "!!int abc", "does not match its tag")]),
        (
            "unquoted template",
            "tasks:\n  - each_line: {{ vars.list }}\n    cpus: [1]\n",
            &[
                (Code::SpecType, "{{ vars.list }}", "unquoted template"),
                (Code::SpecType, "[1]", "`cpus` takes a number"),
            ],
        ),
    ];
    for (name, text, expected) in cases {
        check(name, Format::Yaml, text, expected);
    }
}

#[test]
fn yaml_aliases_are_resolved() {
    let text = "defaults:\n  env: &env {A: \"1\"}\ntasks:\n  - name: a\n    env: *env\n";
    let workflow = ok(text, Format::Yaml);
    let env = workflow.tasks[0].value.env.as_ref().map(|env| &text[env.span.clone()]);
    assert_eq!(env, Some("*env"));
    let a = workflow.tasks[0].value.env.as_ref().and_then(|env| env.value.get("A").cloned());
    assert_eq!(a.map(|a| (a.value.0, &text[a.span])), Some(("1".to_owned(), "\"1\"")));
}

/// Documents nested `n` levels deep, each way YAML nests, with a scalar
/// (or `[]`, `{}`) innermost.
fn nested_yaml(n: usize) -> [(&'static str, String); 6] {
    let indented = |item: &str, last: &str| {
        let mut text: String = (0..n).map(|i| format!("{}{item}\n", " ".repeat(i))).collect();
        text.push_str(&format!("{}{last}\n", " ".repeat(n)));
        text
    };
    [
        ("block mappings by indentation", indented("a:", "a: 1")),
        ("block sequences by indentation", format!("tasks:\n{}", indented("-", "x"))),
        ("block sequences on one line", format!("{}x\n", "- ".repeat(n))),
        ("flow sequences", format!("tasks: {}{}\n", "[".repeat(n), "]".repeat(n))),
        ("flow mappings", format!("tasks: {}1{}\n", "{a: ".repeat(n), "}".repeat(n))),
        ("aliases of aliases", {
            let mut text = "a0: &a0 x\n".to_owned();
            for i in 1..=n.div_ceil(50) {
                text.push_str(&format!("a{i}: &a{i} {}*a{}{}\n", "[".repeat(50), i - 1, "]".repeat(50)));
            }
            text
        }),
    ]
}

/// Issue 18: YAML nested 8,000 levels deep is a diagnostic, not a stack
/// overflow: its depth is measured from the parser's events before any
/// tree is built. This runs on a test thread, whose stack is smaller than
/// the CLI's.
#[test]
fn deeply_nested_yaml_is_an_error_not_a_stack_overflow() {
    for (name, text) in nested_yaml(8000) {
        let diags = parse_text(&text, Format::Yaml).expect_err(name);
        let messages: Vec<(Code, &str)> = diags.iter().map(|d| (d.code, d.message.as_str())).collect();
        assert_eq!(messages, [(Code::SpecSyntax, "the document is nested too deeply")], "{name}");
    }
    // 40 levels are fine (the limit is 64; aliases of aliases round up to 50 a level).
    for (name, text) in nested_yaml(40) {
        let diags = parse_text(&text, Format::Yaml).err().unwrap_or_default();
        assert!(diags.iter().all(|d| !d.message.contains("nested too deeply")), "{name}: {diags:#?}");
    }
}

/// Issue 18: TOML nested 8,000 levels deep is a diagnostic too.
#[test]
fn deeply_nested_toml_is_an_error_not_a_stack_overflow() {
    let n = 8000;
    let cases = [
        ("arrays", format!("a = {}{}\n", "[".repeat(n), "]".repeat(n))),
        ("inline tables", format!("a = {}1{}\n", "{b = ".repeat(n), "}".repeat(n))),
        ("dotted keys", format!("a{} = 1\n", ".a".repeat(n))),
        ("table headers", format!("[a{}]\nb = 1\n", ".a".repeat(n))),
    ];
    for (name, text) in cases {
        let diags = parse_text(&text, Format::Toml).expect_err(name);
        assert_eq!(diags.iter().map(|d| d.code).collect::<Vec<_>>(), [Code::SpecSyntax], "{name}: {diags:#?}");
    }
}

#[test]
fn vars_files_read_nested_values_and_point_into_themselves() {
    let toml = Source::new("vars.toml", "threads = 4\n[ref]\nname = \"hg38\"\nchroms = [1, \"X\"]\n");
    let vars = parse_vars(&toml, Format::Toml).unwrap_or_else(|d| panic!("{d:#?}"));
    assert_eq!(vars["threads"].value, serde_json::json!(4));
    assert_eq!(vars["ref"].value, serde_json::json!({ "name": "hg38", "chroms": [1, "X"] }));
    assert_eq!(&toml.text[vars["threads"].span.clone()], "4");

    let json = Source::new("vars.json", r#"{"ratio": 0.5, "none": null, "ok": true}"#);
    let format = Format::from_path(Path::new(&json.name));
    let vars = parse_vars(&json, format.unwrap_or(Format::Toml)).unwrap_or_else(|d| panic!("{d:#?}"));
    assert_eq!(vars["ratio"].value, serde_json::json!(0.5));
    assert_eq!(vars["none"].value, serde_json::Value::Null);
    assert_eq!(&json.text[vars["ok"].span.clone()], "true");

    let bad = Source::new("vars.yaml", "[1, 2]\n");
    let diags = parse_vars(&bad, Format::Yaml).err().unwrap_or_default();
    assert_eq!(diags.len(), 1);
    assert!(diags[0].source.as_ref().is_some_and(|source| Arc::ptr_eq(source, &bad)));
}

#[test]
fn formats_follow_the_extension() {
    let cases = [
        ("flow.toml", Some(Format::Toml)),
        ("flow.yaml", Some(Format::Yaml)),
        ("flow.YML", Some(Format::Yaml)),
        ("vars.json", Some(Format::Yaml)),
        ("flow.txt", None),
        ("flow", None),
    ];
    for (path, format) in cases {
        assert_eq!(Format::from_path(Path::new(path)), format, "{path}");
    }
}

/// One edit of a file's bytes.
#[derive(Debug, Clone)]
enum Edit {
    Replace(Index, u8),
    Insert(Index, u8),
    Delete(Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    let byte = prop_oneof![any::<u8>(), select(b"[]{}:,\"'#\n -=&*!|>.\\\t".to_vec())];
    prop_oneof![
        (any::<Index>(), byte.clone()).prop_map(|(at, b)| Edit::Replace(at, b)),
        (any::<Index>(), byte).prop_map(|(at, b)| Edit::Insert(at, b)),
        any::<Index>().prop_map(Edit::Delete),
    ]
}

fn mangle(text: &str, edits: &[Edit], cut: Option<Index>) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for edit in edits {
        match *edit {
            Edit::Replace(at, b) if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                bytes[at] = b;
            }
            Edit::Insert(at, b) => bytes.insert(at.index(bytes.len() + 1), b),
            Edit::Delete(at) if !bytes.is_empty() => {
                bytes.remove(at.index(bytes.len()));
            }
            _ => {}
        }
    }
    if let Some(cut) = cut {
        bytes.truncate(cut.index(bytes.len() + 1));
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn assert_spans_fit(text: &str, diags: &[Diagnostic]) {
    for diag in diags {
        let span = diag.span.clone();
        let fits = span.as_ref().is_some_and(|span| {
            span.start <= span.end
                && span.end <= text.len()
                && text.is_char_boundary(span.start)
                && text.is_char_boundary(span.end)
        });
        assert!(fits, "{span:?} in {} bytes: {diag:?}", text.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn mangled_files_give_well_placed_diagnostics(
        edits in prop::collection::vec(edit(), 0..8),
        cut in prop::option::weighted(0.3, any::<Index>()),
        non_ascii in any::<bool>(),
    ) {
        for (base, format) in [(TOML, Format::Toml), (YAML, Format::Yaml)] {
            let base = if non_ascii { base.replace("demo", "démo ✓") } else { base.to_owned() };
            let text = mangle(&base, &edits, cut);
            if let Err(diags) = parse_text(&text, format) {
                prop_assert!(!diags.is_empty());
                assert_spans_fit(&text, &diags);
            }
        }
    }
}
