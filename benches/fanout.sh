#!/usr/bin/env bash
# Per-instance fan-out: what resolving a part per producer instance costs
# the coordinator, against the same instances expanded before the run.
# Usage: benches/fanout.sh [RUNS] [P]
#   RUNS  best of RUNS wall-clock times (default 3)
#   P     producer instances (default 10000); producer i lists 1 + (7i mod 10)
#         items, so P=10000 gives 55,000 downstream instances
# Static: `search` is a range of P, `refine` an `each_line` over one list
# of all the items, which exists before the run.
# Nested: `refine` is `for_each = "search"` over `hits/{{ index }}.txt`, a
# part per producer instance, read as each one finishes.
# With --dry-exec (engine time only; the lists exist before the run, as
# under --dry-exec nothing writes them) and for real (each producer writes
# its list, each refinement runs `true`). Peak RSS is flow's own.
set -euo pipefail
runs=${1:-3}
p=${2:-10000}
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
flow="$root/target/release/flow"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# measure CMD...: "SECONDS KIB" of CMD (which must succeed): wall clock and peak RSS.
measure() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" > /dev/null 2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  cat "$work/time"
}

# best DIR ARGS...: the best wall clock of $runs fresh runs in DIR, and the peak RSS of that run.
best() {
  local dir=$1 best="999999 0" t
  shift
  for _ in $(seq "$runs"); do
    rm -rf "$dir/.flow" "$dir/done"
    t=$(cd "$dir" && measure "$flow" run "$@")
    best=$(awk -v a="$t" -v b="$best" 'BEGIN { split(a, x, " "); split(b, y, " "); print (x[1] < y[1]) ? a : b }')
  done
  awk -v t="$best" 'BEGIN { split(t, x, " "); printf "%6.2fs %6.0f MiB", x[1], x[2] / 1024 }'
}

# setup DIR: the static and nested workflows over the same items.
setup() {
  local dir=$1
  mkdir -p "$dir/static" "$dir/nested/hits"
  for i in $(seq 0 $((p - 1))); do
    seq 1 $((1 + 7 * i % 10)) | sed "s/^/$i-/" > "$dir/nested/hits/$i.txt"
  done
  cat "$dir"/nested/hits/*.txt > "$dir/static/all.txt"
  local search='[[tasks]]\nname = "search"\nrange = "0-%s"\ncommand = "mkdir -p hits && seq 1 $(( 1 + 7 * {{ index }} %% 10 )) | sed s/^/{{ index }}-/ > hits/{{ index }}.txt"\noutputs = ["hits/{{ index }}.txt"]\n\n'
  printf "$search"'[[tasks]]\nname = "refine"\neach_line = "all.txt"\ncommand = "true"\n' $((p - 1)) > "$dir/static/workflow.toml"
  printf "$search"'[[tasks]]\nname = "refine"\nfor_each = "search"\neach_line = "hits/{{ index }}.txt"\ncommand = "true"\n' $((p - 1)) > "$dir/nested/workflow.toml"
}

setup "$work"
items=$(wc -l < "$work/static/all.txt")
echo "per-instance fan-out: $p producers, $items refinements; best of $runs, $(nproc) cores"
printf '  %-22s %-20s %-20s\n' "" "static" "nested"
printf '  %-22s %-20s %-20s\n' "--dry-exec" "$(best "$work/static" --dry-exec)" "$(best "$work/nested" --dry-exec)"
printf '  %-22s %-20s %-20s\n' "for real" "$(best "$work/static")" "$(best "$work/nested")"
