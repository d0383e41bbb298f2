#!/usr/bin/env bash
# Output through remote workers: N `flow worker` processes on this machine
# join `flow run --listen --no-local-worker`; one task on each writes SIZE
# MiB to stdout, and all of it reaches the run's one output.log. Prints
# the MiB/s from the run's start to its end, the coordinator's CPU seconds
# (all threads, and its log writer's thread alone) and the workers' CPU
# seconds, so the cost per MiB of each part can be read off.
# Usage: benches/output.sh [N] [SIZE]         (default: 16 workers, 64 MiB each)
set -euo pipefail
n=${1:-16}
size=${2:-64}
# The release build, `$flow`, `$work`, `pids` and the clean-up on exit.
source "$(dirname "$0")/release_flow.sh"

d="$work/output"
mkdir -p "$d"
printf '[[tasks]]\nname = "t"\nrange = "1-%d"\ncommand = "head -c %dM /dev/zero | tr '"'\\\\\\\\0'"' x"\n' "$n" "$size" > "$d/workflow.toml"
(cd "$d" && exec "$flow" run --no-local-worker --listen 127.0.0.1:0 > "$d/run.stdout" 2> "$d/run.stderr") &
run_pid=$!
pids+=("$run_pid")
access=$(access_file "$d")
worker_pids=()
for _ in $(seq "$n"); do
  "$flow" worker --access "$access" --cpus 1 2> /dev/null &
  worker_pids+=("$!")
  pids+=("$!")
done
# The coordinator's CPU by thread, sampled until it exits (in clock ticks).
ticks=$(getconf CLK_TCK)
declare -A cpu names
while kill -0 "$run_pid" 2> /dev/null; do
  for stat in /proc/"$run_pid"/task/*/stat; do
    line=$(cat "$stat" 2> /dev/null) || continue
    tid=${line%% *}
    name=${line#*(}
    names[$tid]=${name%%)*}
    rest=${line##*) }
    read -r -a f <<< "$rest"
    cpu[$tid]=$(( f[11] + f[12] ))
  done
  sleep 0.05
done
wait "$run_pid" || { cat "$d/run.stderr" >&2; exit 1; }
for pid in "${worker_pids[@]}"; do wait "$pid" 2> /dev/null || true; done
log=$(ls "$d"/.flow/runs/*/output.log)
bytes=$(stat -c %s "$log")
(cd "$d" && "$flow" log list --format tsv --columns start,end 2> /dev/null) > "$d/trace.tsv"
span=$(awk -F'\t' 'function us(t, s) { s = substr(t, 12, 12); return ((substr(s, 1, 2) * 60 + substr(s, 4, 2)) * 60 + substr(s, 7)) }
  NR == 1 { next } { s = us($1); e = us($2); if (first == "" || s < first) first = s; if (e > last) last = e }
  END { print last - first }' "$d/trace.tsv")
total=0 writer=0 net=0
for tid in "${!cpu[@]}"; do
  total=$(( total + cpu[$tid] ))
  case ${names[$tid]} in
    flow-output-log) writer=$(( writer + cpu[$tid] )) ;;
    flow-net) net=$(( net + cpu[$tid] )) ;;
  esac
done
echo "| workers | MiB | seconds | MiB/s | coordinator CPU | log writer thread | connection threads |"
echo "|---|---|---|---|---|---|---|"
awk -v n="$n" -v b="$bytes" -v s="$span" -v t="$total" -v w="$writer" -v net="$net" -v k="$ticks" \
  'BEGIN { printf "| %d | %.0f | %.2f | %.0f | %.2f s | %.2f s | %.2f s |\n", n, b / 1048576, s, b / 1048576 / s, t / k, w / k, net / k }'
echo "(output.log holds $bytes bytes; CPU sampled every 0.05 s until the run exits)"
