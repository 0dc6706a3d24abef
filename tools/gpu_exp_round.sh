#!/bin/bash
# gpu_exp_round.sh [SECONDS] [PATCH...] - one device call that measures device experiments kept as
# patches (tools/exp/*.patch by default; tools/exp/README.md says what each one tries): A = this tree
# as it is, B = this tree with the patches applied. The A/B of tools/gpu_ab.sh on bench3d, bench2d,
# movingbench2d and deep2d (each bench gates every variant byte-identical to cpu before timing it),
# then B's Nsight Compute profile of bench2d (hostlaunch) and B's gpu label (the tests of the cases
# the benches do not cover first: tile sizes 4 and 32, balance, the regrids, memcheck), within
# SECONDS (default 540: a call may run 600); a step that runs out of time is cut and what ran is kept
# (the A/B's table is made from the benches that finished). Everything goes
# under $OUT (the device tool returns at most 8 files, two folders deep): machine.txt, table.txt (the
# A/B), gpu_label.txt, and logs.tgz with every log and the benches' JSON (per-level times). DPAMR_COMMIT
# names A's commit in the tables (the copy on the device machine may have no .git). The call, from
# the repository's root here, nothing to prepare (the patches are tracked files):
#   run: DPAMR_COMMIT=<short hash of HEAD> bash tools/gpu_exp_round.sh
# The tree on the device machine is a copy: the patches are applied there only.
set -uo pipefail
cd "$(dirname "$0")/.."
budget=540
case ${1:-} in '' | *[!0-9]*) ;; *) budget=$1; shift ;; esac
[ $# -gt 0 ] || set -- tools/exp/*.patch
out=${OUT:?the device tool sets OUT}
work=$(mktemp -d)
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
commit=${DPAMR_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo tree)}
nvidia-smi >"$out/machine.txt" 2>&1
rm -rf build-ab-a build-ab-b # a warm machine's builds could be stale (file times of the copy)
# A: the tree before the patches (gpu_ab.sh's reference tree, ignored by git: .gitignore's ab_ref/)
rm -rf ab_ref && mkdir ab_ref &&
    tar --exclude='./ab_ref' --exclude='./build*' --exclude='./.git' -cf - . | tar -x -C ab_ref &&
    echo "$commit" >ab_ref/AB_COMMIT || { echo "gpu_exp_round: could not copy the tree" >>"$out/machine.txt"; exit 1; }
for p in "$@"; do # B: the patches, in order; one that does not apply ends the call
    if git apply "$p" 2>>"$out/machine.txt" || patch -p1 --forward -s <"$p" >>"$out/machine.txt" 2>&1; then
        echo "applied: $p" >>"$out/machine.txt"
    else
        echo "gpu_exp_round: $p does not apply to $commit" >>"$out/machine.txt"
        exit 1
    fi
done
echo "A: $commit, B: $commit + $#" >>"$out/machine.txt"
decks=(inputs/bench3d.inp:bench_repeats=3,bench_cpu=off inputs/bench2d.inp:bench_repeats=3,bench_cpu=off
    inputs/movingbench2d.inp:steps=4,bench_repeats=1,bench_cpu=off tests/decks/deep2d.inp:bench_repeats=3,bench_cpu=off)
CMAKE_ARGS="-DDPAMR_MPI=OFF -DDPAMR_COMMIT=$commit+exp" OUT=$work timeout -k 10 $(($(left) - 200)) \
    bash tools/gpu_ab.sh ab_ref "${decks[@]}" >"$work/ab.log" 2>&1
echo "gpu_ab: exit $? ($(left) s left)" >>"$out/machine.txt"
mkdir -p "$work/ab"
[ -s "$work/ab/table.txt" ] || python3 tools/ab_table.py "$work/ab" "${decks[@]}" >"$work/ab/table.txt" 2>&1
cp "$work/ab/table.txt" "$out/table.txt" 2>/dev/null
if [ -x build-ab-b/dpamr ]; then # B's SASS of the kernels that spill (no cuobjdump on the development VM)
    for o in $(find build-ab-b -name 'regrid_gpu.cu.o' -o -name 'engine_host.cu.o' -o -name 'engine_cdp.cu.o'); do
        timeout 30 /usr/local/cuda/bin/cuobjdump -sass "$o" 2>&1 | gzip >"$work/sass_$(basename "$o" .cu.o).txt.gz"
    done
fi
if [ -x build-ab-b/dpamr ] && [ "$(left)" -gt 150 ]; then
    timeout -k 5 60 bash tools/gpu_profile.sh build-ab-b/dpamr inputs/bench2d.inp "$work/prof" host >"$work/profile.log" 2>&1
    echo "profile: exit $? ($(left) s left)" >>"$out/machine.txt"
fi
if [ -x build-ab-b/dpamr ] && [ "$(left)" -gt 40 ]; then
    first='gpu_(objects|tile32|balance|deep|steps|memcheck)'
    (cd build-ab-b && timeout -k 10 $(($(left) - 30)) bash -c "ctest -L gpu -R '$first' -j8 --output-on-failure;
        ctest -L gpu -E 'gpu_validate_bench|$first' -j8 --output-on-failure") >"$out/gpu_label.txt" 2>&1
    echo "gpu label: exit $? ($(left) s left)" >>"$out/machine.txt"
fi
tar czf "$out/logs.tgz" -C "$work" . 2>/dev/null
rm -rf "$work"
