#!/bin/bash
# next.sh [STEPS] - the next device session's calls (tools/exp/README.md, "Next"), one step or several
# per call, each under its own time limit so that a call cut at its limit still brings back what ran.
# Steps (default: steps ab):
#   steps  test_teams, then gpu_steps on this tree alone (a non-MPI Release build), its output streamed to
#          $OUT/gpu_steps.txt, so a cut run still shows which parts passed (STEPS_LIMIT, default 420 s)
#   ab     quick_ab.sh with patch 15, then with 15 + 16, each against this tree ($OUT/p15, $OUT/p16:
#          three files each)
#   prof   Nsight Compute on bench3d's finest hostlaunch refineStep with the SASS source page
#          (gpu_profile.sh SOURCE=1), with whatever patches PROF_PATCHES names applied
# At most 8 files come back from $OUT: steps 1, ab 6, prof 1 (a tarball).
# The call, from the repository root: run: DPAMR_COMMIT=<hash> bash tools/exp/next.sh steps ab
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:?the device tool sets OUT} c=${DPAMR_COMMIT:-tree}
[ $# -gt 0 ] || set -- steps ab
cfg="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDPAMR_MPI=OFF -DDPAMR_COMMIT=$c"
build() { # build DIR: dpamr alone
    [ -x "$1/dpamr" ] || { cmake -S . -B "$1" $cfg >"$1.log" 2>&1 && cmake --build "$1" -j16 --target dpamr >>"$1.log" 2>&1; } ||
        { tail -20 "$1.log"; return 1; }
}
for step in "$@"; do
    case $step in
    steps)
        { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date; } >"$out/gpu_steps.txt"
        # first test_teams (session 32 added its one-round look-back cases after its last call)
        { nvcc -std=c++17 -arch=sm_90 -I. -diag-suppress=20044 tests/test_teams.cu -o /tmp/test_teams && /tmp/test_teams -q;
            echo "test_teams exit $?"; } >>"$out/gpu_steps.txt" 2>&1
        build build-next && timeout "${STEPS_LIMIT:-420}" bash tests/gpu_steps.sh "$PWD/build-next/dpamr" "$PWD" \
            "$PWD/build-next/gs" >>"$out/gpu_steps.txt" 2>&1
        echo "gpu_steps exit $? ($(date))" >>"$out/gpu_steps.txt"
        ;;
    ab)
        mkdir -p "$out/p15" "$out/p16"
        OUT=$out/p15 DPAMR_COMMIT=$c timeout 240 bash tools/exp/quick_ab.sh tools/exp/15-*.patch
        git apply -R tools/exp/15-*.patch
        OUT=$out/p16 DPAMR_COMMIT=$c timeout 240 bash tools/exp/quick_ab.sh tools/exp/15-*.patch tools/exp/16-*.patch
        git apply -R tools/exp/16-*.patch && git apply -R tools/exp/15-*.patch
        ;;
    prof)
        for p in ${PROF_PATCHES:-}; do git apply "$p" || exit 1; done
        rm -rf build-prof && build build-prof && mkdir -p "$out/prof" &&
            SOURCE=1 LAUNCH_SKIP=5 timeout 120 bash tools/gpu_profile.sh build-prof/dpamr inputs/bench3d.inp "$out/prof" hostlaunch
        tar czf "$out/prof.tgz" -C "$out" prof && rm -rf "$out/prof"
        for p in ${PROF_PATCHES:-}; do git apply -R "$p"; done
        ;;
    *) echo "next.sh: unknown step $step (steps, ab, prof)"; exit 2 ;;
    esac
done
