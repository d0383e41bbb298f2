//! `flow check`'s note on containers: which engine a run would use for the
//! workflow's images, and where that choice comes from.

use std::collections::BTreeSet;

use flow_engine::container::{Image, on_path};
use flow_engine::profile::Profile;

use crate::load_workflow::Loaded;

/// `containers: ENGINE (from …)`, or `None` when no task has a container.
/// The profile's engine wins over the workflow's `[containers] engine`;
/// without either, each image gets its default among the engines on PATH.
pub fn engines(loaded: &Loaded, profile: Option<&Profile>) -> Option<String> {
    let graph = &loaded.graph;
    let images: BTreeSet<&str> = graph.groups.iter().filter_map(|g| g.template.container.as_deref()).collect();
    if images.is_empty() {
        return None;
    }
    if let Some((engine, name)) = profile.and_then(|p| Some((p.container_engine?, &p.name))) {
        return Some(format!("containers: {} (from profile `{name}`)", engine.name()));
    }
    if let Some(engine) = graph.container_engine {
        return Some(format!("containers: {} (from the workflow's `[containers] engine`)", engine.name()));
    }
    let dir = loaded.dir().ok()?;
    let path = std::env::var_os("PATH");
    let each: Vec<String> = images
        .into_iter()
        .map(|text| match Image::parse(text, &dir).default_engine(|name| on_path(name, path.as_deref())) {
            Some(engine) => format!("{} for `{text}`", engine.name()),
            None => format!("no engine on PATH for `{text}`"),
        })
        .collect();
    Some(format!("containers: {} (the default for each image, found on PATH)", each.join(", ")))
}
