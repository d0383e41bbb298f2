//! Setup lines and containers through the CLI: setup lines before the
//! command, their failure, the fingerprint; Apptainer's command line with
//! a stand-in `apptainer` that records its arguments (Apptainer is not
//! installed here); images checked before anything runs; and, with real
//! Podman (`#[ignore = "needs podman"]`), a task inside a container.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flow_engine::runtime::{RunDir, STATE_DIR};

use crate::run::{assert_code, last_summary, run_ids};
use crate::support::normalize::normalize_in;
use crate::support::process::{finish, flow_bin, read, wait_child, wait_for};
use crate::support::{Test, program_on_path};

/// Counts of the newest run: (succeeded, cached, failed).
fn counts(dir: &Path) -> (u64, u64, u64) {
    let s = last_summary(dir);
    let n = |k: &str| s[k].as_u64().unwrap_or(0);
    (n("succeeded"), n("cached"), n("failed"))
}

const SETUP: &str = r#"
[defaults]
setup = ["export ORDER=defaults"]

[templates.tool]
setup = ["ORDER=\"$ORDER template\""]

[[tasks]]
name = "shell"
use = "tool"
setup = ["ORDER=\"$ORDER task\""]
outputs = ["shell.txt"]
command = "echo \"$ORDER\" > shell.txt"

[[tasks]]
name = "args"
setup = ["cd sub"]
cwd = "."
outputs = ["args.txt"]
argv = ["sh", "-c", "printf '%s|' \"$@\" \"$PWD\" > ../args.txt", "sh", "a b", "*"]
"#;

#[test]
fn setup_lines_run_before_the_command_in_the_same_shell() {
    let t = Test::new().workflow(SETUP).file("sub/.keep", "").args(["run"]);
    t.success();
    let read = |f: &str| fs_err::read_to_string(t.path().join(f)).unwrap();
    assert_eq!(read("shell.txt"), "defaults template task\n");
    let sub = t.path().canonicalize().unwrap().join("sub");
    assert_eq!(read("args.txt"), format!("a b|*|{}|", sub.display()));
}

#[test]
fn a_failing_setup_line_fails_the_instance_and_says_so() {
    let workflow = "[[tasks]]\nname = \"load\"\nsetup = [\"true\", \"exit 3\", \"echo never\"]\n\
                    command = \"echo ran > ran.txt\"\n\
                    [[tasks]]\nname = \"own\"\nsetup = [\"true\"]\ncommand = \"exit 4\"\n";
    let t = Test::new().workflow(workflow).args(["run"]);
    let out = t.status(1);
    assert!(out.stderr.contains("✗ load failed: setup failed: exit 3 (workflow.toml:2:8)"), "{}", out.stderr);
    assert!(out.stderr.contains("✗ own failed: exit code 4 (workflow.toml:6:8)"), "{}", out.stderr);
    assert!(!t.path().join("ran.txt").exists());
}

#[test]
fn editing_a_setup_line_reruns_the_task() {
    let workflow = |line: &str| {
        format!("[[tasks]]\nname = \"a\"\nsetup = [\"{line}\"]\noutputs = [\"a.txt\"]\ncommand = \"echo $V > a.txt\"\n")
    };
    let t = Test::new().workflow(&workflow("V=1")).args(["run"]);
    t.success();
    t.success();
    assert_eq!(counts(t.path()), (0, 1, 0));
    fs_err::write(t.path().join("workflow.toml"), workflow("V=2")).unwrap();
    let plan = t.success_with(&["plan", "--why"]);
    assert!(plan.contains("setup changed"), "{plan}");
    t.success();
    assert_eq!(counts(t.path()), (1, 0, 0));
    assert_eq!(fs_err::read_to_string(t.path().join("a.txt")).unwrap(), "2\n");
}

