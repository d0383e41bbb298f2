//! [`Image`]: a task's `container` value, read.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::container_engine::ContainerEngine;

/// The image a task runs in.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Image {
    /// A Singularity image file (absolute path).
    Sif(PathBuf),
    /// An image reference: `docker://ghcr.io/org/image:tag`, `localhost/name:tag`.
    Reference(String),
}

impl Image {
    /// Reads a `container` value: a name ending in `.sif` is a file,
    /// relative to `base` (the workflow's directory); anything else is a reference.
    pub fn parse(text: &str, base: &Path) -> Image {
        if text.ends_with(".sif") && !text.contains("://") {
            Image::Sif(base.join(text))
        } else {
            Image::Reference(text.to_owned())
        }
    }

    /// The image as `engine` takes it on its command line: Podman and
    /// Docker take a reference without the `docker://` scheme, Apptainer
    /// and Singularity a file or a URI (`docker://` added to a bare name).
    pub fn argument(&self, engine: ContainerEngine) -> String {
        match self {
            Image::Sif(path) => path.display().to_string(),
            Image::Reference(r) if engine.runs_sif() && !r.contains("://") => format!("docker://{r}"),
            Image::Reference(r) if engine.runs_sif() => r.clone(),
            Image::Reference(r) => r.strip_prefix("docker://").unwrap_or(r).to_owned(),
        }
    }
}

impl Image {
    /// The engine for this image when none is configured: Apptainer (or
    /// Singularity) for a `.sif` file; otherwise the first of Podman,
    /// Docker, Apptainer and Singularity that `found` says is installed.
    /// `None` when none is.
    pub fn default_engine(&self, found: impl Fn(&str) -> bool) -> Option<ContainerEngine> {
        let order: &[ContainerEngine] = match self {
            Image::Sif(_) => &[ContainerEngine::Apptainer, ContainerEngine::Singularity],
            Image::Reference(_) => &ContainerEngine::ALL,
        };
        order.iter().copied().find(|e| found(e.name()))
    }
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Image::Sif(path) => write!(f, "{}", path.display()),
            Image::Reference(r) => f.write_str(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sif_files_are_relative_to_the_workflow() {
        let base = Path::new("/w");
        assert_eq!(Image::parse("img/tools.sif", base), Image::Sif("/w/img/tools.sif".into()));
        assert_eq!(Image::parse("/opt/t.sif", base), Image::Sif("/opt/t.sif".into()));
        assert_eq!(Image::parse("localhost/t:1", base), Image::Reference("localhost/t:1".into()));
    }

    #[test]
    fn the_default_follows_the_image_and_what_is_installed() {
        let sif = Image::Sif("/w/img.sif".into());
        let reference = Image::Reference("localhost/x:1".into());
        let only = |names: &'static [&'static str]| move |n: &str| names.contains(&n);
        assert_eq!(sif.default_engine(only(&["podman", "apptainer"])), Some(ContainerEngine::Apptainer));
        assert_eq!(sif.default_engine(only(&["singularity"])), Some(ContainerEngine::Singularity));
        assert_eq!(sif.default_engine(only(&["podman"])), None);
        assert_eq!(reference.default_engine(only(&["docker", "podman"])), Some(ContainerEngine::Podman));
        assert_eq!(reference.default_engine(only(&["docker"])), Some(ContainerEngine::Docker));
        assert_eq!(reference.default_engine(only(&["apptainer"])), Some(ContainerEngine::Apptainer));
        assert_eq!(reference.default_engine(only(&[])), None);
    }

    #[test]
    fn each_engine_gets_the_reference_it_reads() {
        let hub = Image::Reference("docker://ghcr.io/org/x:2".into());
        let local = Image::Reference("localhost/t:1".into());
        assert_eq!(hub.argument(ContainerEngine::Podman), "ghcr.io/org/x:2");
        assert_eq!(hub.argument(ContainerEngine::Apptainer), "docker://ghcr.io/org/x:2");
        assert_eq!(local.argument(ContainerEngine::Docker), "localhost/t:1");
        assert_eq!(local.argument(ContainerEngine::Singularity), "docker://localhost/t:1");
        assert_eq!(Image::Sif("/w/t.sif".into()).argument(ContainerEngine::Apptainer), "/w/t.sif");
    }
}
