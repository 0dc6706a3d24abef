#!/bin/bash
# quick_ab.sh [PATCH...] - the smallest A/B of device experiments, for a call with little device time
# left (about 130 s on a started machine; tools/gpu_exp_round.sh is the full round): A = this tree,
# B = this tree with the patches (default every tools/exp/*.patch but the diagnostic ones), only `dpamr` built,
# both at once (-j8 each). First B's gate: `dpamr bench` with bench_cpu=on on small decks (deep3d,
# objects16, moving3d for 4 steps: fill = model; default, moving2d for 4 steps: prolong), which
# checks every variant byte-identical to cpu; then A, B, A, B
# on movingbench2d (4 steps), bench3d and bench2d, and tools/ab_table.py's table after every deck.
# Not the gpu label: a patch measured here still needs it before it lands. Output under $OUT:
# quick.txt (the gates, the steps' times), table.txt, logs.tgz (at the end only). The call, from
# the repository root: run: DPAMR_COMMIT=<hash> bash tools/exp/quick_ab.sh
# To measure what has landed instead: A_DIFF=tools/exp/base/NAME.diff bash tools/exp/quick_ab.sh none
# (A = this tree with the diff applied: the code before the change; B = this tree; `none`: no patches).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:?the device tool sets OUT}
[ $# -gt 0 ] || set -- $(ls tools/exp/*.patch | grep -v diag)
[ "$*" = none ] && set --
work=$(mktemp -d)
log=$out/quick.txt
commit=${DPAMR_COMMIT:-tree}
t0=$(date +%s)
stamp() { echo "[$(($(date +%s) - t0)) s] $*" >>"$log"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$log" 2>&1
# QA_KEEP_A=1: keep build-qa from the quick_ab before in this tree (the same A: no A_DIFF, the tree as
# it was then) and build only B
keep_a=0
[ "${QA_KEEP_A:-0}" = 1 ] && [ -z "${A_DIFF:-}" ] && [ -x build-qa/dpamr ] && keep_a=1
[ $keep_a = 1 ] || rm -rf build-qa
rm -rf ab_ref build-qb && mkdir ab_ref &&
    tar --exclude='./ab_ref' --exclude='./build*' --exclude='./.git' -cf - . | tar -x -C ab_ref || exit 1
if [ -n "${A_DIFF:-}" ]; then
    git apply --directory=ab_ref "$A_DIFF" 2>>"$log" || patch -d ab_ref -p1 --forward -s <"$A_DIFF" >>"$log" 2>&1 ||
        { stamp "$A_DIFF does not apply to A"; exit 1; }
fi
for p in "$@"; do git apply "$p" 2>>"$log" || patch -p1 --forward -s <"$p" >>"$log" 2>&1 || { stamp "$p does not apply"; exit 1; }; done
stamp "A: $commit${A_DIFF:+ + $A_DIFF}, B: $commit${*:+ + $*}"
cfg="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDPAMR_MPI=OFF"
if [ $keep_a = 1 ]; then
    stamp "A: build-qa kept from the quick_ab before"
else
    (cmake -S ab_ref -B build-qa $cfg -DDPAMR_COMMIT="$commit" && cmake --build build-qa -j8 --target dpamr) >"$work/build_a.log" 2>&1 &
fi
jb=$((keep_a ? 16 : 8))
(cmake -S . -B build-qb $cfg -DDPAMR_COMMIT="$commit+exp" && cmake --build build-qb -j$jb --target dpamr) >"$work/build_b.log" 2>&1 &
wait
[ -x build-qa/dpamr ] && [ -x build-qb/dpamr ] || { stamp "build failed"; tail -20 "$work"/build_*.log >>"$log"; tar czf "$out/logs.tgz" -C "$work" .; exit 1; }
stamp built
mkdir -p "$work/meshes" "$work/a" "$work/b"
meshof() { # the deck's level-0 mesh: shipped, or made once
    local d=$1 m=${1%.inp}.mesh.hdf
    [ -e "$m" ] && { echo ""; return; }
    m=$work/meshes/$(basename "$d" .inp).mesh.hdf
    [ -e "$m" ] || ./build-qb/dpamr mesh "$d" mesh_file="$m" >/dev/null 2>&1
    echo "mesh_file=$m"
}
# QA_GATES (deck:key=value,... separated by blanks) replaces the gate decks
for g in ${QA_GATES:-tests/decks/deep3d.inp tests/decks/objects16.inp inputs/moving3d.inp:steps=4 inputs/default.inp \
    inputs/moving2d.inp:steps=4}; do
    d=${g%%:*} over=""
    [ "$g" != "$d" ] && over=${g#*:} && over=${over//,/ }
    name=$(basename "$d" .inp)
    ./build-qb/dpamr bench "$d" $(meshof "$d") $over bench_cpu=on bench_repeats=1 bench_warmup=0 \
        bench_out="$work/gate_$name" >"$work/gate_$name.log" 2>&1
    stamp "gate $name: exit $?"
    grep '^gate' "$work/gate_$name.log" >>"$log"
done
# QA_DECKS (deck:key=value,... separated by blanks) replaces the timed decks or their order
decks=(${QA_DECKS:-inputs/movingbench2d.inp:steps=4,bench_repeats=1,bench_cpu=off inputs/bench3d.inp:bench_repeats=3,bench_cpu=off
    inputs/bench2d.inp:bench_repeats=3,bench_cpu=off})
for round in 1 2; do
    for g in "${decks[@]}"; do
        d=${g%%:*} over=${g#*:}
        name=$(basename "$d" .inp)
        for side in a b; do
            "./build-q$side/dpamr" bench "$d" $(meshof "$d") ${over//,/ } bench_out="$work/$side/${name}_$round" \
                >"$work/$side/${name}_$round.log" 2>&1 || stamp "$side $name round $round failed"
        done
        stamp "round $round $name"
        # the table so far, after every deck (a call cut at its limit still brings it back)
        python3 tools/ab_table.py "$work" "${decks[@]}" >"$out/table.txt" 2>&1
    done
done
tar czf "$out/logs.tgz" -C "$work" . 2>/dev/null
rm -rf "$work"
