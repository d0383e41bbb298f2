#!/usr/bin/env bash
# Runtime benchmarks: `flow run` against xargs, GNU parallel, make and the
# ideal schedule on the same work, measured in the same run of this script.
# Usage: benches/runtime.sh [RUNS] [WORKLOAD...]
#   RUNS      best of RUNS wall-clock times for each command (default 3); flow
#             and its baselines alternate within each round.
#   WORKLOAD  w1 w2 w6 make mem dry (default: all), see docs/performance.md.
# Every flow run starts from a fresh run directory, so nothing is skipped.
set -euo pipefail
runs=${1:-3}
[ $# -gt 0 ] && shift
case $runs in '' | *[!0-9]* | 0) echo "usage: $0 [RUNS] [w1|w2|w6|make|mem|dry]..." >&2; exit 2 ;; esac
workloads=${*:-w1 w2 w6 make mem dry}
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
flow="$root/target/release/flow"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

have() { command -v "$1" > /dev/null 2>&1; }
has_xargs=0 has_parallel=0 has_make=0
have xargs && has_xargs=1
case $(parallel --version 2> /dev/null || true) in 'GNU parallel'*) has_parallel=1 ;; esac
have make && has_make=1
has_cc=0
have cc && has_cc=1
missing() { echo "  ($1 not installed: its baseline is skipped; $2)"; }

# seconds CMD...: the wall-clock time of CMD in seconds; its stdout is
# discarded, its stderr kept in $work/stderr; a failure stops the script.
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  if ! "$@" > /dev/null 2> "$work/stderr"; then
    echo "command failed: $*" >&2
    cat "$work/stderr" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

# shellcheck source=benches/settle.sh
. "$root/benches/settle.sh"

# try KEY CMD...: times CMD and keeps the best time in best[KEY].
declare -A best
try() {
  local key=$1 t
  shift
  settle
  t=$(seconds "$@")
  if [ -z "${best[$key]:-}" ] || awk -v a="$t" -v b="${best[$key]}" 'BEGIN { exit !(a < b) }'; then
    best[$key]=$t
  fi
}

# flow_run DIR ARGS...: `flow run ARGS DIR/workflow.toml` from a fresh run directory.
flow_run() {
  local dir=$1
  shift
  "$flow" run "$@" "$dir/workflow.toml"
}
fresh() { rm -rf "$1/.flow"; }

