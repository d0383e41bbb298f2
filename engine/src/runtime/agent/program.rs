//! [`program`]: what a job's process executes — its command, after its
//! setup lines, inside its container — and [`failure_reason`], which tells
//! a failing setup line or engine apart from the command.

use std::path::{Path, PathBuf};

use crate::container::{ContainerEngine, Launch};
use crate::paths::is_glob;
use crate::runtime::protocol::job::{Job, JobCommand, Sink};

/// The program to start and the variables to add to its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Variables added to flow's own environment.
    pub env: Vec<(String, String)>,
}

/// The command line of `job`, run as user `user` (uid, gid): `sh -c` or
/// its argv; with setup lines, a shell script that runs them with `set -e`
/// (a failing one writes its status to `FLOW_SETUP_STATUS` and ends the
/// script) and then the command (an argv through `exec "$@"`, so its
/// arguments stay as they are); with a container, the engine's command
/// line around that.
pub fn program(job: &Job, user: (u32, u32)) -> Program {
    let inner = inner(job);
    let env = job.environment();
    let Some(container) = &job.container else { return Program { argv: inner, env } };
    let launch = Launch {
        engine: container.engine,
        image: &container.image,
        mounts: mounts(job),
        workdir: &job.cwd,
        env: &env,
        gpus: &job.gpus,
        user,
        program: &inner,
    };
    let line = launch.command_line();
    Program { argv: line.argv, env: line.env }
}

/// The command with its setup lines, as run on the host or inside the container.
fn inner(job: &Job) -> Vec<String> {
    let Some(setup) = job.setup.as_ref().filter(|s| !s.lines.is_empty()) else {
        return match &job.command {
            JobCommand::Shell(text) => vec!["sh".into(), "-c".into(), text.clone()],
            JobCommand::Argv(argv) => argv.clone(),
        };
    };
    let mut script = String::from("trap 'echo $? > \"$FLOW_SETUP_STATUS\"' EXIT\nset -e\n");
    for line in &setup.lines {
        script.push_str(line);
        script.push('\n');
    }
    script.push_str("set +e\ntrap - EXIT\n");
    match &job.command {
        JobCommand::Shell(text) => {
            script.push_str(text);
            vec!["sh".into(), "-c".into(), script]
        }
        JobCommand::Argv(argv) => {
            script.push_str("exec \"$@\"");
            let mut all = vec!["sh".into(), "-c".into(), script, "sh".into()];
            all.extend(argv.iter().cloned());
            all
        }
    }
}

/// The directories a container mounts: the workflow's, the working
/// directory, and those of the job's files (inputs, outputs, streams,
/// chunk, setup status).
fn mounts(job: &Job) -> Vec<PathBuf> {
    let parent = |p: &Path| p.parent().map(Path::to_path_buf);
    let mut dirs = vec![job.base_dir.clone(), job.cwd.clone()];
    dirs.extend(job.inputs.iter().filter_map(|input| {
        // A glob's directory is the part before its first pattern.
        let fixed: PathBuf = input.components().take_while(|c| !is_glob(&c.as_os_str().to_string_lossy())).collect();
        if fixed == *input { parent(input) } else { Some(fixed) }
    }));
    dirs.extend(job.outputs.iter().filter_map(|p| parent(p)));
    dirs.extend(job.stdin.iter().filter_map(|p| parent(p)));
    for sink in [&job.stdout, &job.stderr] {
        if let Sink::File(p) = sink {
            dirs.extend(parent(p));
        }
    }
    dirs.extend(job.chunk.iter().filter_map(|(p, _)| parent(p)));
    dirs.extend(job.setup.iter().filter_map(|s| parent(&s.status_file)));
    dirs
}

/// A better reason than "exit code N" for a job that exited with `code`:
/// a setup line failed (its status file says with what), or a container
/// engine failed before the task ran (Podman and Docker exit 125).
pub fn failure_reason(job: &Job, code: i32) -> Option<String> {
    if let Some(setup) = &job.setup {
        if let Ok(text) = fs_err::read_to_string(&setup.status_file) {
            let _ = fs_err::remove_file(&setup.status_file);
            return Some(format!("setup failed: exit {}", text.trim()));
        }
    }
    let container = job.container.as_ref()?;
    let own_error = matches!(container.engine, ContainerEngine::Podman | ContainerEngine::Docker) && code == 125;
    own_error.then(|| {
        format!(
            "container engine `{}` failed (exit code 125) to run image `{}`: see the task's stderr",
            container.engine.name(),
            container.image
        )
    })
}

