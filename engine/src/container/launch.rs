//! [`Launch`]: the command line that runs one task inside a container.

use std::path::{Path, PathBuf};

use super::container_engine::ContainerEngine;
use super::image::Image;

/// Everything the engine's command line is built from.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    /// The engine that runs the image.
    pub engine: ContainerEngine,
    /// The image.
    pub image: &'a Image,
    /// Directories to mount at the same path inside (any order; one inside another is mounted once).
    pub mounts: Vec<PathBuf>,
    /// The working directory inside.
    pub workdir: &'a Path,
    /// The task's environment (its `env` and the `FLOW_*` variables).
    pub env: &'a [(String, String)],
    /// The GPU ids the task was given.
    pub gpus: &'a [u32],
    /// The calling user's uid and gid.
    pub user: (u32, u32),
    /// The program to run inside, with its arguments.
    pub program: &'a [String],
}

/// The engine's program and arguments, and the environment to start it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Variables set on the engine's own process (Apptainer's `APPTAINERENV_*`).
    pub env: Vec<(String, String)>,
}

impl Launch<'_> {
    /// The command line: `podman run` / `docker run` with `--rm`, `--init`
    /// (so a signal reaches the task), the calling user, one `-v DIR:DIR`
    /// per mount, `-w`, `--env K=V` and a CDI device per GPU (inside, the
    /// devices are numbered from 0, so `CUDA_VISIBLE_DEVICES` is rewritten);
    /// or `apptainer exec` / `singularity exec` with `--bind`, `--pwd`,
    /// `--nv` when the task has GPUs, and the environment passed as
    /// `APPTAINERENV_K` (`SINGULARITYENV_K`) variables.
    pub fn command_line(&self) -> CommandLine {
        let engine = self.engine;
        let mut argv = vec![engine.name().to_owned()];
        let mut env = Vec::new();
        let mounts = outermost(&self.mounts);
        if engine.runs_sif() {
            argv.push("exec".into());
            for dir in &mounts {
                argv.extend(["--bind".into(), format!("{0}:{0}", dir.display())]);
            }
            argv.extend(["--pwd".into(), self.workdir.display().to_string()]);
            if !self.gpus.is_empty() {
                argv.push("--nv".into());
            }
            let prefix = if engine == ContainerEngine::Apptainer { "APPTAINERENV_" } else { "SINGULARITYENV_" };
            env.extend(self.env.iter().map(|(k, v)| (format!("{prefix}{k}"), v.clone())));
        } else {
            argv.extend(["run", "--rm", "--init", "--pull=never"].map(String::from));
            let (uid, gid) = self.user;
            if engine == ContainerEngine::Podman && uid != 0 {
                argv.push("--userns=keep-id".into());
            }
            argv.extend(["--user".into(), format!("{uid}:{gid}")]);
            for dir in &mounts {
                argv.extend(["-v".into(), format!("{0}:{0}", dir.display())]);
            }
            argv.extend(["-w".into(), self.workdir.display().to_string()]);
            for id in self.gpus {
                argv.extend(["--device".into(), format!("nvidia.com/gpu={id}")]);
            }
            let inside = (0..self.gpus.len()).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
            for (k, v) in self.env {
                let v = if k == "CUDA_VISIBLE_DEVICES" { &inside } else { v };
                argv.extend(["--env".into(), format!("{k}={v}")]);
            }
        }
        if !engine.runs_sif() {
            // The image is never read as an option, whatever it says.
            argv.push("--".into());
        }
        argv.push(self.image.argument(engine));
        argv.extend(self.program.iter().cloned());
        CommandLine { argv, env }
    }
}