# succeeded DIR N: checks that the last flow run in DIR ran all N instances.
succeeded() {
  local n
  n=$(sed -n 's/.*"succeeded": *\([0-9]*\).*/\1/p' "$1"/.flow/runs/*/summary.json)
  [ "$n" = "$2" ] || { echo "flow run in $1: $n of $2 instances succeeded" >&2; exit 1; }
}

header() {
  echo
  echo "$1"
  printf '  %-34s %-9s %12s %-26s %12s %7s  %s\n' workload goal flow baseline "" ratio verdict
}
# row NAME GOAL MAX_RATIO FLOW UNIT BASELINE_NAME BASELINE: one line of the table;
# MAX_RATIO empty = no goal on this line, BASELINE empty = no baseline.
row() {
  local name=$1 goal=$2 max=$3 f=$4 unit=$5 bname=$6 b=$7 ratio=- verdict=-
  if [ -n "$b" ]; then
    ratio=$(awk -v f="$f" -v b="$b" 'BEGIN { printf "%.2fx", f / b }')
    if [ -n "$max" ]; then
      verdict=$(awk -v f="$f" -v b="$b" -v m="$max" 'BEGIN { print (f / b <= m ? "met" : "MISSED") }')
    fi
    printf '  %-34s %-9s %8s %-3s %-26s %8s %-3s %7s  %s\n' "$name" "$goal" "$f" "$unit" "$bname" "$b" "$unit" "$ratio" "$verdict"
  else
    printf '  %-34s %-9s %8s %-3s %-26s %8s %-3s %7s  %s\n' "$name" "$goal" "$f" "$unit" "${bname:--}" "${bname:+n/a}" "" "" ""
  fi
}

commit=$(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo unknown)
git -C "$root" diff --quiet HEAD -- engine src 2> /dev/null || commit="$commit + uncommitted changes"
echo "flow runtime benchmarks at $commit, best of $runs runs; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# W1: 10,000 trivial processes on 2 slots: the cost of starting a task. The
# floor is benches/spawn_floor.c, which only posix_spawns `true` and waits,
# two at a time: no pipes, no process group, no bookkeeping.
w1() {
  local d="$work/w1" a="$work/w1argv" floor="$root/target/spawn_floor"
  mkdir -p "$d" "$a"
  printf '[[tasks]]\nname = "t"\nrange = "1-10000"\ncommand = "true"\n' > "$d/workflow.toml"
  printf '[[tasks]]\nname = "t"\nrange = "1-10000"\nargv = ["true"]\n' > "$a/workflow.toml"
  [ $has_cc = 1 ] && cc -O2 -o "$floor" "$root/benches/spawn_floor.c"
  xargs_sh() { seq 10000 | xargs -P2 -I{} sh -c true; }
  xargs_true() { seq 10000 | xargs -P2 -n1 true; }
  parallel_true() { seq 10000 | parallel --will-cite -j2 true; }
  for _ in $(seq "$runs"); do
    fresh "$d"; try w1.flow flow_run "$d" --cpus 2; succeeded "$d" 10000
    [ $has_xargs = 1 ] && try w1.xargs xargs_sh
    fresh "$a"; try w1.flow_argv flow_run "$a" --cpus 2; succeeded "$a" 10000
    [ $has_cc = 1 ] && try w1.floor "$floor" 10000 2 true
    [ $has_xargs = 1 ] && try w1.xargs_true xargs_true
    [ $has_parallel = 1 ] && try w1.parallel parallel_true
  done
  header "W1: 10,000 x true, 2 slots (wall-clock seconds)"
  row "command = \"true\" (sh -c true)" "<= 1.10x" 1.10 "${best[w1.flow]}" s "xargs -P2 -I{} sh -c true" "${best[w1.xargs]:-}"
  row "argv = [\"true\"] (no shell)" "<= 1.15x" 1.15 "${best[w1.flow_argv]}" s "spawn floor (posix_spawn, 2)" "${best[w1.floor]:-}"
  row "argv = [\"true\"] (no shell)" "" "" "${best[w1.flow_argv]}" s "xargs -P2 -n1 true" "${best[w1.xargs_true]:-}"
  row "command = \"true\" (sh -c true)" "" "" "${best[w1.flow]}" s "parallel -j2 true" "${best[w1.parallel]:-}"
  [ $has_cc = 1 ] || missing "a C compiler (cc)" "apt-get install -y gcc"
  [ $has_xargs = 1 ] || missing xargs "apt-get install -y findutils"
  [ $has_parallel = 1 ] || missing "GNU parallel" "apt-get install -y parallel"
}

# W2: 2,000 x sleep 0.01 on 2 slots: 10.0 s if slots never wait.
w2() {
  local d="$work/w2" a="$work/w2argv"
  mkdir -p "$d" "$a"
  printf '[[tasks]]\nname = "t"\nrange = "1-2000"\ncommand = "sleep 0.01"\n' > "$d/workflow.toml"
  printf '[[tasks]]\nname = "t"\nrange = "1-2000"\nargv = ["sleep", "0.01"]\n' > "$a/workflow.toml"
  xargs_sleep() { seq 2000 | xargs -P2 -I{} sh -c 'sleep 0.01'; }
  xargs_sleep_argv() { seq 2000 | xargs -P2 -I{} sleep 0.01; }
  for _ in $(seq "$runs"); do
    fresh "$d"; try w2.flow flow_run "$d" --cpus 2; succeeded "$d" 2000
    [ $has_xargs = 1 ] && try w2.xargs xargs_sleep
    fresh "$a"; try w2.flow_argv flow_run "$a" --cpus 2; succeeded "$a" 2000
    [ $has_xargs = 1 ] && try w2.xargs_argv xargs_sleep_argv
  done
  header "W2: 2,000 x sleep 0.01, 2 slots (wall-clock seconds)"
  row "command = \"sleep 0.01\"" "<= 1.05x" 1.05 "${best[w2.flow]}" s "ideal (2,000 x 0.01 s / 2)" 10.00
  row "command = \"sleep 0.01\"" "" "" "${best[w2.flow]}" s "xargs -P2 -I{} sh -c ..." "${best[w2.xargs]:-}"
  row "argv = [\"sleep\", \"0.01\"]" "" "" "${best[w2.flow_argv]}" s "ideal (2,000 x 0.01 s / 2)" 10.00
  row "argv = [\"sleep\", \"0.01\"]" "" "" "${best[w2.flow_argv]}" s "xargs -P2 -I{} sleep 0.01" "${best[w2.xargs_argv]:-}"
  [ $has_xargs = 1 ] || missing xargs "apt-get install -y findutils"
}

# W6: 10,000 tasks printing 10 KiB each: streaming output into the run log.
w6() {
  local d="$work/w6" payload=$((10000 * 10240)) size files got
  mkdir -p "$d"
  # 160 lines of 63 characters and a newline: 10,240 bytes.
  awk 'BEGIN { s = sprintf("%63s", ""); gsub(/ /, "x", s); for (i = 0; i < 160; i++) print s }' > "$d/payload.txt"
  printf '[[tasks]]\nname = "t"\nrange = "1-10000"\ncommand = "cat payload.txt"\n' > "$d/workflow.toml"
  parallel_results() { (cd "$d" && seq 10000 | parallel --will-cite -j2 --results "$work/w6results" cat payload.txt '#'); }
  # `head -c`, not `cat`: GNU cat copies with copy_file_range, and two cats
  # writing one file at once lose bytes (102,184,960 of 102,400,000 seen).
  xargs_file() { (cd "$d" && seq 10000 | xargs -P2 -I{} sh -c 'head -c 10240 payload.txt' > "$work/w6xargs.txt"); }
  for _ in $(seq "$runs"); do
    fresh "$d"; try w6.flow flow_run "$d" --cpus 2; succeeded "$d" 10000
    size=$(stat -c %s "$d"/.flow/runs/*/output.log)
    if [ $has_parallel = 1 ]; then
      rm -rf "$work/w6results"; try w6.parallel parallel_results
      files=$(find "$work/w6results" -type f | wc -l)
    fi
    if [ $has_xargs = 1 ]; then
      try w6.xargs xargs_file
      got=$(stat -c %s "$work/w6xargs.txt")
      [ "$got" = "$payload" ] || { echo "the xargs baseline lost data: $got of $payload bytes" >&2; exit 1; }
    fi
  done
  header "W6: 10,000 x 10 KiB of stdout, 2 slots (wall-clock seconds; log size in MB)"
  row "command = \"cat payload.txt\"" "<= 0.50x" 0.50 "${best[w6.flow]}" s "parallel -j2 --results DIR" "${best[w6.parallel]:-}"
  row "command = \"cat payload.txt\"" "" "" "${best[w6.flow]}" s "xargs -P2 head -c ... > one file" "${best[w6.xargs]:-}"
  row "output.log size" "<= 1.05x" 1.05 "$(awk -v s="$size" 'BEGIN { printf "%.2f", s / 1e6 }')" MB \
    "payload (10,000 x 10,240 B)" "$(awk -v s="$payload" 'BEGIN { printf "%.2f", s / 1e6 }')"
  [ $has_parallel = 1 ] && echo "  (parallel --results wrote ${files} files; flow wrote one output.log of $size bytes)"
  [ $has_xargs = 1 ] || missing xargs "apt-get install -y findutils"
  [ $has_parallel = 1 ] || missing "GNU parallel" "apt-get install -y parallel"
}

