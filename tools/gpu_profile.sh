#!/bin/bash
# gpu_profile.sh DPAMR DECK OUTDIR [VARIANT...] - Nsight Compute on the tile kernels of one run of
# DECK per variant (default: host cdp): speed of light, occupancy, launch statistics, warp stall
# reasons and memory workload for every host-launched refineStep (hostlaunch's every step, cdp level's
# first), flagTiles and the host-launched refineTile grid (cdp tile, group). Clocks are left as they are (--clock-control none). Reports go to
# OUTDIR/ncu_<deck>_<variant>.txt. KERNELS (a regex, default 'refineStep|flagTiles|refineTile') picks
# other kernels and ARGS adds deck keys: the regrid's host-launched kernels of one time step, for
# example, KERNELS=regridStep ARGS=steps=1 (the output is then named by a step pattern; ncu does not
# profile device-launched grids, so only hostlaunch's regridStep grids and cdp's first).
# SOURCE=1: instead, one launch (LAUNCH_SKIP of KERNELS first, default 0) with --set full, its report
# exported, and besides the details page the SASS source page with every instruction's executed
# count and stall samples (ncu_<deck>_<variant>_sass.csv), which tools/ncu_sass.py summarises: the
# stall reasons, the opcode mix, the hottest instructions with their stalls; and the CUDA source page
# (ncu_<deck>_<variant>_cuda.csv: the same counts per line of the CUDA and C sources, inlined
# functions of src/core.h included, from the -lineinfo the device library is built with; the sources
# are read where the report is imported, this checkout).
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
    if [ "${SOURCE:-0}" = 1 ]; then
        base=$outdir/ncu_${name}_$variant
        "$ncu" --clock-control none --kernel-name regex:"${KERNELS:-refineStep}" --launch-skip "${LAUNCH_SKIP:-0}" \
            --launch-count 1 --set full --import-source no -f --export "$tmp/rep" \
            "$dpamr" run "$deck" variant=$variant verbosity=quiet output="$tmp/$oname" ${ARGS:-} >"$base.log" 2>&1
        echo "gpu_profile: $variant on $name (source): exit $?"
        "$ncu" --import "$tmp/rep.ncu-rep" --page details >"$base.txt" 2>&1
        "$ncu" --import "$tmp/rep.ncu-rep" --page source --csv --print-source sass >"${base}_sass.csv" 2>&1
        "$ncu" --import "$tmp/rep.ncu-rep" --page source --csv --print-source cuda >"${base}_cuda.csv" 2>&1
        rm -f "$tmp"/out* "$tmp/rep.ncu-rep"
        continue
    fi
    if [ -n "${METRICS:-}" ]; then
        "$ncu" --clock-control none --kernel-name regex:"${KERNELS:-refineStep|flagTiles|refineTile}" \
            --launch-count 40 --metrics "$METRICS" --csv \
            "$dpamr" run "$deck" variant=$variant verbosity=quiet output="$tmp/$oname" ${ARGS:-} \
            >"$outdir/ncu_${name}_$variant.csv" 2>&1
        echo "gpu_profile: $variant on $name (metrics): exit $?"
        rm -f "$tmp"/out*
        continue
    fi
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
