//! `flow plan`: the human summary and the JSON IR.

use crate::support::Test;

const PIPELINE: &str = r#"
name = "pipe"
[[tasks]]
name = "gen"
range = "1-4"
command = "echo {{ index }} > gen/{{ index }}.txt"
outputs = ["gen/{{ index }}.txt"]

[[tasks]]
name = "square"
for_each = "gen"
command = "x"
inputs = ["gen/{{ index }}.txt"]
outputs = ["sq/{{ index }}.txt"]
cpus = 2

[[tasks]]
name = "sum"
command = "cat sq/*.txt"
inputs = ["sq/*.txt"]

[[tasks]]
name = "chain"
range = "0-2"
command = "x"
after = ["{% if index > 0 %}chain[{{ index - 1 }}]{% endif %}"]
"#;

#[test]
fn summary_lists_tasks_edges_totals_and_critical_path() {
    let out = Test::new().workflow(PIPELINE).args(["plan"]).success();
    let words = out.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n");
    assert!(out.starts_with("pipe: 4 tasks, 12 instances, 3 edges"), "{out}");
    for line in [
        "gen 4 range 1-4 cpus 1",
        "square 4 for_each gen cpus 2",
        "gen → square element-wise files",
        "square → sum all files",
        "chain → chain explicit (2 pairs) after",
    ] {
        assert!(words.contains(line), "missing {line:?} in:\n{out}");
    }
    assert!(out.contains("totals: 12 instances, 16 cpu-tasks"), "{out}");
    assert!(out.contains("critical path: 3 tasks"), "{out}");
}

#[test]
fn json_is_the_compact_ir() {
    let out = Test::new().workflow(PIPELINE).args(["plan", "--json"]).success();
    let ir: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let groups = ir["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 4);
    assert_eq!(
        groups[0]["domain"],
        serde_json::json!({ "kind": "range", "ranges": [{ "start": 1, "count": 4, "step": 1 }] })
    );
    assert_eq!(groups[1]["domain"]["kind"], "same");
    let kinds: Vec<&str> =
        ir["edges"].as_array().unwrap().iter().map(|e| e["kind"]["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["element_wise", "all", "explicit"]);
    let graph: flow_engine::ir::Graph = serde_json::from_str(&out).expect("deserializes into the IR");
    assert_eq!(graph.instance_count(), 12);
}

#[test]
fn a_million_instances_stay_one_group() {
    let text = "[[tasks]]\nname = \"big\"\nrange = \"1-1000000\"\ncommand = \"echo {{ index }}\"\n";
    let out = Test::new().workflow(text).args(["plan", "--json"]).success();
    assert!(out.len() < 2_000, "IR of a 1,000,000-instance range is {} bytes", out.len());
    assert!(out.contains("\"count\": 1000000"));
}
