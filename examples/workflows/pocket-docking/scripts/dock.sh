#!/bin/sh
# dock.sh RECEPTOR POCKET VOLUME: prints a stand-in docking score.
seed=$(printf %s "$1" | cksum | cut -d' ' -f1)
printf '%s pocket %s score %d\n' "$1" "$2" $(( ($3 * 7 + seed) % 50 ))