/// A stand-in for `apptainer exec`: records its arguments and its
/// `APPTAINERENV_*` variables, then runs the command as Apptainer would
/// inside the image (in `--pwd`, with those variables set).
const FAKE_APPTAINER: &str = r#"#!/bin/sh
printf '%s\n' "$*" >> "$RECORD"
env | grep '^APPTAINERENV_' | sort >> "$RECORD"
[ "$1" = exec ] || exit 64
shift
while :; do
  case "$1" in
    --bind) shift 2 ;;
    --pwd) cd "$2"; shift 2 ;;
    --nv) shift ;;
    *) break ;;
  esac
done
shift
for v in $(env | sed -n 's/^APPTAINERENV_\([A-Za-z_0-9]*\)=.*/\1/p'); do
  eval "export $v=\"\$APPTAINERENV_$v\""
done
exec "$@"
"#;

const APPTAINER: &str = r#"
[[tasks]]
name = "fold"
container = "img/tools.sif"
inputs = ["data/in.txt"]
outputs = ["out/folded.txt"]
env = { MODE = "fast" }
cwd = "data"
setup = ["export STEP=setup"]
command = "cat in.txt > ../out/folded.txt; echo $MODE $STEP $FLOW_TASK >> ../out/folded.txt"
"#;

#[test]
fn apptainer_is_given_the_binds_the_working_directory_and_the_environment() {
    let t = Test::new().workflow(APPTAINER).file("img/tools.sif", "image v1").file("data/in.txt", "protein\n");
    let record = t.path().join("record.txt");
    let path = program_on_path(t.path(), "apptainer", FAKE_APPTAINER);
    let t = t.env("PATH", &path).env("RECORD", &record.display().to_string()).args(["run"]);
    t.success();
    let dir = t.path().canonicalize().unwrap();
    assert_eq!(fs_err::read_to_string(dir.join("out/folded.txt")).unwrap(), "protein\nfast setup fold\n");
    let recorded = normalize_in(&fs_err::read_to_string(&record).unwrap(), &dir);
    let first = recorded.lines().next().unwrap();
    assert_eq!(
        first,
        "exec --bind [DIR]:[DIR] --pwd [DIR]/data [DIR]/img/tools.sif sh -c trap 'echo $? > \"$FLOW_SETUP_STATUS\"' EXIT"
    );
    for var in ["APPTAINERENV_MODE=fast", "APPTAINERENV_FLOW_TASK=fold", "APPTAINERENV_FLOW_INDEX=0"] {
        assert!(recorded.lines().any(|l| l == var), "{var} missing from\n{recorded}");
    }

    // The image file's content is part of the fingerprint.
    t.success();
    assert_eq!(counts(t.path()), (0, 1, 0));
    fs_err::write(t.path().join("img/tools.sif"), "image v2").unwrap();
    let plan = t.success_with(&["plan", "--why"]);
    assert!(plan.contains("container changed"), "{plan}");
    t.success();
    assert_eq!(counts(t.path()), (1, 0, 0));
}

#[test]
fn a_missing_image_stops_the_run_before_any_task_starts() {
    let workflow = "[[tasks]]\nname = \"first\"\noutputs = [\"first.txt\"]\ncommand = \"touch first.txt\"\n\
                    [[tasks]]\nname = \"dock\"\ncontainer = \"docker://ghcr.io/lab/dock:2\"\ncommand = \"true\"\n";
    let t = Test::new().workflow(workflow);
    let path = program_on_path(t.path(), "podman", "#!/bin/sh\necho 'Error: image not known' >&2\nexit 125\n");
    let t = t.env("PATH", &path).args(["run"]);
    let out = t.run();
    assert_code(&out, 2);
    assert_eq!(
        out.stderr,
        "error: cannot run task `dock` in container `docker://ghcr.io/lab/dock:2`: image `ghcr.io/lab/dock:2` is not \
         in podman's local images; fetch it first (`podman pull ghcr.io/lab/dock:2`, or build or import it)\n"
    );
    assert!(!t.path().join("first.txt").exists());
    assert!(run_ids(t.path()).is_empty());
}

