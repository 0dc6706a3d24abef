#!/bin/bash
# gpu_ab.sh REF_DIR DECK[:key=v,key=v]... - two trees compared in one call on the GPU machine: the
# reference tree A (a copy of another commit at REF_DIR) and this working tree B, built the same way
# for sm_90 (CMAKE_ARGS added, as tools/gpu_session.sh), then each deck benched A, B, A, B
# (`dpamr bench`, which gates every variant byte-identical before timing it), and a table of every
# variant's median over both rounds per tree and the ratio B / A. H200 machines of the same kind
# differ by a few percent from one call to the next (docs/results.md), so two trees are compared
# only within one call; the two rounds show the drift inside it.
#
# Prepare A here (its files travel with the working tree as an ignored path; AB_COMMIT names it):
#   rm -rf ab_ref && mkdir ab_ref && git archive COMMIT | tar -x -C ab_ref && git rev-parse --short COMMIT >ab_ref/AB_COMMIT
# then on the device machine, with carry ["ab_ref"]:
#   CMAKE_ARGS="-DDPAMR_MPI=OFF" bash tools/gpu_ab.sh ab_ref inputs/bench2d.inp:bench_repeats=5,bench_cpu=off
# Refinement decks compare refine ms; decks with steps > 0 the regrid ms per step. Logs and the
# benches' JSON go to $OUT/ab (A's and B's in a/ and b/); the table to $OUT/ab/table.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 REF_DIR DECK[:key=v,...]..." >&2; exit 2; }
ref=$1
shift
[ -f "$ref/CMakeLists.txt" ] || { echo "gpu_ab: $ref holds no source tree (see the top of $0)" >&2; exit 2; }
out=${OUT:-out}/ab
mkdir -p "$out/a" "$out/b"
# each tree's commit in its bench JSON: A's from AB_COMMIT, B's from CMAKE_ARGS (or git describe)
args_b=${CMAKE_ARGS:-}
args_a=$(echo "$args_b" | sed -E 's/-DDPAMR_COMMIT=[^ ]*//g')
args_a="$args_a -DDPAMR_COMMIT=$(cat "$ref/AB_COMMIT" 2>/dev/null || echo reference)"
build() { # build DIR TREE SIDE CMAKE_ARGS [TARGET]
    cmake -S "$2" -B "$1" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 $4 >"$out/build_$3.log" 2>&1 &&
        cmake --build "$1" -j16 ${5:+--target "$5"} >>"$out/build_$3.log" 2>&1 || { tail -30 "$out/build_$3.log"; exit 1; }
}
build "$PWD/build-ab-a" "$ref" a "$args_a" dpamr # A: the program only
build "$PWD/build-ab-b" "$PWD" b "$args_b"       # B: its tests too (a caller may run them)
for round in 1 2; do
    for arg in "$@"; do
        deck=${arg%%:*} over=""
        [ "$arg" != "$deck" ] && over=${arg#*:}
        case $deck in /*) ;; *) deck=$PWD/$deck ;; esac
        name=$(basename "$deck" .inp)
        mesh=$PWD/build-ab-b/meshes/$name.mesh.hdf
        if [ ! -e "${deck%.inp}.mesh.hdf" ] && [ ! -e "$mesh" ]; then # test decks: their level-0 mesh, once
            mkdir -p "$(dirname "$mesh")"
            ./build-ab-b/dpamr mesh "$deck" mesh_file="$mesh" >"$out/mesh_$name.log" 2>&1 || { tail -3 "$out/mesh_$name.log"; continue; }
        fi
        [ -e "$mesh" ] && over="${over:+$over,}mesh_file=$mesh"
        for side in a b; do
            "./build-ab-$side/dpamr" bench "$deck" ${over//,/ } bench_out="$out/$side/${name}_$round" \
                >"$out/$side/${name}_$round.log" 2>&1 || { echo "gpu_ab: $side $name round $round failed:"; tail -5 "$out/$side/${name}_$round.log"; }
        done
    done
done
python3 tools/ab_table.py "$out" "$@" | tee "$out/table.txt"
