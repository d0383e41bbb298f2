#!/bin/sh
# find_pockets.sh RECEPTOR OUT: writes the pockets found on RECEPTOR as a
# JSON array to OUT. A stand-in for a pocket finder: 0 to 3 pockets,
# decided by the receptor's name.
receptor=$1
out=$2
n=$(( $(printf %s "$receptor" | cksum | cut -d' ' -f1) % 4 ))
mkdir -p "$(dirname "$out")"
{
    printf '['
    i=1
    while [ "$i" -le "$n" ]; do
        [ "$i" -gt 1 ] && printf ','
        printf '{"receptor":"%s","pocket":%d,"volume":%d}' "$receptor" "$i" $(( i * 37 % 100 + 120 ))
        i=$(( i + 1 ))
    done
    printf ']\n'
} > "$out"