/// Issue 27: `flow check` and `flow plan` find an image the engine lacks,
/// at the `container` key, as a warning (exit 0: the image may be pulled
/// before the run); `flow run` still refuses it.
#[test]
fn check_and_plan_warn_of_a_missing_image_at_its_container_key() {
    let workflow = "[[tasks]]\nname = \"dock\"\ncontainer = \"docker://ghcr.io/lab/dock:2\"\ncommand = \"true\"\n";
    let t = Test::new().workflow(workflow);
    let path = program_on_path(t.path(), "podman", "#!/bin/sh\necho 'Error: image not known' >&2\nexit 125\n");
    let warning = "warning: workflow.toml:3:13: cannot run task `dock` in container `docker://ghcr.io/lab/dock:2`: \
                   image `ghcr.io/lab/dock:2` is not in podman's local images; fetch it first (`podman pull \
                   ghcr.io/lab/dock:2`, or build or import it)\n";
    let t = t.env("PATH", &path);
    let check = t.run_with(&["check"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (
            0,
            format!(
                "note: containers: podman for `docker://ghcr.io/lab/dock:2` (the default for each image, found on \
                 PATH)\n{warning}ok: workflow (workflow.toml) — 1 task, 1 instance, 0 edges\n"
            )
            .as_str()
        )
    );
    let plan = t.run_with(&["plan", "--json"]);
    assert_eq!((plan.code, plan.stderr.as_str()), (0, warning));
    let found = program_on_path(t.path(), "podman", "#!/bin/sh\necho f00\n");
    let t = t.env("PATH", &found);
    assert_eq!(t.run_with(&["plan", "--json"]).stderr, "", "a local image is no warning");
}

/// Issue 26: an image named like an option (`--help`) made the engine
/// print its help and exit 0, and the task was recorded as succeeded.
#[test]
fn an_image_that_starts_with_a_dash_is_refused() {
    let workflow = "[[tasks]]\nname = \"a\"\ncontainer = \"--help\"\ncommand = \"touch ran\"\n";
    let t = Test::new().workflow(workflow).args(["check"]).stdout("").stderr(
        "flow::compile::bad_image

  × container image `--help` of task `a` starts with `-`
   ╭─[workflow.toml:3:13]
 2 │ name = \"a\"
 3 │ container = \"--help\"
   ·             ────┬───
   ·                 ╰── not an image
 4 │ command = \"touch ran\"
   ╰────
  help: an image reference names a repository and a tag (`docker.io/library/alpine:3.20`) or a
        `.sif` file; it never starts with `-`
error: 1 problem in workflow.toml
",
    );
    t.invalid();
    let run = t.run_with(&["run"]);
    assert_code(&run, 2);
    assert!(!t.path().join("ran").exists());
}

/// A stand-in for `podman`: records its arguments; `image inspect` knows
/// every image; `run` runs what follows the image, which follows `--`.
const FAKE_PODMAN: &str = r#"#!/bin/sh
printf '%s\n' "$*" >> "$RECORD"
[ "$1" = image ] && { echo abc; exit 0; }
while [ "$1" != -- ]; do shift; done
shift 2
exec "$@"
"#;

/// Issue 26: the engine reads the image after `--`, never as an option.
#[test]
fn podman_is_given_the_image_after_a_double_dash() {
    let workflow = "[[tasks]]\nname = \"a\"\ncontainer = \"localhost/t:1\"\ncommand = \"echo in > in.txt\"\n";
    let t = Test::new().workflow(workflow);
    let path = program_on_path(t.path(), "podman", FAKE_PODMAN);
    let record = t.path().join("record.txt").display().to_string();
    let t = t.env("PATH", &path).env("RECORD", &record).args(["run"]);
    t.success();
    assert_eq!(read(&t, "in.txt"), "in\n");
    let calls = read(&t, "record.txt");
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(calls[0], "image inspect --format {{.Id}} -- localhost/t:1");
    assert!(calls[1].starts_with("run --rm --init --pull=never "), "{calls:?}");
    assert!(calls[1].ends_with(" -- localhost/t:1 sh -c echo in > in.txt"), "{calls:?}");
}

#[test]
fn an_unknown_engine_is_a_diagnostic_with_a_suggestion() {
    let workflow = "[containers]\nengine = \"apptainr\"\n[[tasks]]\nname = \"a\"\ncommand = \"true\"\n";
    let out = Test::new().workflow(workflow).args(["check"]).invalid();
    assert!(out.contains("unknown container engine `apptainr`"), "{out}");
    assert!(out.contains("workflow.toml:2:10"), "{out}");
    assert!(out.contains("did you mean `apptainer`?"), "{out}");
}

#[test]
fn check_says_which_engine_a_profile_would_use() {
    let workflow =
        "[containers]\nengine = \"podman\"\n[[tasks]]\nname = \"a\"\ncontainer = \"x.sif\"\ncommand = \"true\"\n";
    let profiles = "[profile.hpc]\ncontainer_engine = \"apptainer\"\n[profile.laptop]\nlocal_worker = true\n";
    let t = Test::new().workflow(workflow).file("flow.profiles.toml", profiles);
    let ok = "ok: workflow (workflow.toml) — 1 task, 1 instance, 0 edges\n";
    let hpc = t.run_with(&["check", "--profile", "hpc"]);
    assert_eq!(hpc.stdout, format!("note: containers: apptainer (from profile `hpc`)\n{ok}"));
    let laptop = t.run_with(&["check", "--profile", "laptop"]);
    assert_eq!(laptop.stdout, format!("note: containers: podman (from the workflow's `[containers] engine`)\n{ok}"));
}

/// `flow` started in `t`'s directory with `path` as its `PATH`, its stderr in the file `stderr`.
fn spawn_with_path(t: &Test, args: &[&str], path: &str, stderr: &str) -> std::process::Child {
    std::process::Command::new(flow_bin())
        .args(args)
        .current_dir(t.path())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(fs_err::File::create(t.path().join(stderr)).unwrap().into_parts().0)
        .spawn()
        .expect("start flow")
}

#[test]
fn a_worker_without_the_engine_fails_the_instance_and_says_why() {
    let workflow = "[[tasks]]\nname = \"fold\"\ncontainer = \"img/tools.sif\"\ncommand = \"true\"\n";
    let t = Test::new().workflow(workflow).file("img/tools.sif", "image v1");
    let with_engine = program_on_path(t.path(), "apptainer", FAKE_APPTAINER);
    let args = ["run", "--listen", "127.0.0.1:0", "--no-local-worker"];
    let mut run = spawn_with_path(&t, &args, &with_engine, "run.stderr");
    let state = t.path().join(STATE_DIR);
    let access = || RunDir::latest(&state).map(|r| r.access()).filter(|a| a.exists());
    assert!(wait_for(Duration::from_secs(30), || access().is_some()), "{}", read(&t, "run.stderr"));
    let access = access().unwrap().display().to_string();
    // The worker's PATH has no container engine.
    let empty = t.path().join("empty-bin");
    fs_err::create_dir_all(&empty).unwrap();
    let worker_args = ["worker", "--access", access.as_str(), "--cpus", "1"];
    let mut worker = spawn_with_path(&t, &worker_args, &empty.display().to_string(), "worker.stderr");
    assert_eq!(finish(&t, &mut run, Duration::from_secs(60)), 1);
    let _ = wait_child(&mut worker, Duration::from_secs(10));
    let stderr = read(&t, "run.stderr");
    assert!(
        stderr.contains("✗ fold failed: could not start: container engine `apptainer` not found on this worker's PATH"),
        "{stderr}"
    );
}

/// Whether podman can be used (see [`crate::support::needs`]).
fn podman_available() -> bool {
    crate::support::needs::met(
        crate::support::needs::runs("podman", &["--version"]),
        "needs podman, which is not installed (apt-get install podman runc catatonit busybox-static)",
    )
}

/// Podman with this machine's configuration (`runc` as the runtime, no
/// default ulimits: see the containers guide), in a directory of its own,
/// and the images a test imports, removed when the test ends.
struct Podman {
    _dir: tempfile::TempDir,
    conf: PathBuf,
    images: Vec<String>,
}

impl Podman {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("containers.conf");
        let text = "[containers]\ndefault_ulimits = []\n[engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\n\
                    events_logger = \"file\"\n";
        fs_err::write(&conf, text).unwrap();
        Podman { _dir: dir, conf, images: Vec::new() }
    }

    /// `CONTAINERS_CONF` for `flow`.
    fn conf(&self) -> String {
        self.conf.display().to_string()
    }

    /// Runs podman with `args`.
    fn run(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("podman").env("CONTAINERS_CONF", &self.conf).args(args).output().expect("podman")
    }

    /// Imports a busybox image as `name`, with `marker` in `/marker`.
    fn import_busybox(&mut self, name: &str, marker: &str) {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        fs_err::create_dir_all(&bin).unwrap();
        fs_err::copy("/bin/busybox", bin.join("busybox")).expect("busybox-static is installed");
        for applet in ["sh", "cat", "echo", "id", "pwd", "sleep", "env", "tr", "sort"] {
            std::os::unix::fs::symlink("busybox", bin.join(applet)).unwrap();
        }
        fs_err::write(root.path().join("marker"), marker).unwrap();
        let script = format!("tar -C {} -c . | podman import - {name}", root.path().display());
        let out = std::process::Command::new("sh").args(["-c", &script]).env("CONTAINERS_CONF", &self.conf).output();
        let out = out.unwrap();
        assert!(out.status.success(), "podman import: {}", String::from_utf8_lossy(&out.stderr));
        // The id it printed: an image replaced by a later import is removed too.
        self.images.push(String::from_utf8_lossy(&out.stdout).trim().to_owned());
        self.images.push(name.to_owned());
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        for image in self.images.iter().rev() {
            let _ = self.run(&["rmi", "-f", image]);
        }
    }
}

