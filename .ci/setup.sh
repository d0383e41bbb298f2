# Sourced by .ci/full-suite and .ci/run (bash, as root, on Debian): installs
# what the full test suite needs beyond Rust when it is missing, configures
# Podman for machines without systemd, and puts a Rust toolchain with
# rustfmt and clippy on PATH. Slurm is .ci/slurm/start.sh's to install.

step() { printf '\n==> %s\n' "$*"; }

[ "$(id -u)" = 0 ] || { echo "error: run as root (it installs packages and starts Slurm)" >&2; exit 1; }
command -v apt-get >/dev/null || { echo "error: needs Debian or Ubuntu (apt-get)" >&2; exit 1; }

# chromium renders `flow report`'s page in a real browser (tests/report.rs);
# podman runs tasks in containers (tests/containers.rs), with runc as its
# runtime, catatonit for `--init`, and busybox-static to build the test
# image from; musl-gcc builds the static binary and python3's venv installs
# the wheel (tests/dist.rs, scripts/dist).
missing=""
for program in chromium podman runc catatonit busybox musl-gcc; do
    command -v "$program" >/dev/null || missing="$missing $program"
done
python3 -m venv --help >/dev/null 2>&1 || missing="$missing python3-venv"
if [ -n "$missing" ]; then
    step "apt packages (missing:$missing)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends chromium podman runc catatonit busybox-static musl-tools \
        python3-venv
fi

# Podman here: crun refuses a mixed cgroup v1/v2 layout, so runc; Podman's
# default open-files limit can be above the machine's hard limit, so no
# default ulimits; no systemd, so cgroupfs and a file events log.
step "podman configuration"
mkdir -p /etc/containers
cat > /etc/containers/containers.conf <<'CONF'
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
podman --version

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
    step "installing Rust"
    command -v curl >/dev/null || apt-get install -y --no-install-recommends curl ca-certificates
    curl https://sh.rustup.rs -sSf | sh -s -- -y --profile minimal -c rustfmt,clippy
    export PATH="$HOME/.cargo/bin:$PATH"
elif command -v rustup >/dev/null 2>&1; then
    rustup component add rustfmt clippy || true
fi
cargo --version

# What scripts/dist needs: the musl target for the static binary, and
# maturin with zig for the wheel (in a virtual environment under target/).
if command -v rustup >/dev/null 2>&1; then
    rustup target add x86_64-unknown-linux-musl
fi
if ! command -v maturin >/dev/null 2>&1; then
    step "maturin and zig"
    python3 -m venv target/dist-tools
    target/dist-tools/bin/pip install --quiet maturin ziglang auditwheel
    export PATH="$PWD/target/dist-tools/bin:$PATH"
fi
