#!/bin/bash
# gpu_memcheck.sh DPAMR DECK WORKDIR - compute-sanitizer memcheck (out-of-bounds and misaligned
# accesses, device-heap errors, leaks of device memory) on every GPU engine and cdp grain, pdl on,
# and the file of each run byte-identical to cpu. The upload and the download go through the pinned
# staging in chunks of an odd 65537 bytes (DPAMR_TEST_STAGE_CHUNK; these decks are below the size
# that is staged otherwise), so the memcheck covers the staged copies. Exit 77 (skipped) without a
# CUDA device or without compute-sanitizer. (racecheck and synccheck refuse binaries with dynamic
# parallelism.)
set -uo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
skip_without_gpu "$dpamr"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$san" ] || { echo "SKIPPED: compute-sanitizer not found (PATH, /usr/local/cuda/bin)"; exit 77; }
fresh_dir "$work"
"$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf" >/dev/null || exit 1
m=mesh_file="$work/mesh.hdf"
"$dpamr" run "$deck" "$m" variant=cpu output="$work/cpu.hdf" >/dev/null || exit 1
for v in "cdp cdp_grain=tile" "cdp cdp_grain=group cdp_group=5" "cdp cdp_grain=level" hostlaunch; do
    name=$(echo "$v" | tr ' =' '__')
    # --error-exitcode: any memcheck report fails the run even when dpamr itself exits 0
    if DPAMR_TEST_STAGE_CHUNK=65537 "$san" --tool memcheck --leak-check full --error-exitcode 99 --print-limit 20 \
        "$dpamr" run "$deck" "$m" variant=$v pdl=on output="$work/$name.hdf" >"$work/$name.log" 2>&1; then
        h5cmp "$work/cpu.hdf" "$work/$name.hdf" --ignore /dpamr/deck >/dev/null &&
            echo "ok   memcheck $v: $(grep -c 'ERROR SUMMARY: 0 errors' "$work/$name.log") clean summary" ||
            fail "memcheck $v: file differs from cpu"
    else
        fail "memcheck $v (exit $?):"; tail -40 "$work/$name.log"
    fi
    rm -f "$work/$name.hdf"
done
finish "gpu_memcheck on $(basename "$deck")"