/// `dirs` sorted without duplicates and without those inside another.
fn outermost(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut sorted: Vec<&PathBuf> = dirs.iter().collect();
    sorted.sort();
    let mut kept: Vec<PathBuf> = Vec::new();
    for dir in sorted {
        if !kept.iter().any(|k| dir.starts_with(k)) {
            kept.push(dir.clone());
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    fn launch<'a>(
        engine: ContainerEngine,
        image: &'a Image,
        env: &'a [(String, String)],
        gpus: &'a [u32],
    ) -> Launch<'a> {
        static PROGRAM: std::sync::LazyLock<Vec<String>> =
            std::sync::LazyLock::new(|| strings(&["sh", "-c", "echo hi"]));
        Launch {
            engine,
            image,
            mounts: vec!["/w/out".into(), "/w".into(), "/data/in".into(), "/w".into()],
            workdir: Path::new("/w/sub"),
            env,
            gpus,
            user: (1000, 100),
            program: &PROGRAM,
        }
    }

    fn env() -> Vec<(String, String)> {
        vec![("A".into(), "x y".into()), ("CUDA_VISIBLE_DEVICES".into(), "2,3".into())]
    }

    #[test]
    fn podman_runs_as_the_user_with_mounts_env_and_cdi_devices() {
        let image = Image::Reference("docker://ghcr.io/o/i:1".into());
        let env = env();
        let line = launch(ContainerEngine::Podman, &image, &env, &[2, 3]).command_line();
        let expected = "podman run --rm --init --pull=never --userns=keep-id --user 1000:100 -v /data/in:/data/in \
                        -v /w:/w -w /w/sub --device nvidia.com/gpu=2 --device nvidia.com/gpu=3 --env A=x y \
                        --env CUDA_VISIBLE_DEVICES=0,1 -- ghcr.io/o/i:1 sh -c echo hi";
        assert_eq!(line.argv.join(" "), expected);
        assert_eq!(line.argv[19], "A=x y");
        assert!(line.env.is_empty());
    }

    #[test]
    fn docker_runs_as_the_user_without_a_user_namespace() {
        let image = Image::Reference("localhost/t:1".into());
        let line = launch(ContainerEngine::Docker, &image, &[], &[]).command_line();
        let expected = "docker run --rm --init --pull=never --user 1000:100 -v /data/in:/data/in -v /w:/w -w /w/sub \
                        -- localhost/t:1 sh -c echo hi";
        assert_eq!(line.argv.join(" "), expected);
    }

    #[test]
    fn podman_as_root_keeps_root() {
        let image = Image::Reference("localhost/t:1".into());
        let mut l = launch(ContainerEngine::Podman, &image, &[], &[]);
        l.user = (0, 0);
        let argv = l.command_line().argv;
        assert!(!argv.contains(&"--userns=keep-id".to_owned()));
        assert_eq!(argv[5..7], strings(&["--user", "0:0"]));
    }

    #[test]
    fn apptainer_binds_and_passes_the_environment_through_its_own_variables() {
        let image = Image::Sif("/w/img/t.sif".into());
        let env = env();
        let line = launch(ContainerEngine::Apptainer, &image, &env, &[2, 3]).command_line();
        let expected =
            "apptainer exec --bind /data/in:/data/in --bind /w:/w --pwd /w/sub --nv /w/img/t.sif sh -c echo hi";
        assert_eq!(line.argv.join(" "), expected);
        assert_eq!(
            line.env,
            vec![
                ("APPTAINERENV_A".to_owned(), "x y".to_owned()),
                ("APPTAINERENV_CUDA_VISIBLE_DEVICES".to_owned(), "2,3".to_owned())
            ]
        );
    }

    #[test]
    fn singularity_without_gpus_has_no_nv() {
        let image = Image::Reference("docker://ghcr.io/o/i:1".into());
        let line = launch(ContainerEngine::Singularity, &image, &[], &[]).command_line();
        let expected =
            "singularity exec --bind /data/in:/data/in --bind /w:/w --pwd /w/sub docker://ghcr.io/o/i:1 sh -c echo hi";
        assert_eq!(line.argv.join(" "), expected);
    }
}
