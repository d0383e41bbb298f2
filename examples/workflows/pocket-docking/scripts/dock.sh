#!/bin/sh
# dock.sh RECEPTOR POCKET VOLUME: prints a stand-in docking score.
# When the file $DOCK_BUSY names exists, the licence server is busy: the
# first docking to see it removes it and exits 75 (the workflow retries that).
# A receptor named in $DOCK_BROKEN gives no pose: exit 2, which is not retried.
if [ -n "${DOCK_BUSY:-}" ] && rm "$DOCK_BUSY" 2>/dev/null; then
  echo "licence server busy" >&2
  exit 75
fi
if [ -n "${DOCK_BROKEN:-}" ] && [ "$1" = "$DOCK_BROKEN" ]; then
  echo "no pose for $1 pocket $2" >&2
  exit 2
fi
seed=$(printf %s "$1" | cksum | cut -d' ' -f1)
printf '%s pocket %s score %d\n' "$1" "$2" $(( ($3 * 7 + seed) % 50 ))
