#!/usr/bin/env bash
# A/B of two flow binaries on W1 (10,000 x `command = "true"`, 2 slots):
# they alternate, round after round, and each timing reports the wall-clock
# time and the CPU time of `flow run` and its tasks. CPU time is the figure
# to compare on a machine shared with other work: it barely moves with load.
# Usage: benches/ab.sh BEFORE AFTER [ROUNDS]   (two `flow` executables; default 7 rounds)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BEFORE AFTER [ROUNDS]" >&2; exit 2; }
before=$1 after=$2 rounds=${3:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=benches/settle.sh
. "$(dirname "$0")/settle.sh"

# timing NAME FLOW: one W1 run from a fresh directory; appends "wall cpu" to $work/NAME.
timing() {
  local d="$work/w1"
  rm -rf "$d" && mkdir -p "$d"
  printf '[[tasks]]\nname = "t"\nrange = "1-10000"\ncommand = "true"\n' > "$d/workflow.toml"
  settle
  /usr/bin/time -f '%e %U %S' -o "$work/time" "$2" run --cpus 2 "$d/workflow.toml" > /dev/null 2>&1
  awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$work/time" >> "$work/$1"
}

alternate "$rounds" "$before" "$after"
echo "W1 (10,000 x sh -c true, 2 slots), median of $rounds alternating rounds"
for name in before after; do
  echo "  $name: wall $(median "$work/$name" 1) s, CPU (flow and its tasks) $(median "$work/$name" 2) s"
done
warn_if_noisy
