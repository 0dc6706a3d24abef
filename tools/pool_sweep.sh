#!/bin/bash
# pool_sweep.sh DPAMR DECK POOL... - the cdp build time against the pending-launch pool size:
# one `dpamr run variant=cdp pool=N` per size (after one warm-up run), refine time and launches.
set -uo pipefail
dpamr=$1 deck=$2
shift 2
tmp=$(mktemp -d)
"$dpamr" run "$deck" variant=cdp output="$tmp/w.hdf" >/dev/null 2>&1
printf "%10s %12s %10s  %s\n" pool refine_ms launches result
for pool in "$@"; do
    if "$dpamr" run "$deck" variant=cdp pool="$pool" output="$tmp/o.hdf" >"$tmp/log" 2>"$tmp/err"; then
        ms=$(grep -o "refined in [0-9.]*" "$tmp/log" | awk '{print $3}')
        la=$(grep -o "device launches: [0-9]*" "$tmp/log" | awk '{print $3}')
        printf "%10s %12s %10s  %s\n" "$pool" "$ms" "$la" ok
    else
        printf "%10s %12s %10s  %s\n" "$pool" - - "$(head -c 160 "$tmp/err")"
    fi
done
rm -rf "$tmp"