# make: a 15-node binary tree of sleep 0.1 on 4 slots; 33 independent sleep 0.1 on 16.
make_cmp() {
  local t="$work/tree" i="$work/indep" n
  mkdir -p "$t" "$i"
  {
    for n in $(seq 15); do
      printf '[[tasks]]\nname = "n%d"\ncommand = "sleep 0.1"\n' "$n"
      [ "$n" -le 7 ] && printf 'after = ["n%d", "n%d"]\n' $((2 * n)) $((2 * n + 1))
      echo
    done
  } > "$t/workflow.toml"
  {
    echo ".PHONY: $(seq -f 'n%g' -s ' ' 15)"
    for n in $(seq 15); do
      if [ "$n" -le 7 ]; then printf 'n%d: n%d n%d\n' "$n" $((2 * n)) $((2 * n + 1)); else printf 'n%d:\n' "$n"; fi
      printf '\tsleep 0.1\n'
    done
  } > "$t/Makefile"
  printf '[[tasks]]\nname = "t"\nrange = "1-33"\ncommand = "sleep 0.1"\n' > "$i/workflow.toml"
  {
    echo ".PHONY: all $(seq -f 't%g' -s ' ' 33)"
    echo "all: $(seq -f 't%g' -s ' ' 33)"
    for n in $(seq 33); do printf 't%d:\n\tsleep 0.1\n' "$n"; done
  } > "$i/Makefile"
  for _ in $(seq "$runs"); do
    fresh "$t"; try tree.flow flow_run "$t" --cpus 4; succeeded "$t" 15
    [ $has_make = 1 ] && try tree.make make -s -j4 -C "$t" n1
    fresh "$i"; try indep.flow flow_run "$i" --cpus 16; succeeded "$i" 33
    [ $has_make = 1 ] && try indep.make make -s -j16 -C "$i" all
  done
  header "make: sleep 0.1 graphs (wall-clock seconds)"
  row "15-node binary tree, 4 slots" "<= 1.05x" 1.05 "${best[tree.flow]}" s "make -j4" "${best[tree.make]:-}"
  row "15-node binary tree, 4 slots" "" "" "${best[tree.flow]}" s "ideal (5 waves x 0.1 s)" 0.50
  row "33 independent, 16 slots" "<= 1.05x" 1.05 "${best[indep.flow]}" s "make -j16" "${best[indep.make]:-}"
  row "33 independent, 16 slots" "" "" "${best[indep.flow]}" s "ideal (3 waves x 0.1 s)" 0.30
  [ $has_make = 1 ] || missing make "apt-get install -y make"
}

