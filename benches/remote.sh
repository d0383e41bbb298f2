#!/usr/bin/env bash
# Remote-worker benchmarks: `flow run --listen --no-local-worker` with
# `flow worker` processes joining over TCP on localhost, against the embedded
# worker or a plain Python baseline on the same work, in the same run of
# this script.
# Usage: benches/remote.sh [REPEATS] [WORKLOAD...]
#   REPEATS   times each command is timed (default 3); the median is reported.
#             The compared commands alternate within each round; flow remote
#             and the baseline of its goal swap places from round to round.
#   WORKLOAD  w1 w3 w6 (default: all), see docs/performance.md.
# A remote timing runs from the start of `flow run` to its exit and includes
# starting the workers, which the script launches as soon as the run's
# access.json appears. Every flow run starts from a fresh run directory.
set -euo pipefail
repeats=${1:-3}
[ $# -gt 0 ] && shift
case $repeats in '' | *[!0-9]* | 0) echo "usage: $0 [REPEATS] [w1|w3|w6]..." >&2; exit 2 ;; esac
workloads=${*:-w1 w3 w6}
# The release build, `$flow`, `$work`, `pids`, `$commit`, `fail` and the clean-up on exit.
source "$(dirname "$0")/release_flow.sh"

# shellcheck source=benches/settle.sh
. "$root/benches/settle.sh"