const PODMAN: &str = r#"
[[tasks]]
name = "count"
container = "localhost/{{ vars.image }}"
inputs = ["data/seq.txt"]
outputs = ["results/count.txt"]
cwd = "data"
env = { LAB = "fold" }
setup = ["export FROM_SETUP=yes"]
command = "cat seq.txt /marker > ../results/count.txt; echo $LAB $FLOW_TASK $FLOW_INDEX $FROM_SETUP $(id -u):$(id -g) $(pwd) >> ../results/count.txt"
"#;

#[test]
#[ignore = "needs podman (apt-get install podman runc catatonit busybox-static): pass --include-ignored"]
fn a_task_runs_in_a_podman_container_and_its_image_is_in_the_fingerprint() {
    if !podman_available() {
        return;
    }
    let mut podman = Podman::new();
    let name = format!("flow-test-{}:1", std::process::id());
    podman.import_busybox(&format!("localhost/{name}"), "v1\n");
    let image_var = format!("image={name}");
    let t = Test::new().workflow(PODMAN).file("data/seq.txt", "ACGT\n");
    let t = t.env("CONTAINERS_CONF", &podman.conf()).args(["run", "-v", &image_var]);
    t.success();
    let dir = t.path().canonicalize().unwrap();
    let uid = String::from_utf8(std::process::Command::new("id").arg("-u").output().unwrap().stdout).unwrap();
    let gid = String::from_utf8(std::process::Command::new("id").arg("-g").output().unwrap().stdout).unwrap();
    let expected = format!("ACGT\nv1\nfold count 0 yes {}:{} {}/data\n", uid.trim(), gid.trim(), dir.display());
    assert_eq!(fs_err::read_to_string(dir.join("results/count.txt")).unwrap(), expected);

    // The same image: nothing runs again.
    t.success();
    assert_eq!(counts(t.path()), (0, 1, 0));
    // Imported again with other content: a new image id, the task reruns.
    podman.import_busybox(&format!("localhost/{name}"), "v2\n");
    t.success();
    assert_eq!(counts(t.path()), (1, 0, 0));
    assert!(fs_err::read_to_string(dir.join("results/count.txt")).unwrap().contains("v2\n"));
}

