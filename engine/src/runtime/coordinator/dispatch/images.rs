//! [`check_images`]: at run start, every task image the graph names is
//! checked with the engine that will run it, and its identity recorded in
//! the graph, before any task starts; [`image_problems`]: the same check
//! for `flow check` and `flow plan`, as [`ImageProblem`]s.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use crate::container::{ContainerEngine, Image, ImageError, ResolvedImage, identify, on_path};
use crate::ir::{Finally, Graph};

/// One image of a workflow that cannot run as things are.
#[derive(Debug)]
pub struct ImageProblem {
    /// The image, as the tasks name it.
    pub image: String,
    /// The tasks that name it, by name (`[finally]` by its label).
    pub tasks: Vec<String>,
    /// What is wrong.
    pub error: ImageError,
}

impl ImageProblem {
    /// Whether the engine itself is missing (rather than the image).
    pub fn no_engine(&self) -> bool {
        matches!(self.error, ImageError::NoEngine(_) | ImageError::NoneFound(_))
    }

    /// Whether the image is missing where the engine looks: not in its
    /// local store, or a `.sif` file that cannot be read.
    pub fn image_missing(&self) -> bool {
        matches!(self.error, ImageError::NotFound { .. } | ImageError::MissingFile { .. })
    }
}

impl std::fmt::Display for ImageProblem {
    /// "cannot run task `a` in container `x`: what is wrong; what to do".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let noun = if self.tasks.len() == 1 { "task" } else { "tasks" };
        let tasks = self.tasks.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ");
        let help = if self.no_engine() {
            "; install it, or name another with `[containers] engine` or a profile's `container_engine`"
        } else {
            ""
        };
        write!(f, "cannot run {noun} {tasks} in container `{}`: {}{help}", self.image, self.error)
    }
}

/// Checks each distinct `container` of `graph`'s tasks (once per image)
/// and records it in `graph.images`. The engine is `configured` (the
/// profile's), else the workflow's, else the default for the image among
/// those on `path`. Returns one line per image that cannot run: which
/// tasks, which image, what is wrong and what to do.
pub fn check_images(
    graph: &mut Graph,
    configured: Option<ContainerEngine>,
    base_dir: &Path,
    path: Option<&OsStr>,
) -> Result<(), Vec<String>> {
    let (images, problems) = resolve_images(graph, configured, base_dir, path);
    if !problems.is_empty() {
        return Err(problems.iter().map(ToString::to_string).collect());
    }
    graph.images = images;
    Ok(())
}

/// The images of `graph` that cannot run, found as [`check_images`]
/// finds them (for `flow check` and `flow plan`, which change nothing).
pub fn image_problems(
    graph: &Graph,
    configured: Option<ContainerEngine>,
    base_dir: &Path,
    path: Option<&OsStr>,
) -> Vec<ImageProblem> {
    resolve_images(graph, configured, base_dir, path).1
}

/// Each distinct image of `graph`, resolved, and the problems of those
/// that cannot be.
fn resolve_images(
    graph: &Graph,
    configured: Option<ContainerEngine>,
    base_dir: &Path,
    path: Option<&OsStr>,
) -> (BTreeMap<String, ResolvedImage>, Vec<ImageProblem>) {
    let mut users: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for group in &graph.groups {
        if let Some(text) = &group.template.container {
            users.entry(text).or_default().push(group.name.clone());
        }
    }
    if let Some(text) = graph.finally.as_ref().and_then(|f| f.container.as_ref()) {
        users.entry(text).or_default().push(Finally::LABEL.to_owned());
    }
    let mut images = BTreeMap::new();
    let mut problems = Vec::new();
    for (text, tasks) in users {
        let image = Image::parse(text, base_dir);
        let engine = configured.or(graph.container_engine);
        let resolved = engine
            .or_else(|| image.default_engine(|name| on_path(name, path)))
            .ok_or_else(|| {
                let names = ContainerEngine::ALL.map(ContainerEngine::name).join(", ");
                ImageError::NoneFound(names)
            })
            .and_then(|engine| {
                let identity = identify(engine, &image, path)?;
                Ok(ResolvedImage { engine, image, identity })
            });
        match resolved {
            Ok(resolved) => {
                images.insert(text.to_owned(), resolved);
            }
            Err(error) => problems.push(ImageProblem { image: text.to_owned(), tasks, error }),
        }
    }
    (images, problems)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::ir::{Group, TaskTemplate};

    fn graph(containers: &[(&str, &str)]) -> Graph {
        let groups = containers
            .iter()
            .map(|(name, image)| {
                let mut t = TaskTemplate::shell("true");
                t.container = Some((*image).to_owned());
                Group::range(name, 1, t)
            })
            .collect();
        Graph {
            name: "t".into(),
            vars: BTreeMap::new(),
            groups,
            edges: Vec::new(),
            container_engine: None,
            images: BTreeMap::new(),
            max_fails: None,
            finally: None,
            dropped: Vec::new(),
        }
    }

    #[test]
    fn each_image_is_checked_once_and_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let calls = dir.path().join("calls");
        let podman = dir.path().join("podman");
        let script = format!(
            "#!/bin/sh\necho \"$6\" >> {}\n[ \"$6\" = localhost/t:1 ] && echo f00 || exit 125\n",
            calls.display()
        );
        fs_err::write(&podman, script).unwrap();
        std::fs::set_permissions(&podman, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([dir.path(), Path::new("/bin"), Path::new("/usr/bin")]).unwrap();

        let mut g = graph(&[("a", "localhost/t:1"), ("b", "localhost/t:1")]);
        check_images(&mut g, None, dir.path(), Some(&path)).unwrap();
        assert_eq!(fs_err::read_to_string(&calls).unwrap(), "localhost/t:1\n");
        let resolved = &g.images["localhost/t:1"];
        assert_eq!((resolved.engine, resolved.identity.as_str()), (ContainerEngine::Podman, "sha256:f00"));

        let mut g = graph(&[("a", "localhost/gone:1"), ("b", "localhost/gone:1"), ("c", "x.sif")]);
        let problems = check_images(&mut g, None, dir.path(), Some(&path)).unwrap_err();
        assert_eq!(
            problems,
            vec![
                "cannot run tasks `a`, `b` in container `localhost/gone:1`: image `localhost/gone:1` is not in \
                 podman's local images; fetch it first (`podman pull localhost/gone:1`, or build or import it)"
                    .to_owned(),
                "cannot run task `c` in container `x.sif`: no container engine found on PATH (looked for podman, \
                 docker, apptainer, singularity); install it, or name another with `[containers] engine` or a \
                 profile's `container_engine`"
                    .to_owned(),
            ]
        );
        assert!(g.images.is_empty());
    }

    #[test]
    fn the_profile_engine_wins_over_the_workflow_engine() {
        let dir = tempfile::tempdir().unwrap();
        let mut g = graph(&[("a", "localhost/t:1")]);
        g.container_engine = Some(ContainerEngine::Podman);
        let path = std::env::join_paths([dir.path()]).unwrap();
        let problems = check_images(&mut g, Some(ContainerEngine::Docker), dir.path(), Some(&path)).unwrap_err();
        assert!(problems[0].contains("container engine `docker` is not installed"), "{problems:?}");
    }
}
