#!/bin/bash
# gpu_racecheck.sh TEST_TEAMS DPAMR - compute-sanitizer racecheck (shared-memory hazards), synccheck
# (barrier misuse) and memcheck on test_teams: the group primitives of the GPU engines (the block barriers,
# group_scan's direct prefix and look-back) in a program without relocatable device code, which
# racecheck and synccheck accept where they refuse dpamr (dynamic parallelism). Exit 77 (skipped)
# without a CUDA device or without compute-sanitizer.
set -uo pipefail
teams=$1 dpamr=$2
source "$(dirname "$0")/lib.sh"
skip_without_gpu "$dpamr"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$san" ] || { echo "SKIPPED: compute-sanitizer not found (PATH, /usr/local/cuda/bin)"; exit 77; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for tool in "racecheck --racecheck-report all" synccheck memcheck; do
    # --error-exitcode: any report fails even when the program itself passes
    if "$san" --tool $tool --error-exitcode 99 --print-limit 20 "$teams" -q -s >"$log" 2>&1; then
        echo "ok   ${tool%% *}: $(grep -m1 'ERROR SUMMARY' "$log"; grep -m1 'RACECHECK SUMMARY' "$log")"
    else
        fail "${tool%% *} on test_teams:"; tail -40 "$log"
    fi
done
finish "gpu_racecheck (test_teams)"
