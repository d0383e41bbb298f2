#!/usr/bin/env bash
# Rejoining after big output, end to end: `flow run --listen 127.0.0.1:0
# --no-local-worker` on one task that writes SIZE MiB to stdout and then
# sleeps 2 s, run by one `flow worker`; the coordinator is killed with
# `kill -9` and the same `flow run` started again, which resumes the run;
# the worker rejoins it with the task. Two cases, each round:
#   copy      killed once its log holds the SIZE MiB: the new run copies
#             them from the killed run's log into its own;
#   buffered  killed once its log holds an eighth of them, the task still
#             writing: the worker holds the rest while no coordinator
#             listens, and the new run is started once the task has written
#             all (or, its buffer full, after 5 s: the task waits in its
#             write) and it sends them after the copy.
# Prints a markdown table row per case and round: seconds from the restart
# to the new run listening, to the worker rejoined (its `joined` event),
# to the killed run's part in the new log, to the whole output in it, and
# to the run's end, with the load average. Checks that `flow log cat` of
# the new run has exactly the task's SIZE MiB of stdout, each byte once
# and in order (SHA-256 of the same stream), and that the worker joined
# the new run once (no second try) and left when the run ended.
# Usage: benches/rejoin.sh [ROUNDS] [SIZE] [BUFFER]
#   ROUNDS  rounds of both cases (default 2), the order swapped every other round
#   SIZE    MiB of stdout the task writes (default 500)
#   BUFFER  the worker's --output-buffer (default SIZE + 64 MiB, so that the
#           worker holds all of it; `default` leaves the worker's own, 256MiB)
set -euo pipefail
rounds=${1:-2}
size_mib=${2:-500}
buffer=${3:-$((size_mib + 64))MiB}
case $rounds$size_mib in *[!0-9]* | '') echo "usage: $0 [ROUNDS] [SIZE] [BUFFER]" >&2; exit 2 ;; esac
# The release build, `$flow`, `$work`, `pids`, `$commit`, `fail` and the clean-up on exit.
source "$(dirname "$0")/release_flow.sh"

size=$((size_mib * 1048576))
d="$work/rejoin"
mkdir -p "$d"
# The task's output: numbers, one a line, so that a byte copied twice, lost
# or out of order changes the checksum.
output="seq 1 1000000000 | head -c $size"
expected=$(bash -c "$output" | sha256sum | cut -d' ' -f1)
printf '[[tasks]]\nname = "big"\ncommand = "%s; touch %s/wrote; sleep 2"\n' "$output" "$d" > "$d/workflow.toml"

# Bytes of stdout in output logs, read frame by frame (docs/reference/log.md):
#   logs.py count LOG             prints them
#   logs.py wait LOG BYTES        returns once LOG holds BYTES
#   logs.py trace RUNS OLD PID BYTES...
#                                 waits for the run directory under RUNS that
#                                 is not OLD, prints "listening TIME" once its
#                                 access.json is there and "BYTES TIME" once
#                                 its output.log holds each BYTES; ends when
#                                 all are reached or process PID has exited.
cat > "$work/logs.py" << 'EOF'
import os, struct, sys, time

class Log:
    def __init__(self, path):
        self.path, self.fd, self.at, self.stdout = path, None, 8, 0

    def read(self):
        if self.fd is None:
            try:
                self.fd = os.open(self.path, os.O_RDONLY)
            except FileNotFoundError:
                return self.stdout
        end = os.fstat(self.fd).st_size
        while self.at + 33 <= end:
            head = os.pread(self.fd, 33, self.at)
            length = struct.unpack_from("<I", head)[0]
            if length < 25 or self.at + 8 + length > end:
                break
            if head[8 + 16] == 1:
                self.stdout += length - 25
            self.at += 8 + length
        return self.stdout

def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False

mode = sys.argv[1]
if mode == "count":
    print(Log(sys.argv[2]).read())
elif mode == "wait":
    log, want = Log(sys.argv[2]), int(sys.argv[3])
    while log.read() < want:
        time.sleep(0.005)
else:
    runs, old, pid = sys.argv[2], sys.argv[3], int(sys.argv[4])
    wanted = sorted(int(b) for b in sys.argv[5:])
    run = log = None
    listening = False
    while wanted:
        last = not alive(pid)
        if run is None:
            new = [r for r in os.listdir(runs) if r != old and not r.startswith(".")]
            if new:
                run = os.path.join(runs, new[0])
                log = Log(os.path.join(run, "output.log"))
        if run is not None:
            if not listening and os.path.exists(os.path.join(run, "access.json")):
                listening = True
                print("listening", time.time(), flush=True)
            held = log.read()
            while wanted and held >= wanted[0]:
                print(wanted.pop(0), time.time(), flush=True)
        if last:
            break
        time.sleep(0.005)
EOF
logs() { python3 -I -S "$work/logs.py" "$@"; }

