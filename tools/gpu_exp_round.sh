#!/bin/bash
# gpu_exp_round.sh REF_DIR [SECONDS] - one device call for an experiment branch: the A/B of this tree
# (B) against REF_DIR (A, prepared as tools/gpu_ab.sh says) on bench3d, bench2d and movingbench2d,
# then B's gpu label and B's Nsight Compute profile of bench2d (hostlaunch), within SECONDS (default
# 540: a call may run 600). Everything goes under $OUT (the device tool returns at most 8 files, two
# folders deep): machine.txt, table.txt (the A/B), gpu_label.txt, and logs.tgz with all the logs.
# Each bench gates every variant byte-identical to cpu before timing it; a step that runs out of time
# is cut, and what ran is kept. Usage on the device machine, with carry ["ab_ref"]:
#   bash tools/gpu_exp_round.sh ab_ref
set -uo pipefail
cd "$(dirname "$0")/.."
ref=${1:?usage: gpu_exp_round.sh REF_DIR [SECONDS]}
budget=${2:-540}
out=${OUT:?the device tool sets OUT}
work=$(mktemp -d)
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
nvidia-smi >"$out/machine.txt" 2>&1
{ git log --oneline -3 2>/dev/null; echo "A: $(cat "$ref/AB_COMMIT" 2>/dev/null)"; } >>"$out/machine.txt"
CMAKE_ARGS="-DDPAMR_MPI=OFF" OUT=$work timeout -k 10 $(($(left) - 150)) bash tools/gpu_ab.sh "$ref" \
    inputs/bench3d.inp:bench_repeats=3,bench_cpu=off inputs/bench2d.inp:bench_repeats=3,bench_cpu=off \
    inputs/movingbench2d.inp:steps=4,bench_repeats=1,bench_cpu=off >"$work/ab.log" 2>&1
echo "gpu_ab: exit $? ($(left) s left)" >>"$out/machine.txt"
cp "$work/ab/table.txt" "$out/table.txt" 2>/dev/null
if [ -x build-ab-b/dpamr ] && [ "$(left)" -gt 60 ]; then
    (cd build-ab-b && timeout -k 10 $(($(left) - 50)) ctest -L gpu -E gpu_validate_bench -j8 --output-on-failure) \
        >"$out/gpu_label.txt" 2>&1
    echo "gpu label: exit $? ($(left) s left)" >>"$out/machine.txt"
fi
if [ -x build-ab-b/dpamr ] && [ "$(left)" -gt 20 ]; then
    timeout -k 5 $(($(left) - 15)) bash tools/gpu_profile.sh build-ab-b/dpamr inputs/bench2d.inp "$work/prof" host \
        >"$work/profile.log" 2>&1
    echo "profile: exit $? ($(left) s left)" >>"$out/machine.txt"
fi
tar czf "$out/logs.tgz" -C "$work" . 2>/dev/null
rm -rf "$work"
