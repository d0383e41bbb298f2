#!/usr/bin/env bash
# A/B of two flow binaries, in the habit of every change to the coordinator:
#   W1  10,000 x `command = "true"`, 2 slots: processes started for real;
#   D1  100,000 x `command = "true"` under --dry-exec: the coordinator's own
#       cost per instance (rendering, scheduling, journal), no process.
# The binaries alternate, round after round, and each timing reports the
# wall-clock time and the CPU time of `flow run` (and its tasks). CPU time is
# the figure to compare on a machine shared with other work: it barely moves
# with load.
# Usage: benches/ab.sh BEFORE AFTER [ROUNDS]   (two `flow` executables)
#        benches/ab.sh [ROUNDS]                (HEAD^ against HEAD: both are
#                                               built in release mode first)
# Default 7 rounds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=benches/settle.sh
. "$here/settle.sh"

# build REV DIR: a release binary of commit REV, built in a worktree under DIR
# with its own target directory; prints the binary's path.
build() {
  local repo
  repo=$(git -C "$here" rev-parse --show-toplevel)
  git -C "$repo" worktree add -q --detach "$2/src" "$1"
  (cd "$2/src" && CARGO_TARGET_DIR="$2/target" cargo build -q --release) >&2
  git -C "$repo" worktree remove --force "$2/src"
  echo "$2/target/release/flow"
}

if [ $# -ge 2 ] && [ -x "$1" ] && [ -x "$2" ]; then
  before=$1 after=$2 rounds=${3:-7}
elif [ $# -le 1 ]; then
  rounds=${1:-7}
  echo "building HEAD^ and HEAD in release mode ..." >&2
  before=$(build HEAD^ "$work/before") after=$(build HEAD "$work/after")
else
  echo "usage: $0 BEFORE AFTER [ROUNDS] | $0 [ROUNDS]" >&2
  exit 2
fi

# timing NAME FLOW: one W1 and one D1 run from fresh directories; appends
# "w1-wall w1-cpu d1-wall d1-cpu" to $work/NAME.
timing() {
  local w1="$work/w1" d1="$work/d1"
  rm -rf "$w1" "$d1" && mkdir -p "$w1" "$d1"
  printf '[[tasks]]\nname = "t"\nrange = "1-10000"\ncommand = "true"\n' > "$w1/workflow.toml"
  printf '[[tasks]]\nname = "t"\nrange = "1-100000"\ncommand = "true"\n' > "$d1/workflow.toml"
  settle
  /usr/bin/time -f '%e %U %S' -o "$work/time-w1" "$2" run --cpus 2 "$w1/workflow.toml" > /dev/null 2>&1
  settle
  /usr/bin/time -f '%e %U %S' -o "$work/time-d1" "$2" run --dry-exec "$d1/workflow.toml" > /dev/null 2>&1
  cat "$work/time-w1" "$work/time-d1" | awk '{ printf "%.2f %.2f ", $1, $2 + $3 } END { print "" }' >> "$work/$1"
}

alternate "$rounds" "$before" "$after"
echo "median of $rounds alternating rounds"
echo "W1 (10,000 x sh -c true, 2 slots)"
for name in before after; do
  echo "  $name: wall $(median "$work/$name" 1) s, CPU (flow and its tasks) $(median "$work/$name" 2) s"
done
echo "D1 (100,000 x true, --dry-exec)"
for name in before after; do
  echo "  $name: wall $(median "$work/$name" 3) s, CPU $(median "$work/$name" 4) s"
done
warn_if_noisy
