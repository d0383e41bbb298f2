#!/usr/bin/env bash
# Real worker processes: `flow run --dry-exec --no-local-worker` over
# 100,000 instances of `true` with N separate `flow worker --dry-exec`
# processes of 128 CPUs each (zero-execution: each job succeeds the moment it
# arrives) joining while the run goes; the same with every worker joined
# before any task is released ("joined before the tasks": the tasks wait
# for a gate task that a worker started after the others runs), as
# HyperQueue's workers are; the same with N workers simulated in one process
# (`flow worker --copies N`, labelled "simulated"); and HyperQueue's
# zero-worker build with N `hq worker` processes when $HQ names its `hq`.
# See docs/performance.md, "Real worker processes".
# Usage: benches/workers.sh [ROUNDS] [WORKERS...]   (default: 2 rounds; 16 64 256)
#   HQ=PATH              an `hq` built with RUSTFLAGS="--cfg zero_worker"
#                        (HyperQueue 0.26.2); without it HyperQueue is skipped
#   WORKERS_MODES="..."  which of `processes joined copies hq` (default: all four)
# Per run it prints tasks/s, the coordinator's (HyperQueue's server's) CPU
# per task and its voluntary and involuntary context switches per task, the
# same for all workers together, the bytes both ways on the wire per task
# (the kernel's tcp_info through `ss`), ready → dispatched p50 and p99 (the
# trace's queue_wait, counted from the first dispatch at the earliest), and
# the time from the first dispatch to the first result. flow's rate runs
# from the first start to the last end in the journal (the gate left out);
# HyperQueue's from the submission to the end of `hq submit --wait`.
set -euo pipefail
rounds=${1:-2}
[ $# -gt 0 ] && shift
case $rounds in '' | *[!0-9]* | 0) echo "usage: $0 [ROUNDS] [WORKERS...]" >&2; exit 2 ;; esac
counts=${*:-16 64 256}
modes=${WORKERS_MODES:-processes joined copies hq}
tasks=100000
# The release build, `$flow`, `$work`, `pids`, `$commit`, `fail` and the clean-up on exit.
source "$(dirname "$0")/release_flow.sh"
# shellcheck source=benches/settle.sh
. "$root/benches/settle.sh"

if [[ " $modes " == *" hq "* ]] && { [ -z "${HQ:-}" ] || [ ! -x "$HQ" ]; }; then
  echo "HyperQueue skipped: set HQ to an \`hq\` built with RUSTFLAGS=\"--cfg zero_worker\" (see docs/performance.md)" >&2
  modes=${modes//hq/}
fi

# sample_wire PORT WATCHED: the bytes both ways on the connections to PORT,
# sampled every 0.1 s while process WATCHED lives; prints the last sample.
sample_wire() {
  local io=0 sample
  while kill -0 "$2" 2> /dev/null; do
    sample=$(ss -tinH state established "( dport = :$1 )" 2> /dev/null |
      grep -o 'bytes_\(acked\|received\):[0-9]*' | awk -F: '{ n += $2 } END { print n + 0 }' || true)
    [ "${sample:-0}" -gt "$io" ] && io=$sample
    sleep 0.1
  done
  echo "$io"
}

# row MODE N RATE FIRST P50 P99 COORD WORKERS IO: one table row; COORD and
# WORKERS are "user sys voluntary involuntary" from /usr/bin/time.
row() {
  awk -v mode="$1" -v n="$2" -v rate="$3" -v first="$4" -v p50="$5" -v p99="$6" -v c="$7" -v w="$8" -v io="$9" -v t="$tasks" \
    -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
    split(c, a, " "); split(w, b, " ")
    wire = "–"; if (io > 0) wire = sprintf("%.0f", io / t)
    printf "| %s | %d | %.0f | %.1f µs | %.2f / %.2f | %.1f µs | %.2f / %.2f | %s | %s | %s | %s | %s |\n",
      mode, n, rate, (a[1] + a[2]) / t * 1e6, a[3] / t, a[4] / t, (b[1] + b[2]) / t * 1e6, b[3] / t, b[4] / t,
      wire, p50, p99, first, load }'
}

