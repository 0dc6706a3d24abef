#!/bin/bash
# seeds.sh DPAMR SRC OUT - the fuzz seeds: OUT/deck, the shipped decks; OUT/h5, the level-0 meshes
# of the small shipped decks and a small run output, written by this build (the format dpamr
# writes: checksummed object headers, docs/format.md).
set -euo pipefail
dpamr=$1 src=$2 out=$3
# the seeds are not under test: LeakSanitizer's exit-time check of this build's dpamr is left out
# (it faults in its tracer thread in `dpamr mesh` of the clang build with OpenMP)
export ASAN_OPTIONS=detect_leaks=0
rm -rf "$out" && mkdir -p "$out/deck" "$out/h5"
cp "$src"/inputs/*.inp "$src"/tests/decks/*.inp "$out/deck/"
for d in default model2d sphere3d blob3d; do
    "$dpamr" mesh "$src/inputs/$d.inp" mesh_file="$out/h5/$d.mesh.hdf" >/dev/null
done
"$dpamr" run "$src/inputs/default.inp" variant=cpu max_level=2 output="$out/h5/run.hdf" >/dev/null
