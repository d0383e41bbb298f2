//! How the model check runs flow: in the foreground, killed or
//! interrupted after a while, or with one remote worker.

use std::path::Path;
use std::time::Duration;

use crate::support::process::{flow_bin, wait_child};

/// What flow printed.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn flow(dir: &Path, args: &[String]) -> Out {
    let out = assert_cmd::Command::new(flow_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CUDA_VISIBLE_DEVICES", "")
        .timeout(Duration::from_secs(60))
        .output()
        .expect("run flow");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs flow with `--listen` and no local worker (or `--profile remote`,
/// which says so), and one `flow worker` (`--cpus 2` and the options
/// `worker` describes it with) that joins it once its access file is written.
pub fn on_a_remote_worker(dir: &Path, args: &[String], worker: &[String], profile: bool) -> Out {
    let stderr = dir.with_extension("stderr");
    let spawn = |args: &[&str], to: &Path| {
        std::process::Command::new(flow_bin())
            .args(args)
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .env("CUDA_VISIBLE_DEVICES", "")
            .stdout(std::process::Stdio::null())
            .stderr(fs_err::File::create(to).expect("stderr file").into_parts().0)
            .spawn()
            .expect("start flow")
    };
    let before = crate::run::run_ids(dir).len();
    let mut run_args: Vec<&str> = args.iter().map(String::as_str).collect();
    if profile {
        run_args.extend(["--profile", "remote"]);
    } else {
        run_args.extend(["--listen", "127.0.0.1:0", "--no-local-worker"]);
    }
    let mut run = spawn(&run_args, &stderr);
    let state = dir.join(flow_engine::runtime::STATE_DIR);
    let access = || {
        let new = crate::run::run_ids(dir).len() > before;
        flow_engine::runtime::RunDir::latest(&state).map(|r| r.access()).filter(|a| new && a.exists())
    };
    let mut worker = crate::support::process::wait_for(Duration::from_secs(20), || access().is_some())
        .then(|| access().expect("an access file"))
        .map(|a| {
            let access = a.to_string_lossy();
            let mut args = vec!["worker", "--access", &access, "--cpus", "2"];
            args.extend(worker.iter().map(String::as_str));
            spawn(&args, &dir.with_extension("worker"))
        });
    let ended = wait_child(&mut run, Duration::from_secs(60));
    for (child, ended) in std::iter::once((&mut run, ended.is_some())).chain(worker.as_mut().map(|w| {
        let ended = wait_child(w, Duration::from_secs(10)).is_some();
        (w, ended)
    })) {
        if !ended {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    let worker = worker.map(|_| fs_err::read_to_string(dir.with_extension("worker")).unwrap_or_default());
    let code = ended.and_then(|s| s.code()).unwrap_or(-1);
    // What the worker said, after what the run said.
    let stderr = fs_err::read_to_string(&stderr).unwrap_or_default() + &worker.unwrap_or_default();
    Out { code, stdout: String::new(), stderr }
}

/// Runs flow and sends it `signal` (`-KILL`, `-INT`) after `ms` milliseconds.
pub fn killed(dir: &Path, args: &[String], ms: u16, signal: &str) -> Out {
    let mut child = std::process::Command::new(flow_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CUDA_VISIBLE_DEVICES", "")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start flow");
    std::thread::sleep(Duration::from_millis(u64::from(ms)));
    // It may have ended already.
    let _ = std::process::Command::new("kill").args([signal, &child.id().to_string()]).status();
    let status = wait_child(&mut child, Duration::from_secs(30)).and_then(|s| s.code()).unwrap_or(-1);
    // Tasks already started finish on their own (they take milliseconds).
    std::thread::sleep(Duration::from_millis(300));
    Out { code: status, stdout: String::new(), stderr: String::new() }
}
