#!/bin/bash
# gpu_profile.sh DPAMR DECK OUTDIR [VARIANT...] - Nsight Compute on the tile kernels of one run of
# DECK per variant (default: host cdp): speed of light, occupancy, launch statistics, warp stall
# reasons and memory workload for every launch of refineStep (hostlaunch), flagTiles and the
# host-launched refineTile grid. Clocks are left as they are (--clock-control none). Reports go to
# OUTDIR/ncu_<deck>_<variant>.txt.
set -uo pipefail
dpamr=$1 deck=$2 outdir=$3
shift 3
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
[ -x "$ncu" ] || { echo "gpu_profile: ncu not found"; exit 77; }
mkdir -p "$outdir"
name=$(basename "$deck" .inp)
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(host cdp)
for variant in "${variants[@]}"; do
    {
        "$ncu" --clock-control none --kernel-name regex:'refineStep|flagTiles|refineTile' \
            --launch-count 40 --section SpeedOfLight --section Occupancy --section LaunchStats \
            --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
            "$dpamr" run "$deck" variant=$variant verbosity=quiet output="$tmp/out.hdf" >"$outdir/ncu_${name}_$variant.txt" 2>&1
        echo "gpu_profile: $variant on $name: exit $?, $(grep -c '^  [a-zA-Z]*(' "$outdir/ncu_${name}_$variant.txt") kernels profiled"
        rm -f "$tmp/out.hdf"
    }
done
