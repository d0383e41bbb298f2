//! `flow check`'s note on containers: which engine a run would use for the
//! workflow's images, and where that choice comes from; and the warnings
//! `flow check` and `flow plan` give for an image that engine lacks.

use std::collections::BTreeSet;

use flow_engine::container::{Image, on_path};
use flow_engine::profile::Profile;
use flow_engine::runtime::{ImageProblem, image_problems};

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

/// Each image the engine that would run it lacks, as `flow run` would
/// refuse it, with the byte offset of the `container` key of its first
/// task. Only a missing image is said: an engine that is not installed is
/// left to [`engines`]' note (the image cannot be looked for), and an
/// engine that cannot run the image to `flow run`. Images are looked up
/// where `flow run` looks (`podman image inspect`: cheap, local, no pull).
pub fn missing_images(loaded: &Loaded, profile: Option<&Profile>) -> Vec<(Option<usize>, String)> {
    let graph = &loaded.graph;
    if graph.groups.iter().all(|g| g.template.container.is_none()) && graph.finally.is_none() {
        return Vec::new();
    }
    let Ok(dir) = loaded.dir() else { return Vec::new() };
    let configured = profile.and_then(|p| p.container_engine);
    let path = std::env::var_os("PATH");
    image_problems(graph, configured, &dir, path.as_deref())
        .into_iter()
        .filter(ImageProblem::image_missing)
        .map(|p| {
            let group = p.tasks.first().and_then(|t| graph.groups.iter().find(|g| &g.name == t));
            (group.map(|g| g.keys.container.as_ref().map_or(g.span.start, |c| c.start)), p.to_string())
        })
        .collect()
}
