#!/usr/bin/env bash
# Dynamic stages: what expanding over a file the run writes costs the
# coordinator, against the same stage expanded before the run.
# Usage: benches/dynamic.sh [RUNS] [N]
#   RUNS  best of RUNS wall-clock times (default 3)
#   N     instances of the stage (default 100000)
# Static: `each_line` over an N-line list that exists before the run.
# Dynamic: a task writes the same list during the run; the stage expands
# over it once that task is done. Both with --dry-exec (engine time only:
# compile, resolve, schedule, journal) and, for N/10 instances, for real
# (`true` per instance on the local pool).
set -euo pipefail
runs=${1:-3}
n=${2:-100000}
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
flow="$root/target/release/flow"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# seconds CMD...: wall-clock seconds of CMD (which must succeed).
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > /dev/null 2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

# best DIR ARGS...: the best of $runs fresh runs of flow in DIR.
best() {
  local dir=$1 best=999999 t
  shift
  for _ in $(seq "$runs"); do
    rm -rf "$dir/.flow"
    t=$(cd "$dir" && seconds "$flow" run "$@")
    best=$(awk -v a="$t" -v b="$best" 'BEGIN { print (a < b) ? a : b }')
  done
  echo "$best"
}

# setup DIR COUNT: a static and a dynamic workflow over COUNT lines. Under
# --dry-exec the writer does not run and the stage expands over the file
# on disk, so the dynamic directory gets one too.
setup() {
  local dir=$1 count=$2
  mkdir -p "$dir/static" "$dir/dynamic"
  seq 1 "$count" > "$dir/static/list.txt"
  cp "$dir/static/list.txt" "$dir/dynamic/list.txt"
  printf '[[tasks]]\nname = "work"\neach_line = "list.txt"\ncommand = "true"\n' > "$dir/static/workflow.toml"
  printf '[[tasks]]\nname = "list"\ncommand = "seq 1 %s > list.txt"\noutputs = ["list.txt"]\n\n[[tasks]]\nname = "work"\neach_line = "list.txt"\ncommand = "true"\n' "$count" > "$dir/dynamic/workflow.toml"
}

setup "$work/dry" "$n"
setup "$work/real" $((n / 10))
echo "dynamic stages: best of $runs, $(nproc) cores"
printf '  %-28s %10s %10s\n' "" static dynamic
printf '  %-28s %9ss %9ss\n' "$n instances, --dry-exec" "$(best "$work/dry/static" --dry-exec)" "$(best "$work/dry/dynamic" --dry-exec)"
printf '  %-28s %9ss %9ss\n' "$((n / 10)) instances of true" "$(best "$work/real/static")" "$(best "$work/real/dynamic")"
