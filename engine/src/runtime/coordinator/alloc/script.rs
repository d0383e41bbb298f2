//! The submission script of an allocation and the command that submits it,
//! for Slurm (`sbatch`) and PBS (`qsub`).
//!
//! An allocation runs one `flow worker` per node; the worker reads the run's
//! access file (never a secret on a command line) and reports the job id
//! the manager gave it (`SLURM_JOB_ID` / `PBS_JOBID`).

use std::fmt::Write as _;
use std::path::Path;

use crate::profile::{Manager, Queue};
use crate::resources::worker_time_limit;
use crate::shell_word::shell_word;

/// What one allocation's script needs to know besides the queue.
#[derive(Debug, Clone)]
pub struct ScriptContext<'a> {
    /// The run's id (names the job).
    pub run_id: &'a str,
    /// The run's access file.
    pub access: &'a Path,
    /// Where the job's stdout and stderr go.
    pub output: &'a Path,
    /// The `flow` executable on the compute nodes.
    pub flow: &'a str,
}

/// The manager's job name for the allocations of run `run_id` (how
/// `squeue --name` finds them).
pub fn job_name(run_id: &str) -> String {
    format!("flow-{run_id}")
}

/// The submission script for `queue`.
pub fn script(queue: &Queue, cx: &ScriptContext) -> String {
    let s = &queue.settings;
    let nodes = s.workers_per_allocation;
    let mut text = String::from("#!/bin/bash\n");
    let mut directive = |line: String| {
        let prefix = match s.manager {
            Manager::Slurm => "#SBATCH",
            Manager::Pbs => "#PBS",
        };
        let _ = writeln!(text, "{prefix} {line}");
    };
    let name = job_name(cx.run_id);
    let output = cx.output.display();
    let walltime = hms(queue.time_limit);
    match s.manager {
        Manager::Slurm => {
            directive(format!("--job-name={name}"));
            directive(format!("--output={output}"));
            if let Some(p) = &s.partition {
                directive(format!("--partition={p}"));
            }
            if let Some(a) = &s.account {
                directive(format!("--account={a}"));
            }
            directive(format!("--time={walltime}"));
            directive(format!("--nodes={nodes}"));
            directive("--ntasks-per-node=1".to_owned());
            match s.worker.cpus {
                Some(c) => directive(format!("--cpus-per-task={c}")),
                None => directive("--exclusive".to_owned()),
            }
            if let Some(m) = queue.worker.memory {
                directive(format!("--mem={}M", m.div_ceil(1 << 20)));
            }
            if let Some(g) = s.worker.gpus.filter(|&g| g > 0) {
                directive(format!("--gres=gpu:{g}"));
            }
        }
        Manager::Pbs => {
            directive(format!("-N {}", pbs_name(&name)));
            directive(format!("-o {output}"));
            directive("-j oe".to_owned());
            if let Some(q) = &s.partition {
                directive(format!("-q {q}"));
            }
            if let Some(a) = &s.account {
                directive(format!("-A {a}"));
            }
            directive(format!("-l walltime={walltime}"));
            let mut select = format!("select={nodes}");
            if let Some(c) = s.worker.cpus {
                let _ = write!(select, ":ncpus={c}");
            }
            if let Some(m) = queue.worker.memory {
                let _ = write!(select, ":mem={}mb", m.div_ceil(1 << 20));
            }
            if let Some(g) = s.worker.gpus.filter(|&g| g > 0) {
                let _ = write!(select, ":ngpus={g}");
            }
            directive(format!("-l {select}"));
            let place = if s.worker.cpus.is_none() { "scatter:excl" } else { "scatter" };
            directive(format!("-l place={place}"));
        }
    }
    text.push('\n');
    for line in &s.setup {
        text.push_str(line);
        text.push('\n');
    }
    let worker = worker_command(queue, cx);
    let launch = match (s.manager, nodes) {
        (_, 1) => format!("exec {worker}"),
        (Manager::Slurm, n) => format!("exec srun --overlap --nodes={n} --ntasks-per-node=1 {worker}"),
        (Manager::Pbs, _) => format!("exec pbsdsh -u -- {worker}"),
    };
    text.push_str(&launch);
    text.push('\n');
    text
}

