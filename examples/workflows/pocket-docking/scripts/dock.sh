#!/bin/sh
# dock.sh RECEPTOR POCKET VOLUME: prints a stand-in docking score.
# When the file $DOCK_BUSY names exists, the licence server is busy: the
# first docking to see it removes it and exits 75 (the workflow retries that).
if [ -n "${DOCK_BUSY:-}" ] && rm "$DOCK_BUSY" 2>/dev/null; then
  echo "licence server busy" >&2
  exit 75
fi
seed=$(printf %s "$1" | cksum | cut -d' ' -f1)
printf '%s pocket %s score %d\n' "$1" "$2" $(( ($3 * 7 + seed) % 50 ))
