#!/usr/bin/env bash
# A/B of two flow binaries on a rerun with nothing to do: 10,000 instances
# that each write a declared output, then a glob over all of them. Each
# binary runs the workflow once in its own directory (untimed), then the
# two binaries alternate timed reruns: the cost of deciding "unchanged"
# (reading the journals, rendering, hashing, checking the outputs).
# Usage: benches/rerun.sh BEFORE AFTER [ROUNDS]   (default 5 rounds)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BEFORE AFTER [ROUNDS]" >&2; exit 2; }
before=$1 after=$2 rounds=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=benches/settle.sh
. "$(dirname "$0")/settle.sh"

for name in before after; do
  d="$work/$name.dir"
  mkdir -p "$d/o"
  cat > "$d/workflow.toml" <<'EOF'
[[tasks]]
name = "w"
range = "1-10000"
command = "echo {{ index }} > o/{{ index }}.txt"
outputs = ["o/{{ index }}.txt"]

[[tasks]]
name = "s"
command = "cat o/*.txt | wc -l > n.txt"
inputs = ["o/*.txt"]
outputs = ["n.txt"]
EOF
  flow=$before
  [ "$name" = after ] && flow=$after
  "$flow" run --cpus 2 "$d/workflow.toml" > /dev/null 2>&1
done

# timing NAME FLOW: one rerun; appends "wall cpu rss_kib" to $work/NAME.
timing() {
  settle
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$2" run --cpus 2 "$work/$1.dir/workflow.toml" > /dev/null 2>&1
  awk '{ printf "%.2f %.2f %d\n", $1, $2 + $3, $4 }' "$work/time" >> "$work/$1"
}

alternate "$rounds" "$before" "$after"
echo "rerun of 10,001 unchanged instances with declared outputs, median of $rounds alternating rounds"
for name in before after; do
  echo "  $name: wall $(median "$work/$name" 1) s, CPU $(median "$work/$name" 2) s, peak RSS $(median "$work/$name" 3) KiB"
done
warn_if_noisy
