//! What the shell gets for an instance (`flow plan --command`), built by
//! the code a run uses: the [`JobFactory`] renders the job the coordinator
//! would send, after the images are checked as a run checks them, and the
//! agent's [`program`] turns it into the process a worker starts — setup
//! lines, environment and container wrapper — so the view cannot drift
//! from what runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::images::check_images;
use super::job_factory::JobFactory;
use crate::container::ContainerEngine;
use crate::ir::{Graph, TaskId};
use crate::rundir::STATE_DIR;
use crate::runtime::agent::program::program;
use crate::runtime::core::Allocation;
use crate::runtime::protocol::job::{Job, Sink};
use crate::shell_word::shell_word;

/// The run id a rendered command shows in paths of the run's directory,
/// which a run names only when it starts.
pub const RUN_ID_PLACEHOLDER: &str = "RUN_ID";

/// One instance's first attempt, as a worker would start it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedCommand {
    /// `name[index]`, or `name`.
    pub label: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// The variables added to flow's own environment.
    pub env: Vec<(String, String)>,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Standard input, when it is a file.
    pub stdin: Option<PathBuf>,
    /// Standard output: `None` into the run's log, or a file.
    pub stdout: Option<PathBuf>,
    /// Standard error, the same way.
    pub stderr: Option<PathBuf>,
    /// A file the worker writes before it starts the process: the chunk,
    /// or an item too large for the environment.
    pub writes_first: Option<PathBuf>,
}

impl RenderedCommand {
    /// The command as a shell script: a comment naming the instance, `cd`,
    /// then `env NAME=VALUE … PROGRAM ARGS…` with its redirections, every
    /// word quoted for `sh`.
    pub fn script(&self) -> String {
        let mut text = format!("# {}\n", self.label);
        if let Some(file) = &self.writes_first {
            text.push_str(&format!("# (the worker writes {} first)\n", file.display()));
        }
        text.push_str(&format!("cd {}\n", shell_word(&self.cwd.display().to_string())));
        // `env`, one variable a line, then the program line.
        let mut lines = Vec::new();
        if !self.env.is_empty() {
            lines.push("env".to_owned());
            lines.extend(self.env.iter().map(|(k, v)| shell_word(&format!("{k}={v}"))));
        }
        let mut words: Vec<String> = self.argv.iter().map(|a| shell_word(a)).collect();
        let redirect = |op: &str, file: &Path| format!("{op} {}", shell_word(&file.display().to_string()));
        words.extend(self.stdin.as_deref().map(|f| redirect("<", f)));
        words.extend(self.stdout.as_deref().map(|f| redirect(">", f)));
        words.extend(self.stderr.as_deref().map(|f| redirect("2>", f)));
        lines.push(words.join(" "));
        text.push_str(&lines.join(" \\\n  "));
        text.push('\n');
        text
    }
}

/// The commands of `tasks` of `graph` (compiled from a workflow in
/// `base_dir`), each for its first attempt with its task's first variant;
/// a container is checked and wrapped as `flow run` would with `engine`
/// (or the workflow's). An image that cannot run, or an instance that
/// cannot be rendered, is an error in the run's words.
pub fn rendered_commands(
    graph: &Graph,
    base_dir: &Path,
    engine: Option<ContainerEngine>,
    tasks: &[TaskId],
) -> Result<Vec<RenderedCommand>, Vec<String>> {
    let mut graph = graph.clone();
    check_images(&mut graph, engine, base_dir, std::env::var_os("PATH").as_deref())?;
    let run_dir = base_dir.join(STATE_DIR).join("runs").join(RUN_ID_PLACEHOLDER);
    let factory = JobFactory::new(Arc::new(graph), base_dir, &run_dir).map_err(|e| vec![e])?;
    let user = (nix::unistd::getuid().as_raw(), nix::unistd::getgid().as_raw());
    tasks
        .iter()
        .map(|&task| factory.job(task, 0, &Allocation::default()).map(|job| command(&job, user)))
        .collect::<Result<_, _>>()
        .map_err(|e| vec![e])
}

/// What a worker starts for `job`, run as `user`.
fn command(job: &Job, user: (u32, u32)) -> RenderedCommand {
    let started = program(job, user);
    let file = |sink: &Sink| match sink {
        Sink::Log => None,
        Sink::Null => Some(PathBuf::from("/dev/null")),
        Sink::File(path) => Some(path.clone()),
    };
    RenderedCommand {
        label: job.label.clone(),
        cwd: job.cwd.clone(),
        env: started.env,
        argv: started.argv,
        stdin: job.stdin.clone(),
        stdout: file(&job.stdout),
        stderr: file(&job.stderr),
        writes_first: job.chunk.as_ref().map(|(path, _)| path.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_quotes_every_word_and_names_its_redirections() {
        let command = RenderedCommand {
            label: "score[3]".into(),
            cwd: "/w/my dir".into(),
            env: vec![("MODE".into(), "it's".into())],
            argv: vec!["sh".into(), "-c".into(), "echo 3 > out/3.txt".into()],
            stdin: None,
            stdout: None,
            stderr: Some("/dev/null".into()),
            writes_first: Some("/w/.flow/chunks/score/3.txt".into()),
        };
        assert_eq!(
            command.script(),
            "# score[3]\n# (the worker writes /w/.flow/chunks/score/3.txt first)\ncd '/w/my dir'\n\
             env \\\n  'MODE=it'\\''s' \\\n  sh -c 'echo 3 > out/3.txt' 2> /dev/null\n"
        );
    }
}