# kib PID FIELD: a field of /proc/PID/status, in KiB.
kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

# queued N: VmRSS and VmHWM (KiB) of `flow run --cpus 1` on N x sleep 5, two
# seconds in (one running, N - 1 queued); then SIGINT and the time to exit.
queued() {
  local d="$work/mem$1" pid t0 t1 rss hwm
  mkdir -p "$d"
  printf '[[tasks]]\nname = "t"\nrange = "1-%d"\ncommand = "sleep 5"\n' "$1" > "$d/workflow.toml"
  fresh "$d"
  settle
  "$flow" run --cpus 1 "$d/workflow.toml" > /dev/null 2> "$work/stderr" &
  pid=$!
  sleep 2
  if ! pgrep -P "$pid" > /dev/null; then
    echo "flow run on $1 instances: no task running after 2 s" >&2
    cat "$work/stderr" >&2
    kill "$pid" 2> /dev/null || true
    exit 1
  fi
  rss=$(kib "$pid" VmRSS)
  hwm=$(kib "$pid" VmHWM)
  t0=$(date +%s.%N)
  kill -INT "$pid"
  wait "$pid" || true
  t1=$(date +%s.%N)
  echo "$rss $hwm $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
}

# mem: coordinator memory with 200,000 instances queued.
mem() {
  local big hwm small stop max=0 maxhwm=0 base=0 r
  for _ in $(seq "$runs"); do
    read -r big hwm stop < <(queued 200000)
    [ "$big" -gt "$max" ] && max=$big
    [ "$hwm" -gt "$maxhwm" ] && maxhwm=$hwm
    read -r small _ _ < <(queued 1)
    [ "$small" -gt "$base" ] && base=$small
  done
  header "mem: flow run --cpus 1, 200,000 x sleep 5, sampled 2 s in (largest of $runs runs)"
  r=$(awk -v k="$max" 'BEGIN { printf "%.1f", k / 1024 }')
  row "VmRSS, 1 running + 199,999 queued" "< 60 MiB" 1 "$r" MiB "the goal" 60.0
  row "VmRSS, 1 running + 0 queued" "" "" "$(awk -v k="$base" 'BEGIN { printf "%.1f", k / 1024 }')" MiB "" ""
  echo "  (VmHWM $(awk -v k="$maxhwm" 'BEGIN { printf "%.1f", k / 1024 }') MiB;" \
    "the 199,999 queued instances add $((max - base)) KiB;" \
    "SIGINT to exit with 199,999 to cancel: $stop s)"
}

# dry: the engine alone, --dry-exec on 1,000,000 instances.
dry() {
  local d="$work/dry" t secs loop=
  mkdir -p "$d"
  printf '[[tasks]]\nname = "t"\nrange = "1-1000000"\ncommand = "true"\n' > "$d/workflow.toml"
  for _ in $(seq "$runs"); do
    fresh "$d"
    settle
    t=$(seconds flow_run "$d" --cpus 2 --dry-exec)
    succeeded "$d" 1000000
    secs=$(sed -n 's/.*"seconds": *\([0-9.e+-]*\).*/\1/p' "$d"/.flow/runs/*/summary.json)
    if [ -z "${best[dry]:-}" ] || awk -v a="$t" -v b="${best[dry]}" 'BEGIN { exit !(a < b) }'; then
      best[dry]=$t
    fi
    if [ -z "$loop" ] || awk -v a="$secs" -v b="$loop" 'BEGIN { exit !(a < b) }'; then loop=$secs; fi
  done
  header "dry: flow run --dry-exec --cpus 2, 1,000,000 instances"
  row "wall clock (whole command)" "" "" "${best[dry]}" s "" ""
  echo "  $(awk -v t="${best[dry]}" 'BEGIN { printf "%.0f", 1e6 / t }') tasks/s over the whole command;" \
    "$(awk -v t="$loop" 'BEGIN { printf "%.0f", 1e6 / t }') tasks/s in the run loop ($(printf '%.2f' "$loop") s, summary.json)"
}

for w in $workloads; do
  case $w in
    w1 | w2 | w6 | mem | dry) $w ;;
    make) make_cmp ;;
    *) echo "unknown workload: $w (w1 w2 w6 make mem dry)" >&2; exit 2 ;;
  esac
done
warn_if_noisy
