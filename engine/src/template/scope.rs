//! The template contexts: what a group's instances share ([`group_scope`])
//! and what instance `i` adds ([`instance_scope`]): `index`, `item`,
//! `item_json` and `chunk`.

use std::sync::Arc;

use minijinja::Value;

use crate::ir::{Domain, Expansion, Item, Resources};
use crate::template::{GroupScope, Scope, json_value};

/// The context instance `i` of a group renders its templates with. `domain`
/// is the group's base domain (`for_each` already followed); `attempt` is
/// known for the keys rendered when the instance starts.
pub fn instance_scope(group: &Arc<GroupScope>, domain: &Domain, i: u64, attempt: Option<u32>) -> Value {
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
    let chunk = match (domain, domain.chunk_file(i)) {
        (Domain::Chunks { lines, total_lines, .. }, Some(path)) => {
            let first = i * lines;
            let n = (*lines).min(total_lines.saturating_sub(first));
            json_value(&serde_json::json!({ "path": path, "lines": n, "first": first + 1 }))
        }
        (Domain::Nested { expansion: Expansion::Chunks { lines, .. }, parts, .. }, Some(path)) => {
            let first = domain.subindex(i).unwrap_or_default() * lines;
            let n = parts.item(i).map_or(0, |text| text.lines().count());
            json_value(&serde_json::json!({ "path": path, "lines": n, "first": first + 1 }))
        }
        _ => Value::UNDEFINED,
    };
    let attempt = attempt.map_or(Value::UNDEFINED, Value::from);
    let subindex = domain.subindex(i).map_or(Value::UNDEFINED, Value::from);
    let index = Value::from(domain.index(i));
    Scope { group: group.clone(), index, item, item_json, chunk, subindex, attempt }.into_value()
}

/// The context every instance of a group shares: `vars`, `task` (name,
/// count, and `for_each` when it mirrors another task) and `resources` (of
/// the variant the instance runs with).
pub fn group_scope(
    vars: &Value,
    name: &str,
    count: u64,
    for_each: Option<&str>,
    resources: &Resources,
) -> Arc<GroupScope> {
    let mut task = serde_json::json!({ "name": name, "count": count });
    if let (Some(target), Some(obj)) = (for_each, task.as_object_mut()) {
        obj.insert("for_each".into(), target.into());
    }
    Arc::new(GroupScope {
        vars: namespace_vars(vars, name),
        task: json_value(&task),
        resources: resources_value(resources),
    })
}

/// The variables a task named `name` sees as `vars`: the workflow's, or
/// for a task of an included file (`ligen.score`), that file's
/// (`vars.ligen`).
pub fn namespace_vars(vars: &Value, name: &str) -> Value {
    let mut scope = vars.clone();
    let mut words: Vec<&str> = name.split('.').collect();
    words.pop();
    for word in words {
        scope = scope.get_attr(word).unwrap_or(Value::UNDEFINED);
    }
    scope
}

/// `resources` in the template context: cpus, gpus, memory in MiB, custom ones by name.
fn resources_value(r: &Resources) -> Value {
    let mut map = serde_json::Map::new();
    map.insert("cpus".into(), number(r.cpus.as_f64()));
    map.insert("gpus".into(), number(r.gpus.as_f64()));
    map.insert("memory".into(), (r.memory >> 20).into());
    for (k, v) in &r.custom {
        map.insert(k.clone(), number(v.as_f64()));
    }
    json_value(&map)
}

/// Whole numbers as integers so `{{ resources.cpus }}` renders `8`, not `8.0`.
fn number(n: f64) -> serde_json::Value {
    if n.fract() == 0.0 { serde_json::Value::from(n as i64) } else { serde_json::Value::from(n) }
}
