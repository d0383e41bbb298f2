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
# its list, each refinement runs `true`). Wall clock, CPU time (flow and
# its tasks, user + system) and flow's peak RSS, each the best of RUNS.
set -euo pipefail
runs=${1:-3}
p=${2:-10000}
# The release build, `$flow`, `$work`, `pids` and the clean-up on exit.
source "$(dirname "$0")/release_flow.sh"

# measure CMD...: "SECONDS KIB CPU" of CMD (which must succeed): wall
# clock, peak RSS, and the CPU seconds of CMD and every process it waited
# for (its tasks), which a busy machine disturbs less than the wall clock.
measure() {
  /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$@" > /dev/null 2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  awk '{ print $1, $2, $3 + $4 }' "$work/time"
}

# once DIR ARGS...: "SECONDS KIB CPU" of one fresh run in DIR.
once() {
  local dir=$1
  shift
  rm -rf "$dir/.flow"
  (cd "$dir" && measure "$flow" run "$@")
}

# pair ARGS...: the best of $runs runs (each figure on its own) of the
# static and the nested workflow, alternating so a busy machine weighs on
# both alike.
pair() {
  local s="999999 0" n="999999 0" t
  for _ in $(seq "$runs"); do
    t=$(once "$work/static" "$@")
    s=$(awk -v a="$t" -v b="$s" 'BEGIN { split(a, x, " "); split(b, y, " "); for (i = 1; i <= 3; i++) printf "%s ", (x[i] < y[i] || y[2] == 0) ? x[i] : y[i] }')
    t=$(once "$work/nested" "$@")
    n=$(awk -v a="$t" -v b="$n" 'BEGIN { split(a, x, " "); split(b, y, " "); for (i = 1; i <= 3; i++) printf "%s ", (x[i] < y[i] || y[2] == 0) ? x[i] : y[i] }')
  done
  awk -v s="$s" -v n="$n" 'BEGIN { split(s, x, " "); split(n, y, " ");
    printf "%7.2fs %7.2fs %5.0f MiB   %7.2fs %7.2fs %5.0f MiB", x[1], x[3], x[2] / 1024, y[1], y[3], y[2] / 1024 }'
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
printf '  %-12s %-28s %-28s\n' "" "static" "nested"
printf '  %-12s %-28s %-28s\n' "" "wall     CPU      RSS" "wall     CPU      RSS"
printf '  %-12s %s\n' "--dry-exec" "$(pair --dry-exec)"
printf '  %-12s %s\n' "for real" "$(pair)"
