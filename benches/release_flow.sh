# Sourced by the benchmark scripts: builds the release `flow` and sets
# `root` (the repository), `flow` (the binary), `commit` (what is measured), `work` (a scratch
# directory) and `pids` (background `flow run` and `flow worker` processes
# of the current timing), and the functions `access_file` and `fail`. On exit the processes still in `pids` are
# stopped and `work` is removed; Ctrl-C ends the script with 130.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
target=${CARGO_TARGET_DIR:-$root/target}
case $target in /*) ;; *) target=$PWD/$target ;; esac
flow="$target/release/flow"
work=$(mktemp -d)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# The commit measured, for the heading of a script's table.
commit=$(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo unknown)
git -C "$root" diff --quiet HEAD -- engine src 2> /dev/null || commit="$commit + uncommitted changes"
# fail MESSAGE: says MESSAGE and the end of each stderr file kept in
# `$work` (or a directory in it), and ends the script.
fail() {
  local f
  echo "$1" >&2
  for f in "$work"/*.stderr "$work"/*/*.stderr; do
    [ -s "$f" ] && { echo "--- ${f#"$work"/}" >&2; tail -20 "$f" >&2; }
  done
  exit 1
}
# access_file DIR: waits (up to 30 s) for the access file of the run under
# DIR and prints its path; on a time-out prints DIR/run.stderr and fails.
access_file() {
  local access=
  for _ in $(seq 600); do
    access=$(ls "$1"/.flow/runs/*/access.json 2> /dev/null | head -1 || true)
    [ -n "$access" ] && break
    sleep 0.05
  done
  [ -n "$access" ] || { cat "$1/run.stderr" >&2; return 1; }
  echo "$access"
}
trap 'exit 130' INT TERM HUP