/// The `flow worker` command line of an allocation's workers.
fn worker_command(queue: &Queue, cx: &ScriptContext) -> String {
    let s = &queue.settings;
    let mut args = vec![
        shell_word(cx.flow),
        "worker".to_owned(),
        "--access".to_owned(),
        shell_word(&cx.access.display().to_string()),
        "--time-limit".to_owned(),
        format!("{}s", worker_time_limit(queue.time_limit)),
        "--idle-timeout".to_owned(),
        format!("{}s", queue.idle_timeout),
    ];
    if let Some(c) = s.worker.cpus {
        args.extend(["--cpus".to_owned(), c.to_string()]);
    }
    if let Some(g) = s.worker.gpus {
        args.extend(["--gpus".to_owned(), g.to_string()]);
    }
    if let Some(m) = queue.worker.memory {
        args.extend(["--memory".to_owned(), format!("{}B", m)]);
    }
    for (name, amount) in queue.worker.custom.iter().flatten() {
        args.extend(["--resource".to_owned(), shell_word(&format!("{name}={amount}"))]);
    }
    args.join(" ")
}

/// The command that submits `script_path`: the program and its arguments.
pub fn submit_command(queue: &Queue, script_path: &Path) -> (String, Vec<String>) {
    let s = &queue.settings;
    let mut args = Vec::new();
    let program = match s.manager {
        Manager::Slurm => {
            args.push("--parsable".to_owned());
            "sbatch"
        }
        Manager::Pbs => "qsub",
    };
    args.extend(s.submit_args.iter().cloned());
    args.push(script_path.display().to_string());
    (program.to_owned(), args)
}

/// `HH:MM:SS` (hours may exceed 24), the form both managers accept.
fn hms(secs: u64) -> String {
    format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// PBS job names are at most 15 characters on older servers.
pub(crate) fn pbs_name(name: &str) -> String {
    name.chars().take(15).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Source;
    use crate::profile;

    fn queue(text: &str) -> Queue {
        let source = Source::new("flow.profiles.toml", text);
        profile::load(&source, "p").unwrap().queue.unwrap()
    }

    fn render(text: &str) -> String {
        let cx = ScriptContext {
            run_id: "20261123-120000-ab12",
            access: Path::new("/home/me/screen/.flow/runs/20261123-120000-ab12/access.json"),
            output: Path::new("/home/me/screen/.flow/runs/20261123-120000-ab12/allocs/1.out"),
            flow: "/opt/flow/bin/flow",
        };
        script(&queue(text), &cx)
    }

    #[test]
    fn slurm_script() {
        insta::assert_snapshot!(render(
            r#"[profile.p.queue]
manager = "slurm"
partition = "gpu"
account = "chem-42"
time_limit = "2h30m"
idle_timeout = "2m"
worker = { cpus = 16, gpus = 2, memory = "64 GiB", resources = { scratch = 100 } }
setup = ["module load openbabel", "source ~/venv/bin/activate"]
"#
        ));
    }

    #[test]
    fn slurm_script_for_whole_nodes() {
        insta::assert_snapshot!(render(
            "[profile.p.queue]\nmanager = \"slurm\"\ntime_limit = \"1d\"\nworkers_per_allocation = 4\nmax_workers = 8\n"
        ));
    }

    #[test]
    fn pbs_script() {
        insta::assert_snapshot!(render(
            r#"[profile.p.queue]
manager = "pbs"
queue = "workq"
account = "proj7"
time_limit = "30m"
worker = { cpus = 8, memory = "16 GiB", gpus = 1 }
"#
        ));
    }

    #[test]
    fn pbs_script_for_several_nodes() {
        insta::assert_snapshot!(render(
            "[profile.p.queue]\nmanager = \"pbs\"\ntime_limit = \"1h\"\nworkers_per_allocation = 2\n"
        ));
    }

    #[test]
    fn extra_arguments_go_before_the_script() {
        let q = queue("[profile.p.queue]\nmanager = \"slurm\"\ntime_limit = \"1h\"\nsubmit_args = [\"--qos=short\"]\n");
        let (program, args) = submit_command(&q, Path::new("allocs/1.sh"));
        assert_eq!(program, "sbatch");
        assert_eq!(args, ["--parsable", "--qos=short", "allocs/1.sh"]);
    }
}
