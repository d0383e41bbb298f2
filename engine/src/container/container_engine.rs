//! [`ContainerEngine`]: the programs that run container images.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A container engine flow knows how to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContainerEngine {
    /// Podman (`podman run`).
    Podman,
    /// Docker (`docker run`).
    Docker,
    /// Apptainer (`apptainer exec`), the engine of most HPC sites.
    Apptainer,
    /// Singularity (`singularity exec`), Apptainer's predecessor.
    Singularity,
}

impl ContainerEngine {
    /// Every engine, in the order their names are listed.
    pub const ALL: [ContainerEngine; 4] = [Self::Podman, Self::Docker, Self::Apptainer, Self::Singularity];

    /// The engine's name, which is also its program.
    pub fn name(self) -> &'static str {
        match self {
            Self::Podman => "podman",
            Self::Docker => "docker",
            Self::Apptainer => "apptainer",
            Self::Singularity => "singularity",
        }
    }

    /// The engine called `name`, if flow knows it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether the engine runs `.sif` files (Apptainer and Singularity)
    /// rather than images in a local store (Podman and Docker).
    pub fn runs_sif(self) -> bool {
        matches!(self, Self::Apptainer | Self::Singularity)
    }
}

/// Whether `program` is an executable file in one of the directories of `path` (a `PATH` value).
pub fn on_path(program: &str, path: Option<&std::ffi::OsStr>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = path else { return false };
    std::env::split_paths(path).any(|dir| {
        let file = Path::new(&dir).join(program);
        fs_err::metadata(&file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for engine in ContainerEngine::ALL {
            assert_eq!(ContainerEngine::parse(engine.name()), Some(engine));
        }
        assert_eq!(ContainerEngine::parse("podmn"), None);
    }

    #[test]
    fn on_path_finds_executables_only() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("podman");
        fs_err::write(&exe, "#!/bin/sh\n").unwrap();
        fs_err::write(dir.path().join("docker"), "").unwrap();
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        assert!(on_path("podman", Some(&path)));
        assert!(!on_path("docker", Some(&path)));
        assert!(!on_path("podman", None));
    }
}
