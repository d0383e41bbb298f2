#!/usr/bin/env bash
# Memory of the commands that read a run back: peak RSS and wall time of
# `flow log list` (table, TSV, JSON), `flow log summary` and `flow status`
# on a `--dry-exec` run of N instances of `true`, with /usr/bin/time -v.
# Usage: benches/log_memory.sh [N]   (default 1000000)
# They read the journal as a stream; what they keep grows by a few bytes
# per instance (`flow log list`: 24 bytes per journal record), see
# docs/performance.md.
set -euo pipefail
n=${1:-1000000}
case $n in '' | *[!0-9]* | 0) echo "usage: $0 [N]" >&2; exit 2 ;; esac
[ -x /usr/bin/time ] || { echo "$0 needs GNU time at /usr/bin/time" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
flow="${CARGO_TARGET_DIR:-$root/target}/release/flow"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
printf '[[tasks]]\nname = "t"\nrange = "1-%s"\ncommand = "true"\n' "$n" > workflow.toml

# measure LABEL CMD...: peak RSS (MB) and wall time of CMD, its output discarded.
measure() {
  local label=$1
  shift
  if ! /usr/bin/time -v "$@" > /dev/null 2> "$work/time"; then
    echo "command failed: $*" >&2
    cat "$work/time" >&2
    exit 1
  fi
  awk -v label="$label" '
    /Maximum resident set size/ { rss = $NF }
    /Elapsed \(wall clock\)/ { split($NF, t, ":"); wall = t[1] * 60 + t[2] }
    END { printf "%-28s %7.1f MB %8.2f s\n", label, rss / 1024, wall }' "$work/time"
}

echo "$n instances, --dry-exec"
measure "flow run --dry-exec" "$flow" run --dry-exec
measure "flow log list" "$flow" log list
measure "flow log list --format tsv" "$flow" log list --format tsv
measure "flow log list --json" "$flow" log list --json
measure "flow log summary" "$flow" log summary
measure "flow status" "$flow" status
