# shellcheck shell=bash
# Sourced by the benchmark scripts: waiting for an idle machine before each
# timing, the warning when it never became idle, and the A/B helpers.

# settle: waits (up to 60 s) until the machine is idle — under 15 % of the
# CPUs busy over half a second — so that other work does not land in a timing.
noisy=0
settle() {
  local busy
  for _ in $(seq 120); do
    busy=$({ head -1 /proc/stat; sleep 0.5; head -1 /proc/stat; } | awk '
      { idle = $5 + $6; total = 0; for (f = 2; f <= NF; f++) total += $f }
      NR == 1 { i0 = idle; t0 = total } NR == 2 { print 1 - (idle - i0) / (total - t0) }')
    awk -v b="$busy" 'BEGIN { exit !(b < 0.15) }' && return
  done
  noisy=$((noisy + 1))
}

# warn_if_noisy: says how many timings started on a busy machine, if any.
warn_if_noisy() {
  if [ "$noisy" -gt 0 ]; then
    echo
    echo "warning: the machine was busy before $noisy of the timings (waited 60 s for it to settle): compare with care"
  fi
}

# alternate ROUNDS BEFORE AFTER: calls the script's `timing NAME FLOW` for
# both binaries ROUNDS times, each going first every other round.
alternate() {
  local round
  for round in $(seq "$1"); do
    if [ $((round % 2)) = 1 ]; then timing before "$2"; timing after "$3"; else timing after "$3"; timing before "$2"; fi
  done
}

# median FILE COLUMN: the median of one column of a file of timings.
median() { cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
