#!/bin/bash
# gpu_profile.sh DPAMR DECK OUTDIR [VARIANT...] - Nsight Compute on the tile kernels of one run of
# DECK per variant (default: host cdp): speed of light, occupancy, launch statistics, warp stall
# reasons and memory workload for every launch of refineStep (hostlaunch), flagTiles and the
# host-launched refineTile grid. Clocks are left as they are (--clock-control none). Reports go to
# OUTDIR/ncu_<deck>_<variant>.txt. KERNELS (a regex, default 'refineStep|flagTiles|refineTile') picks
# other kernels and ARGS adds deck keys: the regrid's host-launched kernels of one time step, for
# example, KERNELS=regridStep ARGS=steps=1 (the output is then named by a step pattern; ncu does not
# profile device-launched grids, so only hostlaunch's regridStep grids and cdp's first).
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
oname=out.hdf # with time steps the output is a pattern of step files
case " ${ARGS:-} " in *" steps="*) oname='out_%05d.hdf' ;; esac
for variant in "${variants[@]}"; do
    {
        "$ncu" --clock-control none --kernel-name regex:"${KERNELS:-refineStep|flagTiles|refineTile}" \
            --launch-count 40 --section SpeedOfLight --section Occupancy --section LaunchStats \
            --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
            "$dpamr" run "$deck" variant=$variant verbosity=quiet output="$tmp/$oname" ${ARGS:-} \
            >"$outdir/ncu_${name}_$variant.txt" 2>&1
        echo "gpu_profile: $variant on $name: exit $?, $(grep -c '^  [a-zA-Z]*(' "$outdir/ncu_${name}_$variant.txt") kernels profiled"
        rm -f "$tmp"/out*
    }
done