# flow_run MODE N: one flow timing with N workers, as N processes or N
# copies in one process; prints a row.
flow_run() {
  local mode=$1 n=$2 d="$work/flow-$1-$2" run_pid workers_pid access io port i
  rm -rf "$d" && mkdir -p "$d"
  if [ "$mode" = joined ]; then
    # Every worker is in before any task is released, as HyperQueue's are
    # before `hq submit`: the tasks wait for `gate`, which only a worker
    # with the resource `gate` can run, started once the others joined.
    printf '[[tasks]]\nname = "gate"\ncommand = "true"\nresources = { gate = 1 }\n\n[[tasks]]\nname = "t"\nrange = "1-%d"\ncommand = "true"\nafter = ["gate"]\nresources = { slot = 1 }\n' \
      "$tasks" > "$d/workflow.toml"
  else
    printf '[[tasks]]\nname = "t"\nrange = "1-%d"\ncommand = "true"\n' "$tasks" > "$d/workflow.toml"
  fi
  settle
  (cd "$d" && exec /usr/bin/time -f '%U %S %w %c' -o "$d/run.time" "$flow" run --dry-exec --no-local-worker \
    --listen 127.0.0.1:0 > "$d/run.stdout" 2> "$d/run.stderr") &
  run_pid=$!
  pids+=("$run_pid")
  access=$(access_file "$d")
  local shape=(--access "$access" --dry-exec --cpus 128 --gpus 8 --memory 512GiB)
  [ "$mode" = joined ] && shape+=(--resource slot=128)
  if [ "$mode" != copies ]; then
    # One parent for all of them, so that /usr/bin/time sums their usage.
    /usr/bin/time -f '%U %S %w %c' -o "$d/workers.time" bash -c '
      for i in $(seq "$1"); do "${@:2}" 2> /dev/null & done; wait' _ "$n" "$flow" worker "${shape[@]}" &
  else
    /usr/bin/time -f '%U %S %w %c' -o "$d/workers.time" "$flow" worker "${shape[@]}" --copies "$n" 2> /dev/null &
  fi
  workers_pid=$!
  pids+=("$workers_pid")
  if [ "$mode" = joined ]; then
    for _ in $(seq 1200); do
      [ "$(grep -c '^+ worker .* joined' "$d/run.stderr" 2> /dev/null)" -ge "$n" ] && break
      sleep 0.05
    done
    "$flow" worker --access "$access" --dry-exec --cpus 1 --resource gate=1 2> /dev/null &
    pids+=($!)
  fi
  port=$(sed -n 's/.*"address": *"[^"]*:\([0-9]*\)".*/\1/p' "$access")
  io=$(sample_wire "$port" "$run_pid")
  wait "$run_pid" || { cat "$d/run.stderr" >&2; exit 1; }
  wait "$workers_pid" || true
  wait
  pids=()
  # The gate is not one of the tasks measured.
  (cd "$d" && "$flow" log list --format tsv --columns start,end,ready,queue_wait,task 2> /dev/null) |
    awk -F'\t' '$5 != "gate"' > "$d/trace.tsv"
  [ "$(($(wc -l < "$d/trace.tsv") - 1))" = "$tasks" ] || { echo "flow: not all $tasks tasks ran" >&2; exit 1; }
  # Ready to dispatched, in ms, from the first dispatch at the earliest.
  awk -F'\t' "$us"'
    NR == 1 { next }
    { s[NR] = us($1); r[NR] = us($3); w[NR] = $4 / 1e6; if (first == "" || s[NR] < first) first = s[NR] }
    END { for (i in w) { late = first - r[i]; if (late < 0) late = 0; x = w[i] - late; print (x < 0 ? 0 : x) * 1000 } }' \
    "$d/trace.tsv" | sort -g > "$d/waits"
  local stats
  stats=$(awk -F'\t' "$us"'
    NR == 1 { next }
    { s = us($1); e = us($2); if (first == "" || s < first) first = s; if (end1 == "" || e < end1) end1 = e; if (e > last) last = e }
    END { span = last - first; if (span <= 0) span = 0.001; printf "%.0f %.1f", (NR - 1) / span, (end1 - first) * 1000 }' "$d/trace.tsv")
  local label="flow, $n processes"
  [ "$mode" = joined ] && label="flow, $n processes joined before the tasks"
  [ "$mode" = copies ] && label="flow, $n copies in one process (simulated)"
  row "$label" "$n" "${stats% *}" "${stats#* } ms" "$(rank 0.5 "$d/waits") ms" "$(rank 0.99 "$d/waits") ms" \
    "$(cat "$d/run.time")" "$(cat "$d/workers.time")" "$io"
}

# hq_run N: one HyperQueue timing with N zero-worker processes; prints a row.
hq_run() {
  local n=$1 d="$work/hq-$1" server_pid workers_pid io port t0 t1 i
  rm -rf "$d" && mkdir -p "$d"
  settle
  /usr/bin/time -f '%U %S %w %c' -o "$d/server.time" "$HQ" --server-dir "$d/server" server start \
    --host 127.0.0.1 > "$d/server.log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 300); do "$HQ" --server-dir "$d/server" server info > /dev/null 2>&1 && break; sleep 0.1; done
  /usr/bin/time -f '%U %S %w %c' -o "$d/workers.time" bash -c '
    for i in $(seq "$1"); do "$2" --server-dir "$3" worker start --cpus 128 --detect-resources none > /dev/null 2>&1 & done; wait' \
    _ "$n" "$HQ" "$d/server" &
  workers_pid=$!
  pids+=("$workers_pid")
  for _ in $(seq 600); do
    [ "$("$HQ" --server-dir "$d/server" worker list --output-mode quiet 2> /dev/null | wc -l)" -ge "$n" ] && break
    sleep 0.1
  done
  port=$("$HQ" --server-dir "$d/server" server info --output-mode json 2> /dev/null |
    sed -n 's/.*"worker_port": *\([0-9]*\).*/\1/p' | head -1)
  sample_wire "${port:-1}" "$server_pid" > "$d/io" &
  t0=$(date +%s.%N)
  # From its own directory: HyperQueue makes a job directory where it is submitted.
  (cd "$d" && "$HQ" --server-dir "$d/server" submit --array "1-$tasks" --wait true > "$d/submit.log" 2>&1)
  t1=$(date +%s.%N)
  "$HQ" --server-dir "$d/server" server stop > /dev/null 2>&1 || true
  wait "$server_pid" || true
  wait "$workers_pid" || true
  pids=()
  wait
  io=$(cat "$d/io")
  row "HyperQueue, $n processes" "$n" "$(awk -v a="$t0" -v b="$t1" -v t="$tasks" 'BEGIN { print t / (b - a) }')" "–" "–" "–" \
    "$(cat "$d/server.time")" "$(cat "$d/workers.time")" "$io"
}

# Seconds since midnight of an RFC 3339 time, for awk (the runs never span midnight).
us='function us(t,   s) { s = substr(t, 12, 12); return ((substr(s, 1, 2) * 60 + substr(s, 4, 2)) * 60 + substr(s, 7)) }'
# rank P FILE: the value at rank P (nearest rank) of FILE's sorted numbers.
rank() {
  awk -v p="$1" -v n="$(wc -l < "$2")" 'BEGIN { k = int(n * p); if (k < n * p) k++; if (k < 1) k = 1 } NR == k { printf "%.1f", $1; exit }' "$2"
}

echo "flow at $commit, $tasks x true under --dry-exec, workers of 128 CPUs, $rounds rounds; $(nproc) CPUs"
echo
echo "| run | workers | tasks/s | coordinator CPU per task | its switches per task (vol. / invol.) | workers' CPU per task | their switches per task | bytes on the wire per task | ready→dispatched p50 | p99 | first dispatch → first result | load |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for round in $(seq "$rounds"); do
  for n in $counts; do
    # The order alternates from round to round.
    order=$modes
    [ $((round % 2)) = 0 ] && order=$(echo "$modes" | tr ' ' '\n' | tac | tr '\n' ' ')
    for mode in $order; do
      case $mode in
        processes | joined | copies) flow_run "$mode" "$n" ;;
        hq) hq_run "$n" ;;
        *) echo "unknown mode: $mode (processes joined copies hq)" >&2; exit 2 ;;
      esac
    done
  done
done
warn_if_noisy
