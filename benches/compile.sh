#!/usr/bin/env bash
# Compiler speed through the CLI: wall time and peak RSS of `flow check`
# on three workloads. Usage: benches/compile.sh [RUNS]  (default 5 runs each;
# the best wall time and the largest RSS are reported).
set -euo pipefail
runs=${1:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
flow="$root/target/release/flow"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/lines" "$work/pipeline"
awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "ligand-%07d C1=CC=CC=C1\n", i }' > "$work/lines/lines.txt"
cat > "$work/lines/workflow.toml" <<'TOML'
[[tasks]]
name = "each"
each_line = "lines.txt"
command = "echo {{ item }}"
outputs = ["out/{{ index }}.txt"]
TOML
{
  prev=""
  for stage in a b c; do
    printf '[[tasks]]\nname = "%s"\nrange = "1-100000"\ncommand = "touch %s/{{ index }}"\n' "$stage" "$stage"
    [ -n "$prev" ] && printf 'inputs = ["%s/{{ index }}"]\n' "$prev"
    printf 'outputs = ["%s/{{ index }}"]\n\n' "$stage"
    prev=$stage
  done
} > "$work/pipeline/workflow.toml"

measure() { # name, workflow file
  local best="" rss=0
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %M' -o "$work/time" "$flow" check "$2" > /dev/null
    read -r secs kib < "$work/time"
    if [ -z "$best" ] || awk -v a="$secs" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$secs; fi
    [ "$kib" -gt "$rss" ] && rss=$kib
  done
  printf '%-44s %8s s %8.1f MiB\n' "$1" "$best" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
}

echo "flow check, best of $runs runs (wall time, peak RSS)"
measure "each_line over 1,000,000 lines" "$work/lines/workflow.toml"
measure "3 stages x 100,000, inferred file deps" "$work/pipeline/workflow.toml"
measure "ligand-screening example" "$root/examples/workflows/ligand-screening/workflow.toml"
