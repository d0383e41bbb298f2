//! The template context of one instance: `index`, `item`, `item_json` and
//! `chunk` for instance `i` of a domain.

use std::sync::Arc;

use minijinja::Value;

use super::render::{GroupScope, Scope, json_value};
use crate::ir::{Domain, Item};

/// The context instance `i` of a group renders its templates with. `domain`
/// is the group's base domain (`for_each` already followed).
pub fn instance_scope(group: &Arc<GroupScope>, domain: &Domain, i: u64) -> Value {
    let (item, item_json) = match domain.item(i) {
        Item::None => (Value::UNDEFINED, Value::UNDEFINED),
        Item::Int(n) => (Value::from(n), Value::UNDEFINED),
        Item::Text(t) => (Value::from(t), Value::UNDEFINED),
        Item::Json(text) => {
            let parsed: serde_json::Value = serde_json::from_str(text).unwrap_or(serde_json::Value::Null);
            (json_value(&parsed), Value::from(text))
        }
        Item::Object(map) => {
            let text = serde_json::Value::Object(map.clone()).to_string();
            (json_value(&map), Value::from(text))
        }
    };
    let chunk = match domain {
        Domain::Chunks { dir, lines, total_lines, .. } => {
            let first = i * lines;
            let n = (*lines).min(total_lines.saturating_sub(first));
            json_value(&serde_json::json!({ "path": format!("{dir}/{i}.txt"), "lines": n, "first": first + 1 }))
        }
        _ => Value::UNDEFINED,
    };
    Scope { group: group.clone(), index: Value::from(domain.index(i)), item, item_json, chunk }.into_value()
}
