//! What `scripts/dist` builds (issue 27): a static binary that runs a
//! workflow where there is no libc at all, and a wheel that `pip install`
//! puts on `PATH` in a fresh virtual environment. Each builds a release
//! (minutes), so they are ignored unless `--include-ignored` is passed;
//! then, without the tools they need, they are skipped with a message,
//! and fail under `CI=true` (see [`crate::support::needs`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::copy::copy_example;
use crate::support::{needs, root};

/// Runs `scripts/dist WHAT` into `dist`; returns the file it built whose
/// name ends with `suffix`.
fn dist(what: &str, dist: &Path, suffix: &str) -> PathBuf {
    let out = Command::new("bash")
        .arg(root().join("scripts/dist"))
        .arg(what)
        .env("DIST", dist)
        .output()
        .expect("run scripts/dist");
    assert!(out.status.success(), "scripts/dist {what}:\n{}", String::from_utf8_lossy(&out.stderr));
    let built = fs_err::read_dir(dist).expect("dist").map(|e| e.expect("entry").path());
    built.into_iter().find(|p| p.to_string_lossy().ends_with(suffix)).expect("the file it built")
}

/// `program` with `args` succeeds; returns its stdout.
fn output(program: &Path, args: &[&str], dir: &Path) -> String {
    let out = Command::new(program).args(args).current_dir(dir).output().expect("start program");
    assert!(
        out.status.success(),
        "{} {args:?}:\n{}{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The static binary runs the hello example in a directory tree that holds
/// only it, busybox and the example (`chroot`, so as root): no libc, no
/// loader, no `/usr`.
#[test]
#[ignore = "builds a static release (rustup target add x86_64-unknown-linux-musl; apt-get install musl-tools \
            busybox-static) and runs it in a chroot (root): pass --include-ignored"]
fn the_static_binary_runs_a_workflow_where_there_is_no_libc() {
    let musl = Command::new("rustup").args(["target", "list", "--installed"]).output();
    let musl = musl.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).lines().any(|l| l == "x86_64-unknown-linux-musl"));
    let root_user = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout == b"0\n");
    let found = musl && needs::runs("musl-gcc", &["--version"]) && Path::new("/bin/busybox").is_file() && root_user;
    let what = "needs the x86_64-unknown-linux-musl target (rustup target add), musl-gcc (apt-get install \
                musl-tools), /bin/busybox (apt-get install busybox-static) and root (for chroot)";
    if !needs::met(found, what) {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let binary = dist("static", &dir.path().join("dist"), "-x86_64-linux-musl");
    let jail = dir.path().join("jail");
    let bin = jail.join("bin");
    fs_err::create_dir_all(&bin).expect("mkdir");
    for dir in ["proc", "dev", "tmp"] {
        fs_err::create_dir_all(jail.join(dir)).expect("mkdir");
    }
    fs_err::copy("/bin/busybox", bin.join("busybox")).expect("copy busybox");
    for applet in ["sh", "echo", "tr", "cat"] {
        std::os::unix::fs::symlink("busybox", bin.join(applet)).expect("applet");
    }
    fs_err::copy(&binary, bin.join("flow")).expect("copy flow");
    copy_example(&root().join("examples/workflows/hello"), &jail.join("w"));
    let script = "mount -t proc proc proc && mount --bind /dev dev && \
                  chroot . /bin/sh -c 'cd /w && PATH=/bin flow run'; code=$?; umount proc dev; exit $code";
    let out = Command::new("sh").args(["-c", script]).current_dir(&jail).output().expect("chroot");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(fs_err::read_to_string(jail.join("w/shout.txt")).expect("shout ran"), "HELLO, WORLD!\n");
    assert!(!jail.join("lib").exists() && !jail.join("usr").exists(), "no libc in the tree");
}

/// The wheel installs into a fresh virtual environment, puts `flow` on its
/// `PATH`, runs an example, and is tagged manylinux2014 (glibc 2.17).
#[test]
#[ignore = "builds a release wheel (pip install maturin ziglang): pass --include-ignored"]
fn the_wheel_installs_into_a_fresh_venv_and_runs_an_example() {
    let found = needs::runs("maturin", &["--version"]) && needs::runs("python3", &["-m", "venv", "--help"]);
    if !needs::met(found, "needs maturin and zig (pip install maturin ziglang) and python3 with venv") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let wheel = dist("wheel", &dir.path().join("dist"), ".whl");
    let name = wheel.file_name().and_then(|n| n.to_str()).expect("utf-8 name");
    let tags =
        format!("flow_hpc-{}-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", env!("CARGO_PKG_VERSION"));
    assert_eq!(name, tags);
    if needs::runs("auditwheel", &["--version"]) {
        let shown = output(Path::new("auditwheel"), &["show", &wheel.to_string_lossy()], dir.path());
        assert!(shown.contains("manylinux_2_17_x86_64"), "{shown}");
    }
    let venv = dir.path().join("venv");
    output(Path::new("python3"), &["-m", "venv", &venv.to_string_lossy()], dir.path());
    output(&venv.join("bin/pip"), &["install", "--no-index", &wheel.to_string_lossy()], dir.path());
    let example = dir.path().join("hello");
    copy_example(&root().join("examples/workflows/hello"), &example);
    let out = Command::new("sh")
        .args(["-c", "flow --version && flow run"])
        .current_dir(&example)
        .env("PATH", format!("{}:/usr/bin:/bin", venv.join("bin").display()))
        .output()
        .expect("flow from the venv");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("flow {}\n", env!("CARGO_PKG_VERSION")));
    assert_eq!(fs_err::read_to_string(example.join("shout.txt")).expect("shout ran"), "HELLO, WORLD!\n");
}