# stamp: each line of stdin with the time it arrived in front.
stamp() {
  local line
  while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done
}
# since T0 T: seconds from T0 to T, or "-" without T.
since() { if [ -n "$2" ]; then awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; else echo -; fi; }
# at FILE PATTERN: the time in front of the first line of FILE matching PATTERN.
at() { grep -m1 -- "$2" "$1" | cut -d' ' -f1 || true; }
# count FILE PATTERN: lines of FILE matching PATTERN.
count() { grep -c -- "$2" "$1" || true; }

# start_run NAME: `flow run` in $d in the background, its events stamped into $d/NAME.events.
start_run() {
  (cd "$d" && exec "$flow" run --listen 127.0.0.1:0 --no-local-worker --json > >(stamp > "$d/$1.events") 2> "$d/$1.stderr") &
  run_pid=$!
  pids+=("$run_pid")
}

# round CASE: one kill and resume; prints its row.
round() {
  local case=$1 killed_run killed_log held listening joined copied whole ended t0 trace status note=''
  local options=(--access '' --reconnect-for 2m --json)
  rm -rf "$d/.flow" "$d/wrote" "$d"/*.events "$d"/*.stderr
  start_run first
  options[1]=$(access_file "$d") || fail "the first run wrote no access.json"
  [ "$buffer" = default ] || options+=(--output-buffer "$buffer")
  "$flow" worker "${options[@]}" > >(stamp > "$d/worker.events") 2> "$d/worker.stderr" &
  worker_pid=$!
  pids+=("$worker_pid")
  killed_run=$(basename "$(dirname "${options[1]}")")
  killed_log="$d/.flow/runs/$killed_run/output.log"
  case $case in
    copy) logs wait "$killed_log" "$size" ;;
    buffered) logs wait "$killed_log" $((size / 8)) ;;
  esac
  kill -9 "$run_pid"
  wait "$run_pid" 2> /dev/null || true
  [ -e "$d/wrote" ] && [ "$case" = buffered ] && note=' (the task had written all at the kill)'
  if [ "$case" = buffered ]; then
    for _ in $(seq 500); do [ -e "$d/wrote" ] && break; sleep 0.01; done
    [ -e "$d/wrote" ] || note=' (buffer full: the task waited in its write)'
  fi
  held=$(logs count "$killed_log")
  # The resume.
  t0=$EPOCHREALTIME
  start_run resumed
  trace=$(logs trace "$d/.flow/runs" "$killed_run" "$run_pid" "$held" "$size")
  status=0
  wait "$run_pid" || status=$?
  ended=$EPOCHREALTIME
  [ "$status" = 0 ] || fail "the resumed run exited with status $status"
  wait "$worker_pid" || fail "the worker exited with an error"
  pids=()
  listening=$(awk '$1 == "listening" { print $2 }' <<< "$trace")
  copied=$(awk -v b="$held" '$1 == b { print $2; exit }' <<< "$trace")
  whole=$(awk -v b="$size" '$1 == b { print $2 }' <<< "$trace")
  joined=$(at "$d/worker.events" '"rejoined":true')
  # Checks: the output whole and once, one rejoin, no second try.
  local new
  new=$(cd "$d/.flow/runs" && ls | grep -vx "$killed_run")
  [ "$(cd "$d" && "$flow" log --run "$new" cat --stream stdout | sha256sum | cut -d' ' -f1)" = "$expected" ] ||
    fail "flow log cat of the resumed run is not the task's $size bytes"
  [ -z "$(cd "$d" && "$flow" log --run "$new" cat --stream system)" ] ||
    fail "the resumed run recorded messages about the task: $(cd "$d" && "$flow" log --run "$new" cat --stream system)"
  [ "$(count "$d/resumed.events" '"event":"worker_joined"')" = 1 ] || fail "the worker joined the resumed run more than once"
  [ "$(count "$d/worker.events" '"event":"joined"')" = 2 ] || fail "the worker did not join exactly twice"
  [ "$(count "$d/worker.events" '"event":"retrying"')" = 1 ] || fail "the worker did not say exactly once that it retries"
  grep -q '"event":"left".*"reason":"run_ended"' "$d/worker.events" || fail "the worker did not leave with the run's end"
  printf '| %s MiB | %s%s | %s | %.0f | %s | %s | %s | %s | %s | %s |\n' "$size_mib" "$case" "$note" "$buffer" \
    "$(awk -v h="$held" 'BEGIN { print h / 1048576 }')" "$(since "$t0" "$listening")" "$(since "$t0" "$joined")" \
    "$(since "$t0" "$copied")" "$(since "$t0" "$whole")" "$(since "$t0" "$ended")" "$(cut -d' ' -f1-3 /proc/loadavg)"
  rm -rf "$d/.flow"
}

echo "flow rejoin after big output at $commit, $rounds round(s); $(nproc) CPUs; seconds from the restart"
echo
echo "| output | case | --output-buffer | killed log held (MiB) | listening | rejoined | killed run's part in new log | whole output in new log | run ended | load average |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then round copy; round buffered; else round buffered; round copy; fi
done
