#!/usr/bin/env bash
# One coordinator, many workers: `flow run --dry-exec --no-local-worker` with
# N zero-execution workers (`flow worker --dry-exec --copies N`, all in one
# process, each with its own TCP connection over loopback and 128 CPUs), so
# the figures are the coordinator's: scheduling, rendering, the protocol,
# the journal. See docs/performance.md, "One coordinator, many workers".
# Usage: benches/scale.sh [WORKERS...]        (default: 1 16 64 256 1000)
#   SCALE_WORKLOADS="flat100k fan wide"      which workloads (default: those
#                                            three; add flat1m for 1,000,000)
# Per workload and N it prints: tasks/s from the first start to the last end
# in the journal, the median and 99th percentile of the time from ready to
# dispatched (the trace's queue_wait, counted from the first dispatch at the
# earliest, so that the time the workers take to connect does not count),
# the coordinator's CPU seconds and peak RSS, the workers' CPU seconds, and
# the bytes both ways on the wire per task (what the workers' connections
# carried, from the kernel's tcp_info through `ss`).
set -euo pipefail
counts=${*:-1 16 64 256 1000}
workloads=${SCALE_WORKLOADS:-flat100k fan wide}
# The release build, `$flow`, `$work`, `pids` and the clean-up on exit.
source "$(dirname "$0")/release_flow.sh"

# workflow NAME DIR: writes workload NAME's workflow.toml into DIR.
workflow() {
  case $1 in
    flat100k) printf '[[tasks]]\nname = "t"\nrange = "1-100000"\ncommand = "true"\n' ;;
    flat1m) printf '[[tasks]]\nname = "t"\nrange = "1-1000000"\ncommand = "true"\n' ;;
    # 10,000 x 10 fan-out/fan-in: 10 stages of 10,000, each instance after
    # its own index in the stage before, then one task after all of them.
    fan)
      printf '[[tasks]]\nname = "s0"\nrange = "1-10000"\ncommand = "true"\n'
      for s in 1 2 3 4 5 6 7 8 9; do
        printf '[[tasks]]\nname = "s%d"\nfor_each = "s%d"\nafter = ["s%d[{{ index }}]"]\ncommand = "true"\n' "$s" $((s - 1)) $((s - 1))
      done
      printf '[[tasks]]\nname = "all"\nafter = ["s9"]\ncommand = "true"\n' ;;
    # Variants and GPUs: 100,000 tasks that take 1 GPU and 4 CPUs, or 16
    # CPUs where no GPU is free.
    wide) printf '[[tasks]]\nname = "t"\nrange = "1-100000"\ncommand = "true"\nvariants = [{ cpus = 4, gpus = 1 }, { cpus = 16 }]\n' ;;
  esac > "$2/workflow.toml"
}

# one WORKLOAD N: one timing; prints a table row.
one() {
  local d="$work/$1-$2" run_pid worker_pid access io=0 port sample
  rm -rf "$d" && mkdir -p "$d"
  workflow "$1" "$d"
  (cd "$d" && exec /usr/bin/time -f '%U %S %M' -o "$d/run.time" "$flow" run --dry-exec --no-local-worker \
    --listen 127.0.0.1:0 > "$d/run.stdout" 2> "$d/run.stderr") &
  run_pid=$!
  pids+=("$run_pid")
  access=$(access_file "$d")
  /usr/bin/time -f '%U %S' -o "$d/workers.time" "$flow" worker --access "$access" --dry-exec \
    --copies "$2" --cpus 128 --gpus 8 --memory 512GiB 2> "$d/workers.stderr" &
  worker_pid=$!
  pids+=("$worker_pid")
  # The bytes the workers' connections carried both ways (the kernel's
  # tcp_info through `ss`), sampled until they leave: the last sample is
  # taken at most 0.1 s before the end.
  port=$(sed -n 's/.*"address": *"[^"]*:\([0-9]*\)".*/\1/p' "$access")
  while kill -0 "$worker_pid" 2> /dev/null; do
    sample=$(ss -tinH state established "( dport = :$port )" 2> /dev/null |
      grep -o 'bytes_\(acked\|received\):[0-9]*' | awk -F: '{ n += $2 } END { print n + 0 }' || true)
    [ "${sample:-0}" -gt 0 ] && io=$sample
    sleep 0.1
  done
  wait "$run_pid" || { cat "$d/run.stderr" >&2; exit 1; }
  wait "$worker_pid" || true
  (cd "$d" && "$flow" log list --format tsv --columns start,end,ready,queue_wait 2> /dev/null) > "$d/trace.tsv"
  # Ready to dispatched, in ms, sorted: from the first dispatch at the earliest.
  awk -F'\t' "$us"'
    NR == 1 { next }
    { s[NR] = us($1); r[NR] = us($3); w[NR] = $4 / 1e6; if (first == "" || s[NR] < first) first = s[NR] }
    END { for (i in w) { late = first - r[i]; if (late < 0) late = 0; x = w[i] - late; print (x < 0 ? 0 : x) * 1000 } }' \
    "$d/trace.tsv" | sort -g > "$d/waits"
  awk -F'\t' -v w="$2" -v name="$1" -v io="${io:-0}" -v run="$(cat "$d/run.time")" \
    -v workers="$(cat "$d/workers.time")" -v p50="$(rank 0.5 "$d/waits")" -v p99="$(rank 0.99 "$d/waits")" "$us"'
    NR == 1 { next }
    { n++; s = us($1); e = us($2); if (first == "" || s < first) first = s; if (e > last) last = e }
    END {
      split(run, r, " "); split(workers, k, " ")
      span = last - first; if (span <= 0) span = 0.001
      printf "| %s | %d | %d | %.0f | %.1f ms | %.1f ms | %.2f s | %.0f MiB | %.2f s | %.0f |\n", name, w, n, n / span, p50, p99, r[1] + r[2], r[3] / 1024, k[1] + k[2], io / n
    }' "$d/trace.tsv"
}

# Seconds since midnight of an RFC 3339 time, for awk (the runs never span midnight).
us='function us(t,   s) { s = substr(t, 12, 12); return ((substr(s, 1, 2) * 60 + substr(s, 4, 2)) * 60 + substr(s, 7)) }'

# rank P FILE: the value at rank P (nearest rank) of FILE's sorted numbers.
rank() {
  awk -v p="$1" -v n="$(wc -l < "$2")" 'BEGIN { k = int(n * p); if (k < n * p) k++; if (k < 1) k = 1 } NR == k { print; exit }' "$2"
}

echo "| workload | workers | tasks | tasks/s | ready→dispatched p50 | p99 | coordinator CPU | coordinator peak RSS | workers' CPU | bytes on the wire per task |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for workload in $workloads; do
  for n in $counts; do one "$workload" "$n"; done
done
