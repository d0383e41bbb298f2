//! `flow graph` in dot, mermaid and JSON, collapsed and per instance.

use crate::support::Test;

const TWO: &str = r#"
[[tasks]]
name = "a"
range = "1-3"
command = "x"
outputs = ["a{{ index }}"]

[[tasks]]
name = "b"
command = "x"
inputs = ["a1", "a3"]
"#;

#[test]
fn dot_collapses_arrays() {
    Test::new()
        .workflow(TWO)
        .args(["graph"])
        .stdout(
            r#"digraph "workflow" {
  rankdir=LR;
  node [shape=box];
  "a" [label="a ×3"];
  "b" [label="b"];
  "a" -> "b" [label="explicit"];
}
"#,
        )
        .success();
}

#[test]
fn mermaid_and_json() {
    let out = Test::new().workflow(TWO).args(["graph", "--format", "mermaid"]).success();
    insta::assert_snapshot!(out, @r#"
        flowchart LR
          n0["a ×3"]
          n1["b"]
          n0 -->|explicit| n1
    "#);
    let out = Test::new().workflow(TWO).args(["graph", "--format", "json"]).success();
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(json["nodes"].as_array().unwrap().len(), 2);
}

#[test]
fn instances_expand_every_node() {
    let out = Test::new().workflow(TWO).args(["graph", "--instances", "--format", "json"]).success();
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let ids: Vec<&str> = json["nodes"].as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a[1]", "a[2]", "a[3]", "b"]);
    let edges: Vec<(&str, &str)> = json["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["from"].as_str().unwrap(), e["to"].as_str().unwrap()))
        .collect();
    assert_eq!(edges, [("a[1]", "b"), ("a[3]", "b")]);
}