# measure KEY CMD...: times CMD (in this shell, so that its background
# processes stay known to the trap) and appends the seconds to times[KEY].
# Its stdout is discarded and its stderr kept in $work/cmd.stderr.
declare -A times
measure() {
  local key=$1 t0 t1
  shift
  settle
  t0=$(date +%s.%N)
  "$@" > /dev/null 2> "$work/cmd.stderr" || fail "command failed: $*"
  t1=$(date +%s.%N)
  times[$key]="${times[$key]:-} $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
}
# mid: the median of the numbers on stdin, one a line (the mean of the middle two for an even count).
mid() {
  sort -n | awk '{ v[NR] = $1 }
    END { if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# median KEY: the median of times[KEY].
median() {
  # shellcheck disable=SC2086 # the list of times is split on purpose
  printf '%s\n' ${times[$1]} | mid
}

# embedded DIR ARGS...: `flow run ARGS DIR/workflow.toml` on its embedded worker.
embedded() {
  local dir=$1
  shift
  "$flow" run "$@" "$dir/workflow.toml"
}

# remote DIR WORKERS CPUS: `flow run --listen 127.0.0.1:0 --no-local-worker` on
# DIR/workflow.toml, with WORKERS `flow worker --cpus CPUS` started as soon as
# the run's access.json appears; returns when `flow run` exits. The workers
# are left in $workers for `leave` to wait for, outside the timing.
workers=()
remote() {
  local dir=$1 n=$2 cpus=$3 run access='' f i status=0
  "$flow" run --listen 127.0.0.1:0 --no-local-worker "$dir/workflow.toml" > /dev/null 2> "$work/run.stderr" &
  run=$!
  pids=("$run")
  while [ -z "$access" ]; do
    for f in "$dir"/.flow/runs/*/access.json; do [ -e "$f" ] && access=$f; done
    if [ -z "$access" ]; then
      kill -0 "$run" 2> /dev/null || fail "flow run exited before writing access.json"
      sleep 0.002
    fi
  done
  workers=()
  for i in $(seq "$n"); do
    "$flow" worker --access "$access" --cpus "$cpus" > /dev/null 2> "$work/worker$i.stderr" &
    workers+=("$!")
    pids+=("$!")
  done
  wait "$run" || status=$?
  [ "$status" = 0 ] || fail "flow run --no-local-worker on $dir exited with status $status"
}
# leave: waits (up to 15 s) for the workers of the last remote run to exit.
leave() {
  local pid
  for pid in "${workers[@]}"; do
    for _ in $(seq 150); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2> /dev/null && fail "a worker did not leave after the run ended"
    wait "$pid" || fail "a worker exited with an error"
  done
  workers=()
  pids=()
}

fresh() { rm -rf "$1/.flow"; }
# succeeded DIR N: checks that the flow run in DIR ran all N instances.
succeeded() {
  local n
  n=$(sed -n 's/.*"succeeded": *\([0-9]*\).*/\1/p' "$1"/.flow/runs/*/summary.json)
  [ "$n" = "$2" ] || fail "flow run in $1: $n of $2 instances succeeded"
}
# first ROUND: true when flow remote goes first in this round (odd rounds).
first() { [ $(($1 % 2)) = 1 ]; }

header() {
  echo
  echo "$1"
  printf '  %-34s %-9s %12s %-30s %12s %7s  %s\n' workload goal "flow remote" baseline "" ratio verdict
}
# row NAME GOAL MAX_RATIO FLOW UNIT BASELINE_NAME BASELINE: one line of the table;
# MAX_RATIO empty = no goal on this line.
row() {
  local name=$1 goal=$2 max=$3 f=$4 unit=$5 bname=$6 b=$7 ratio verdict=-
  ratio=$(awk -v f="$f" -v b="$b" 'BEGIN { printf "%.2fx", f / b }')
  if [ -n "$max" ]; then
    verdict=$(awk -v f="$f" -v b="$b" -v m="$max" 'BEGIN { print (f / b <= m ? "met" : "MISSED") }')
  fi
  printf '  %-34s %-9s %8s %-3s %-30s %8s %-3s %7s  %s\n' "$name" "$goal" "$f" "$unit" "$bname" "$b" "$unit" "$ratio" "$verdict"
}
# spread KEY...: the individual timings behind the medians.
spread() {
  local key line="  (seconds per round:"
  for key in "$@"; do line="$line $key${times[$key]};"; done
  echo "${line%;})"
}
# paired KEY BASE: KEY's time over BASE's in each round, and their median.
# Both ran in the same round, a few seconds apart, so a busy spell that
# slows one round moves both; this ratio is less noisy than that of the medians.
paired() {
  local ratios
  # shellcheck disable=SC2086 # the lists of times are split on purpose
  ratios=$(paste <(printf '%s\n' ${times[$1]}) <(printf '%s\n' ${times[$2]}) | awk '{ printf "%.2f ", $1 / $2 }')
  # shellcheck disable=SC2086
  echo "  ($1 / $2 per round: ${ratios% }; median $(printf '%s\n' $ratios | mid)x)"
}

echo "flow remote-worker benchmarks at $commit, median of $repeats rounds; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# W1: 10,000 x true through one remote worker with 2 slots, against the
# embedded worker with 2 slots: the cost of a task's round trip over TCP.
w1() {
  local d="$work/w1" r
  mkdir -p "$d"
  printf '[[tasks]]\nname = "t"\nrange = "1-10000"\ncommand = "true"\n' > "$d/workflow.toml"
  for r in $(seq "$repeats"); do
    if first "$r"; then
      fresh "$d"; measure w1.remote remote "$d" 1 2; leave; succeeded "$d" 10000
      fresh "$d"; measure w1.embedded embedded "$d" --cpus 2; succeeded "$d" 10000
    else
      fresh "$d"; measure w1.embedded embedded "$d" --cpus 2; succeeded "$d" 10000
      fresh "$d"; measure w1.remote remote "$d" 1 2; leave; succeeded "$d" 10000
    fi
  done
  header "W1: 10,000 x command = \"true\", 2 slots (wall-clock seconds, median)"
  row "1 remote worker, --cpus 2" "<= 1.10x" 1.10 "$(median w1.remote)" s "embedded worker, --cpus 2" "$(median w1.embedded)"
  spread w1.remote w1.embedded
  paired w1.remote w1.embedded
}

# pool DIR PY: DIR/zlib6.py with a multiprocessing.Pool(4), into DIR/out/pool.
pool() { (cd "$1" && "$2" -I -S zlib6.py pool out/pool); }
# xargs_py DIR PY: DIR/zlib6.py once per file, 4 at a time, into DIR/out/xargs.
xargs_py() { (cd "$1" && seq 24 | xargs -P4 -I{} "$2" -I -S zlib6.py {} out/xargs); }
# out DIR NAME: an empty DIR/out/NAME.
out() { rm -rf "$1/out/$2"; mkdir -p "$1/out/$2"; }

# W3: 24 files of 2 MiB compressed with zlib level 6 by 4 remote workers of
# 1 slot — one file per task, or chunks of 3 or 6 files per task — against
# multiprocessing.Pool(4) in one Python.
w3() {
  local d="$work/w3" r py i
  mkdir -p "$d/in"
  # The interpreter itself, not a version manager's shim in front of it, and
  # started with -I -S (no site packages) by every command, flow's and the
  # baselines' alike.
  py=$(python3 -c 'import sys; print(sys.executable)')
  # 24 files of 2,097,152 bytes from a fixed seed: blocks of 48 KiB of words
  # (5,000 random lowercase words of 2-10 letters, space-separated) followed
  # by 16 KiB of random bytes; zlib level 6 makes them about 66 % of their size.
  "$py" -I -S - "$d/in" << 'EOF'
import random, sys
rng = random.Random(20240611)
letters = "abcdefghijklmnopqrstuvwxyz"
vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(5000)]
size = 2 * 1024 * 1024
for i in range(1, 25):
    data = bytearray()
    while len(data) < size:
        data += " ".join(rng.choices(vocab, k=9000)).encode()[: 48 * 1024]
        data += rng.randbytes(16 * 1024)
    with open(f"{sys.argv[1]}/{i}.bin", "wb") as f:
        f.write(data[:size])
EOF
  cat > "$d/zlib6.py" << 'EOF'
"""Compresses in/I.bin into OUT/I.z with zlib level 6.

python zlib6.py I OUT: one file; python zlib6.py pool OUT: all 24 with a
multiprocessing.Pool of 4 processes, one file per call; python zlib6.py
list FILE OUT: each I listed in FILE, one a line."""
import sys
import zlib

def compress(i, out):
    with open(f"in/{i}.bin", "rb") as f:
        data = f.read()
    with open(f"{out}/{i}.z", "wb") as f:
        f.write(zlib.compress(data, 6))

if __name__ == "__main__":
    if sys.argv[1] == "pool":
        from multiprocessing import Pool

        with Pool(4) as pool:
            pool.starmap(compress, [(i, sys.argv[2]) for i in range(1, 25)], chunksize=1)
    elif sys.argv[1] == "list":
        with open(sys.argv[2]) as f:
            for line in f:
                compress(line.strip(), sys.argv[3])
    else:
        compress(sys.argv[1], sys.argv[2])
EOF
  printf '[[tasks]]\nname = "z"\nrange = "1-24"\nargv = ["%s", "-I", "-S", "zlib6.py", "{{ index }}", "out/flow"]\n' "$py" > "$d/workflow.toml"
  # The same work in chunks of N files per task (`each_chunk` over a list
  # of the 24 numbers), in $d/chunkN: 24 / N interpreter starts, not 24.
  for n in 3 6; do
    mkdir -p "$d/chunk$n"
    ln -sfn ../in "$d/chunk$n/in"
    cp "$d/zlib6.py" "$d/chunk$n/"
    seq 24 > "$d/chunk$n/files.txt"
    printf '[[tasks]]\nname = "z"\neach_chunk = { file = "files.txt", lines = %s }\nargv = ["%s", "-I", "-S", "zlib6.py", "list", "{{ chunk.path }}", "out/flow"]\n' \
      "$n" "$py" > "$d/chunk$n/workflow.toml"
  done
  for r in $(seq "$repeats"); do
    if first "$r"; then
      fresh "$d"; out "$d" flow; measure w3.remote remote "$d" 4 1; leave; succeeded "$d" 24
      out "$d" pool; measure w3.pool pool "$d" "$py"
    else
      out "$d" pool; measure w3.pool pool "$d" "$py"
      fresh "$d"; out "$d" flow; measure w3.remote remote "$d" 4 1; leave; succeeded "$d" 24
    fi
    out "$d" xargs; measure w3.xargs xargs_py "$d" "$py"
    for n in 3 6; do
      fresh "$d/chunk$n"; out "$d/chunk$n" flow; measure "w3.chunk$n" remote "$d/chunk$n" 4 1; leave; succeeded "$d/chunk$n" $((24 / n))
    done
    fresh "$d"; out "$d" flow; measure w3.embedded embedded "$d" --cpus 4; succeeded "$d" 24
  done
  for i in $(seq 24); do
    cmp -s "$d/out/flow/$i.z" "$d/out/pool/$i.z" || fail "out/flow/$i.z differs from out/pool/$i.z"
    for n in 3 6; do
      cmp -s "$d/chunk$n/out/flow/$i.z" "$d/out/pool/$i.z" || fail "chunk$n/out/flow/$i.z differs from out/pool/$i.z"
    done
  done
  header "W3: 24 x 2 MiB, zlib level 6, 4 slots on $(nproc) CPUs (wall-clock seconds, median)"
  row "4 remote workers, --cpus 1 each" "<= 1.10x" 1.10 "$(median w3.remote)" s "multiprocessing.Pool(4)" "$(median w3.pool)"
  row "4 remote workers, --cpus 1 each" "" "" "$(median w3.remote)" s "xargs -P4 (same command)" "$(median w3.xargs)"
  row "the same, 3 files per task (chunks)" "" "" "$(median w3.chunk3)" s "multiprocessing.Pool(4)" "$(median w3.pool)"
  row "the same, 6 files per task (chunks)" "<= 1.10x" 1.10 "$(median w3.chunk6)" s "multiprocessing.Pool(4)" "$(median w3.pool)"
  row "embedded worker, --cpus 4" "" "" "$(median w3.embedded)" s "multiprocessing.Pool(4)" "$(median w3.pool)"
  spread w3.remote w3.pool w3.xargs w3.embedded w3.chunk3 w3.chunk6
  paired w3.remote w3.pool
  paired w3.chunk6 w3.pool
  paired w3.remote w3.xargs
  echo "  (each flow and xargs task runs: $(basename "$py") -I -S zlib6.py I OUT, or with chunks zlib6.py list CHUNK OUT; outputs identical to the Pool's)"
}

# W6: 10,000 tasks printing 10 KiB each, streamed from one remote worker
# with 2 slots into the run log, against the embedded worker with 2 slots.
w6() {
  local d="$work/w6" payload=$((10000 * 10240)) r size
  mkdir -p "$d"
  # 160 lines of 63 characters and a newline: 10,240 bytes.
  awk 'BEGIN { s = sprintf("%63s", ""); gsub(/ /, "x", s); for (i = 0; i < 160; i++) print s }' > "$d/payload.txt"
  printf '[[tasks]]\nname = "t"\nrange = "1-10000"\ncommand = "cat payload.txt"\n' > "$d/workflow.toml"
  for r in $(seq "$repeats"); do
    if first "$r"; then
      fresh "$d"; measure w6.remote remote "$d" 1 2; leave; succeeded "$d" 10000
      size=$(stat -c %s "$d"/.flow/runs/*/output.log)
      fresh "$d"; measure w6.embedded embedded "$d" --cpus 2; succeeded "$d" 10000
    else
      fresh "$d"; measure w6.embedded embedded "$d" --cpus 2; succeeded "$d" 10000
      fresh "$d"; measure w6.remote remote "$d" 1 2; leave; succeeded "$d" 10000
      size=$(stat -c %s "$d"/.flow/runs/*/output.log)
    fi
  done
  header "W6: 10,000 x 10 KiB of stdout, 2 slots (wall-clock seconds, median; log size in MB)"
  row "1 remote worker, --cpus 2" "<= 1.20x" 1.20 "$(median w6.remote)" s "embedded worker, --cpus 2" "$(median w6.embedded)"
  row "output.log size (remote run)" "<= 1.05x" 1.05 "$(awk -v s="$size" 'BEGIN { printf "%.2f", s / 1e6 }')" MB \
    "payload (10,000 x 10,240 B)" "$(awk -v s="$payload" 'BEGIN { printf "%.2f", s / 1e6 }')"
  spread w6.remote w6.embedded
  paired w6.remote w6.embedded
  echo "  (output.log of the remote run: $size bytes for $payload bytes of output)"
}

for w in $workloads; do
  case $w in
    w1 | w3 | w6) $w ;;
    *) echo "unknown workload: $w (w1 w3 w6)" >&2; exit 2 ;;
  esac
done
warn_if_noisy