#[test]
#[ignore = "needs podman (apt-get install podman runc catatonit busybox-static): pass --include-ignored"]
fn a_timeout_kills_the_task_inside_its_container() {
    if !podman_available() {
        return;
    }
    let mut podman = Podman::new();
    let name = format!("localhost/flow-sleep-{}:1", std::process::id());
    podman.import_busybox(&name, "");
    let workflow =
        format!("[[tasks]]\nname = \"nap\"\ncontainer = \"{name}\"\ntimeout = \"2s\"\ncommand = \"sleep 300\"\n");
    let t = Test::new().workflow(&workflow).env("CONTAINERS_CONF", &podman.conf()).args(["run"]);
    let out = t.timeout(Duration::from_secs(60)).status(1);
    assert!(out.stderr.contains("✗ nap failed: timed out after 2s"), "{}", out.stderr);
    let left = podman.run(&["ps", "-a", "--filter", &format!("ancestor={name}"), "--format", "{{.ID}}"]);
    assert_eq!(String::from_utf8_lossy(&left.stdout), "", "a container is left behind");
}

/// The pocket-docking example runs its `summary` in the image `-v image=`
/// names, with the same result as on the host.
#[test]
#[ignore = "needs podman (apt-get install podman runc catatonit busybox-static): pass --include-ignored"]
fn the_pocket_docking_example_runs_its_summary_in_a_container() {
    if !podman_available() {
        return;
    }
    let mut podman = Podman::new();
    let name = format!("localhost/flow-docking-{}:1", std::process::id());
    podman.import_busybox(&name, "");
    let t = Test::new();
    crate::support::copy::copy_example(&crate::support::root().join("examples/workflows/pocket-docking"), t.path());
    let t = t.env("CONTAINERS_CONF", &podman.conf());
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let on_host = fs_err::read_to_string(t.path().join("summary.txt")).expect("summary");
    let image = format!("image={name}");
    let out = t.run_with(&["run", "-v", &image]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(counts(t.path()), (1, 17, 0), "the image is part of the summary's fingerprint: only it ran");
    assert_eq!(fs_err::read_to_string(t.path().join("summary.txt")).expect("summary"), on_host);
}

/// `[finally]` runs in the image its `container` names, with its setup lines.
#[test]
#[ignore = "needs podman (apt-get install podman runc catatonit busybox-static): pass --include-ignored"]
fn finally_runs_in_its_container() {
    if !podman_available() {
        return;
    }
    let mut podman = Podman::new();
    let name = format!("localhost/flow-finally-{}:1", std::process::id());
    podman.import_busybox(&name, "inside\n");
    let text = format!(
        "[[tasks]]\nname = \"t\"\ncommand = \"true\"\n\n[finally]\ncontainer = \"{name}\"\n\
         setup = [\"export WHERE=$(cat /marker)\"]\ncommand = \"echo $WHERE $FLOW_OUTCOME > finally.txt\"\n"
    );
    let t = Test::new().workflow(&text).env("CONTAINERS_CONF", &podman.conf());
    let out = t.run_with(&["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(fs_err::read_to_string(t.path().join("finally.txt")).expect("finally ran"), "inside succeeded\n");
}

/// Issue 27: `flow plan --command` prints what the shell gets for an
/// instance — the environment, the setup lines and the container wrapper —
/// built by the code a run starts the task with (here Apptainer's stand-in,
/// whose command line `apptainer_is_given_…` checks in a run).
#[test]
fn plan_command_shows_the_container_wrapper_setup_lines_and_environment() {
    let t = Test::new().workflow(APPTAINER).file("img/tools.sif", "image v1").file("data/in.txt", "protein\n");
    let path = program_on_path(t.path(), "apptainer", FAKE_APPTAINER);
    let t = t.env("PATH", &path).args(["plan", "--command", "fold"]);
    let expected = r#"# fold
cd [DIR]/data
env \
  APPTAINERENV_MODE=fast \
  APPTAINERENV_FLOW_TASK=fold \
  APPTAINERENV_FLOW_INDEX=0 \
  APPTAINERENV_FLOW_ITEM= \
  APPTAINERENV_FLOW_INSTANCE=0 \
  APPTAINERENV_FLOW_RUN_DIR=[DIR]/.flow/runs/RUN_ID \
  APPTAINERENV_FLOW_VARIANT=0 \
  APPTAINERENV_FLOW_CPUS= \
  APPTAINERENV_FLOW_GPUS= \
  APPTAINERENV_CUDA_VISIBLE_DEVICES= \
  APPTAINERENV_FLOW_SETUP_STATUS=[DIR]/.flow/runs/RUN_ID/setup/fold.0.0 \
  apptainer exec --bind [DIR]:[DIR] --pwd [DIR]/data [DIR]/img/tools.sif sh -c 'trap '\''echo $? > "$FLOW_SETUP_STATUS"'\'' EXIT
set -e
export STEP=setup
set +e
trap - EXIT
cat in.txt > ../out/folded.txt; echo $MODE $STEP $FLOW_TASK >> ../out/folded.txt'
"#;
    let out = t.status(0);
    assert_eq!(normalize_in(&out.stdout, &t.path().canonicalize().unwrap()), expected);
    // Without the engine the image cannot run: the run's own error, status 2.
    let bare = Test::new().workflow(APPTAINER).file("img/tools.sif", "v1").file("data/in.txt", "").env("PATH", "/x");
    let bare = bare.args(["plan", "--command", "fold"]).stdout("").stderr(
        "error: cannot run task `fold` in container `img/tools.sif`: no container engine found on PATH (looked for \
         podman, docker, apptainer, singularity); install it, or name another with `[containers] engine` or a \
         profile's `container_engine`\n",
    );
    bare.invalid();
}

/// Issue 27: with the real engine, `flow check` finds an image it does not
/// have (`podman image inspect`, no pull), and finds it no more once imported.
#[test]
#[ignore = "needs podman (apt-get install podman runc catatonit busybox-static): pass --include-ignored"]
fn check_finds_an_image_podman_does_not_have() {
    if !podman_available() {
        return;
    }
    let mut podman = Podman::new();
    let name = format!("localhost/flow-check-{}:1", std::process::id());
    let workflow = format!("[[tasks]]\nname = \"count\"\ncontainer = \"{name}\"\ncommand = \"true\"\n");
    let t = Test::new().workflow(&workflow).env("CONTAINERS_CONF", &podman.conf());
    let before = t.run_with(&["check"]);
    let warning = format!(
        "warning: workflow.toml:3:13: cannot run task `count` in container `{name}`: image `{name}` is not in \
         podman's local images; fetch it first (`podman pull {name}`, or build or import it)"
    );
    assert_eq!(before.code, 0);
    assert_eq!(before.stdout.lines().nth(1), Some(warning.as_str()), "{}", before.stdout);
    podman.import_busybox(&name, "v1\n");
    let after = t.run_with(&["check"]);
    assert_eq!(after.code, 0);
    assert!(!after.stdout.contains("warning:"), "{}", after.stdout);
}
