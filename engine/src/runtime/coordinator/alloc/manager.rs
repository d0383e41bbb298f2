//! Talking to the resource manager: submit, ask which allocations are still
//! alive, cancel. Each call runs the manager's command-line tool and quotes
//! its error output when it fails.

use std::collections::HashSet;
use std::path::Path;
use std::process::Output;

use super::manager_error::ManagerError;
use super::script::submit_command;
use crate::profile::{Manager, Queue};

/// Submits `script`; returns the manager's job id, or its error.
pub async fn submit(queue: &Queue, script: &Path, cwd: &Path) -> Result<String, ManagerError> {
    let (program, args) = submit_command(queue, script);
    let output = tokio::process::Command::new(&program)
        .args(&args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|source| ManagerError::Spawn { program: program.to_string(), source })?;
    let stdout = checked(&program, &output)?;
    // `sbatch --parsable` prints `id` or `id;cluster`; `qsub` prints `id.server`.
    let id = stdout.trim().split(';').next().unwrap_or_default().trim().to_owned();
    if id.is_empty() {
        return Err(ManagerError::NoJobId { program });
    }
    Ok(id)
}

/// The job ids among `ids` the manager still lists as queued or running.
pub async fn alive(manager: Manager, job_name: &str, ids: &[String]) -> Result<HashSet<String>, ManagerError> {
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    let (program, args) = alive_command(manager, job_name, ids);
    let output = tokio::process::Command::new(program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|source| ManagerError::Spawn { program: program.to_string(), source })?;
    read_alive(manager, program, &output, ids)
}

/// [`alive`], blocking: for a run that is starting.
pub fn alive_now(manager: Manager, job_name: &str, ids: &[String]) -> Result<HashSet<String>, ManagerError> {
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    let (program, args) = alive_command(manager, job_name, ids);
    let output = std::process::Command::new(program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| ManagerError::Spawn { program: program.to_string(), source })?;
    read_alive(manager, program, &output, ids)
}

/// The command that lists which of `ids` (jobs named `job_name`) are alive.
fn alive_command(manager: Manager, job_name: &str, ids: &[String]) -> (&'static str, Vec<String>) {
    match manager {
        // By job name: squeue fails outright when one of several ids is unknown.
        Manager::Slurm => ("squeue", vec!["-h".into(), "-o".into(), "%i %T".into(), format!("--name={job_name}")]),
        Manager::Pbs => ("qstat", ids.to_vec()),
    }
}

/// The ids among `ids` that `program`'s `output` lists as alive.
fn read_alive(
    manager: Manager,
    program: &str,
    output: &Output,
    ids: &[String],
) -> Result<HashSet<String>, ManagerError> {
    let text = match manager {
        Manager::Slurm => checked(program, output)?,
        // qstat exits non-zero when some job is unknown, yet lists the others.
        Manager::Pbs => String::from_utf8_lossy(&output.stdout).into_owned(),
    };
    Ok(parse_alive(manager, &text, ids))
}

/// Reads `squeue -o "%i %T"` or `qstat` output: ids of jobs not yet ended.
fn parse_alive(manager: Manager, text: &str, ids: &[String]) -> HashSet<String> {
    let mut alive = HashSet::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (id, state) = match manager {
            Manager::Slurm => match fields.as_slice() {
                [id, state, ..] => (*id, *state),
                _ => continue,
            },
            // Job id, Name, User, Time Use, S, Queue.
            Manager::Pbs => match fields.as_slice() {
                [id, _, _, _, state, ..] => (*id, *state),
                _ => continue,
            },
        };
        let ended = match manager {
            Manager::Slurm => !matches!(state, "PENDING" | "CONFIGURING" | "RUNNING" | "COMPLETING" | "SUSPENDED"),
            Manager::Pbs => matches!(state, "C" | "F" | "X"),
        };
        if ended {
            continue;
        }
        // qstat may shorten `123.server.example.org` to `123.server*`.
        let short = id.trim_end_matches('*');
        if let Some(full) = ids.iter().find(|full| *full == short || full.starts_with(short)) {
            alive.insert(full.clone());
        }
    }
    alive
}

/// Cancels `ids` (blocking: used as the run ends); returns the manager's error.
pub fn cancel(manager: Manager, ids: &[String]) -> Result<(), ManagerError> {
    if ids.is_empty() {
        return Ok(());
    }
    let program = match manager {
        Manager::Slurm => "scancel",
        Manager::Pbs => "qdel",
    };
    let output = std::process::Command::new(program)
        .args(ids)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| ManagerError::Spawn { program: program.to_string(), source })?;
    checked(program, &output).map(drop)
}

/// Cancels those of `ids` that are still flow's jobs for this run: named
/// `job_name` and owned by the user running flow. A stored id alone is not
/// enough — after the manager restarts, ids start again and may belong to
/// someone else's job. Returns the ids cancelled.
pub fn cancel_own(manager: Manager, job_name: &str, ids: &[String]) -> Result<Vec<String>, ManagerError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let (program, args): (&str, Vec<String>) = match manager {
        Manager::Slurm => {
            ("squeue", vec!["-h".into(), "-o".into(), "%i".into(), "--me".into(), format!("--name={job_name}")])
        }
        Manager::Pbs => {
            let user = nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|u| u.name)
                .ok_or(ManagerError::UnknownUser)?;
            // The name as the job script gave it: PBS keeps 15 characters.
            ("qselect", vec!["-N".into(), super::script::pbs_name(job_name), "-u".into(), user])
        }
    };
    let output = std::process::Command::new(program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| ManagerError::Spawn { program: program.to_string(), source })?;
    let listed = checked(program, &output)?;
    let ours: HashSet<&str> = listed.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    // PBS ids may be listed with their server (`12.server`) or without.
    let is_ours =
        |id: &String| ours.contains(id.as_str()) || ours.iter().any(|o| o.split('.').next() == id.split('.').next());
    let own: Vec<String> = ids.iter().filter(|id| is_ours(id)).cloned().collect();
    cancel(manager, &own)?;
    Ok(own)
}

/// The last `n` non-blank lines of `text`, trimmed, on one line.
pub(super) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// The stdout of a successful command, or an error quoting its stderr.
fn checked(program: &str, output: &Output) -> Result<String, ManagerError> {
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    // Its last lines, on one line: the error usually comes last.
    let said = last_lines(&String::from_utf8_lossy(&output.stderr), 4);
    let status = match output.status.code() {
        Some(code) => format!("exit code {code}"),
        None => "a signal".to_owned(),
    };
    if said.is_empty() {
        Err(ManagerError::Failed { program: program.to_owned(), status })
    } else {
        Err(ManagerError::FailedSaying { program: program.to_owned(), status, said })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeue_and_qstat_listings_are_read() {
        let ids = vec!["12".to_owned(), "13".to_owned(), "14".to_owned()];
        let alive = parse_alive(Manager::Slurm, "12 RUNNING\n13 COMPLETING\n14 FAILED\n99 RUNNING\n", &ids);
        assert_eq!(alive, HashSet::from(["12".to_owned(), "13".to_owned()]));
        let ids = vec!["7.pbs01.example.org".to_owned(), "8.pbs01".to_owned()];
        let qstat = "Job id            Name             User              Time Use S Queue\n\
                     ----------------  ---------------- ----------------  -------- - -----\n\
                     7.pbs01*          flow-2026        me                00:00:01 R workq\n\
                     8.pbs01           flow-2026        me                00:00:00 F workq\n";
        assert_eq!(parse_alive(Manager::Pbs, qstat, &ids), HashSet::from(["7.pbs01.example.org".to_owned()]));
    }
}
