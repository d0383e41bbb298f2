//! [`identify`]: what identifies an image's content, for fingerprints,
//! and whether the engine can run it at all.

use std::process::{Command, Stdio};

use thiserror::Error;

use super::container_engine::{ContainerEngine, on_path};
use super::image::Image;
use crate::shell_word::shell_word;

/// Why an image cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ImageError {
    /// The engine's program is not on `PATH`.
    #[error("container engine `{0}` is not installed (not found on PATH)")]
    NoEngine(&'static str),
    /// No engine is configured and none is installed.
    #[error("no container engine found on PATH (looked for {0})")]
    NoneFound(String),
    /// Podman and Docker cannot run a `.sif` file.
    #[error("`{engine}` cannot run the Singularity image file `{image}`; use apptainer or singularity")]
    Unsupported {
        /// The engine.
        engine: &'static str,
        /// The file.
        image: String,
    },
    /// The `.sif` file cannot be read.
    #[error("image file `{image}` cannot be read: {reason}")]
    MissingFile {
        /// The file.
        image: String,
        /// What reading it said.
        reason: String,
    },
    /// The engine's local store has no such image.
    #[error(
        "image `{image}` is not in {engine}'s local images; fetch it first (`{engine} pull {}`, or build or import it)",
        shell_word(image)
    )]
    NotFound {
        /// The engine.
        engine: &'static str,
        /// The reference.
        image: String,
    },
}

/// The identity of `image` as `engine` would run it: a `.sif` file's
/// blake3 content hash, the image id Podman or Docker report for a local
/// image, or for Apptainer and Singularity the reference itself (they
/// fetch it when they run it). `path` is the `PATH` to find the engine on.
/// Fails when the engine is missing or cannot find the image.
pub fn identify(engine: ContainerEngine, image: &Image, path: Option<&std::ffi::OsStr>) -> Result<String, ImageError> {
    if !on_path(engine.name(), path) {
        return Err(ImageError::NoEngine(engine.name()));
    }
    match image {
        Image::Sif(file) if !engine.runs_sif() => {
            Err(ImageError::Unsupported { engine: engine.name(), image: file.display().to_string() })
        }
        Image::Sif(file) => {
            let missing = |e: std::io::Error| ImageError::MissingFile {
                image: file.display().to_string(),
                reason: e.to_string(),
            };
            let mut hasher = blake3::Hasher::new();
            hasher.update_reader(fs_err::File::open(file).map_err(missing)?).map_err(missing)?;
            Ok(format!("blake3:{}", hasher.finalize().to_hex()))
        }
        Image::Reference(reference) if engine.runs_sif() => Ok(reference.clone()),
        Image::Reference(_) => {
            let argument = image.argument(engine);
            let mut command = Command::new(engine.name());
            if let Some(path) = path {
                command.env("PATH", path);
            }
            let output = command
                .args(["image", "inspect", "--format", "{{.Id}}", "--", &argument])
                .stdin(Stdio::null())
                .output();
            let not_found = || ImageError::NotFound { engine: engine.name(), image: argument.clone() };
            let output = output.map_err(|_| not_found())?;
            let id = String::from_utf8_lossy(&output.stdout).trim().to_owned();
            if !output.status.success() || id.is_empty() {
                return Err(not_found());
            }
            Ok(if id.contains(':') { id } else { format!("sha256:{id}") })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use super::*;

    /// A directory with an executable `name` running `script`, as a PATH value.
    fn fake(dir: &Path, name: &str, script: &str) -> std::ffi::OsString {
        let file = dir.join(name);
        fs_err::write(&file, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::env::join_paths([dir, Path::new("/usr/bin"), Path::new("/bin")]).unwrap()
    }

    #[test]
    fn a_sif_file_is_identified_by_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = fake(dir.path(), "apptainer", "exit 0");
        let sif = dir.path().join("t.sif");
        fs_err::write(&sif, "one").unwrap();
        let image = Image::Sif(sif.clone());
        let first = identify(ContainerEngine::Apptainer, &image, Some(&path)).unwrap();
        assert_eq!(first, format!("blake3:{}", blake3::hash(b"one").to_hex()));
        fs_err::write(&sif, "two").unwrap();
        assert_ne!(identify(ContainerEngine::Apptainer, &image, Some(&path)).unwrap(), first);
        fs_err::remove_file(&sif).unwrap();
        assert!(matches!(
            identify(ContainerEngine::Apptainer, &image, Some(&path)),
            Err(ImageError::MissingFile { .. })
        ));
        let bare = std::env::join_paths([dir.path()]).unwrap();
        assert!(matches!(identify(ContainerEngine::Podman, &image, Some(&bare)), Err(ImageError::NoEngine("podman"))));
    }

    #[test]
    fn a_reference_is_identified_by_the_id_the_engine_reports() {
        let dir = tempfile::tempdir().unwrap();
        let path =
            fake(dir.path(), "podman", r#"[ "$5" = -- ] && [ "$6" = localhost/t:1 ] && echo abc123 || exit 125"#);
        let known = Image::Reference("docker://localhost/t:1".into());
        assert_eq!(identify(ContainerEngine::Podman, &known, Some(&path)).unwrap(), "sha256:abc123");
        let unknown = Image::Reference("localhost/u:1".into());
        let err = identify(ContainerEngine::Podman, &unknown, Some(&path)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "image `localhost/u:1` is not in podman's local images; fetch it first (`podman pull localhost/u:1`, or build or import it)"
        );
        // Issue 26: the command shown can be pasted into a shell as it is.
        let odd = Image::Reference("localhost/u:1 $(x)".into());
        let err = identify(ContainerEngine::Podman, &odd, Some(&path)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "image `localhost/u:1 $(x)` is not in podman's local images; fetch it first (`podman pull 'localhost/u:1 $(x)'`, or build or import it)"
        );
        let sif = Image::Sif(dir.path().join("t.sif"));
        assert!(matches!(identify(ContainerEngine::Podman, &sif, Some(&path)), Err(ImageError::Unsupported { .. })));
    }
}
