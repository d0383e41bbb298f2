#!/usr/bin/env bash
# Memory and time of the commands that read a run back: peak RSS (with
# /usr/bin/time -v), the time to the first line of output and to the end,
# of `flow log list` (table, TSV, JSON), `flow log summary` and
# `flow status` on a `--dry-exec` run of N instances of `true`, their
# output read through a pipe.
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

# measure LABEL CMD...: peak RSS (MB) of CMD, and the seconds to its first
# line of output and to its end, its output read through a pipe.
measure() {
  local label=$1 start end
  shift
  start=$(date +%s%N)
  if ! /usr/bin/time -v "$@" 2> "$work/time" | { IFS= read -r _ || true; date +%s%N > "$work/first"; cat > /dev/null; }; then
    echo "command failed: $*" >&2
    cat "$work/time" >&2
    exit 1
  fi
  end=$(date +%s%N)
  awk -v label="$label" -v start="$start" -v first="$(cat "$work/first")" -v end="$end" '
    /Maximum resident set size/ { rss = $NF }
    END { printf "%-28s %7.1f MB %8.2f s %8.2f s\n", label, rss / 1024, (first - start) / 1e9, (end - start) / 1e9 }' "$work/time"
}

echo "$n instances, --dry-exec"
printf "%-28s %10s %10s %10s\n" command "peak RSS" "1st line" "end"
measure "flow run --dry-exec" "$flow" run --dry-exec
measure "flow log list" "$flow" log list
measure "flow log list --format tsv" "$flow" log list --format tsv
measure "flow log list --json" "$flow" log list --json
measure "flow log summary" "$flow" log summary
measure "flow status" "$flow" status