/// Why `job` could not start, when its container engine is missing.
pub fn missing_engine(job: &Job, error: &std::io::Error) -> Option<String> {
    let container = job.container.as_ref()?;
    (error.kind() == std::io::ErrorKind::NotFound).then(|| {
        format!("could not start: container engine `{}` not found on this worker's PATH", container.engine.name())
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::container::Image;
    use crate::ir::TaskId;
    use crate::runtime::protocol::job::{JobContainer, Setup};

    fn job(command: JobCommand, setup: &[&str]) -> Job {
        Job {
            task: TaskId::new(crate::ir::GroupId(0), 0),
            attempt: 0,
            label: "a".into(),
            command,
            cwd: "/w/sub".into(),
            env: vec![("K".into(), "v".into())],
            flow: None,
            stdin: None,
            stdout: Sink::Log,
            stderr: Sink::File("/logs/a.err".into()),
            chunk: None,
            inputs: vec!["/data/in/x.txt".into(), "/w/res/*/p.pdb".into()],
            implicit: Vec::new(),
            base_dir: "/w".into(),
            outputs: vec!["/scratch/out/y.txt".into()],
            timeout: None,
            cpus: Vec::new(),
            gpus: vec![1],
            setup: (!setup.is_empty()).then(|| Setup {
                lines: setup.iter().map(|s| (*s).to_owned()).collect(),
                status_file: "/w/.flow/runs/r/setup/a.0.0".into(),
            }),
            container: None,
            definition: String::new(),
        }
    }

    #[test]
    fn without_setup_the_command_runs_as_written() {
        let shell = program(&job(JobCommand::Shell("echo hi".into()), &[]), (1, 1));
        assert_eq!(shell.argv, ["sh", "-c", "echo hi"]);
        assert_eq!(shell.env, [("K".to_owned(), "v".to_owned())]);
        let argv = program(&job(JobCommand::Argv(vec!["echo".into(), "a b".into()]), &[]), (1, 1));
        assert_eq!(argv.argv, ["echo", "a b"]);
    }

    #[test]
    fn setup_lines_come_first_with_errexit_and_argv_stays_unsplit() {
        let script = "trap 'echo $? > \"$FLOW_SETUP_STATUS\"' EXIT\nset -e\nmodule load x\n. venv/bin/activate\n\
                      set +e\ntrap - EXIT\n";
        let setup = ["module load x", ". venv/bin/activate"];
        let shell = program(&job(JobCommand::Shell("run".into()), &setup), (1, 1));
        assert_eq!(shell.argv, ["sh".to_owned(), "-c".to_owned(), format!("{script}run")]);
        let argv = program(&job(JobCommand::Argv(vec!["echo".into(), "a b".into()]), &setup), (1, 1));
        let expected = ["sh".to_owned(), "-c".to_owned(), format!("{script}exec \"$@\""), "sh".into(), "echo".into()];
        assert_eq!(argv.argv[..5], expected);
        assert_eq!(argv.argv[5], "a b");
    }

    #[test]
    fn a_container_mounts_the_directories_of_the_jobs_files() {
        let mut j = job(JobCommand::Shell("run".into()), &["s"]);
        j.container = Some(JobContainer { engine: ContainerEngine::Docker, image: Image::Reference("t:1".into()) });
        let p = program(&j, (7, 8));
        let volumes: Vec<&str> = p.argv.windows(2).filter(|w| w[0] == "-v").map(|w| w[1].as_str()).collect();
        assert_eq!(volumes, ["/data/in:/data/in", "/logs:/logs", "/scratch/out:/scratch/out", "/w:/w"]);
        assert!(p.argv.contains(&"nvidia.com/gpu=1".to_owned()));
        assert_eq!(p.argv[p.argv.len() - 4..p.argv.len() - 2], ["t:1".to_owned(), "sh".to_owned()]);
        assert!(p.env.is_empty());
        assert_eq!(mounts(&j).iter().filter(|d| d.as_path() == Path::new("/w/res")).count(), 1);
    }

    #[test]
    fn a_failing_setup_line_and_a_failing_engine_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = job(JobCommand::Shell("run".into()), &["s"]);
        let status_file: PathBuf = dir.path().join("status");
        j.setup.as_mut().unwrap().status_file = status_file.clone();
        assert_eq!(failure_reason(&j, 3), None);
        fs_err::write(&status_file, "3\n").unwrap();
        assert_eq!(failure_reason(&j, 3).as_deref(), Some("setup failed: exit 3"));
        assert!(!status_file.exists());
        j.container = Some(JobContainer { engine: ContainerEngine::Podman, image: Image::Reference("t:1".into()) });
        assert_eq!(
            failure_reason(&j, 125).as_deref(),
            Some("container engine `podman` failed (exit code 125) to run image `t:1`: see the task's stderr")
        );
        assert_eq!(failure_reason(&j, 1), None);
        let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(
            missing_engine(&j, &gone).as_deref(),
            Some("could not start: container engine `podman` not found on this worker's PATH")
        );
    }
}
