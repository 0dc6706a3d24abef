#!/bin/bash
# seeds.sh DPAMR SRC OUT - the fuzz seeds: OUT/deck, the shipped decks; OUT/h5, small files of every
# kind dpamr reads, written by this build (the format dpamr writes: checksummed object headers,
# docs/format.md): a level-0 mesh and a run output (levels 0..2) in 2D with one field and with two
# (model2d), and in 3D with fill=model and fill=prolong, on one or four root tiles of 4^dim cells
# (12 to 46 KB), the shipped default mesh, and a mesh and a run output in the previous layout
# (format version 1, tests/data/v1), which dpamr still reads. Small files keep each execution short
# (the HDF5 metadata, not the cells, is most of what a mutation can reach).
set -euo pipefail
dpamr=$1 src=$2 out=$3
# the seeds are not under test: LeakSanitizer's exit-time check of this build's dpamr is left out
# (it faults in its tracer thread in `dpamr mesh` of the clang build with OpenMP)
export ASAN_OPTIONS=detect_leaks=0
rm -rf "$out" && mkdir -p "$out/deck" "$out/h5"
cp "$src"/inputs/*.inp "$src"/tests/decks/*.inp "$out/deck/"
cp "$src/inputs/default.mesh.hdf" "$out/h5/"
cp "$src/tests/data/v1/default.mesh.hdf" "$out/h5/v1_mesh.hdf"
cp "$src/tests/data/v1/default_run.hdf" "$out/h5/v1_run.hdf"
# NAME DECK ROOT: OUT/h5/NAME_mesh.hdf and NAME_run.hdf
small() {
    local m="$out/h5/$1_mesh.hdf"
    "$dpamr" mesh "$src/inputs/$2.inp" root="$3" tile_size=4 mesh_file="$m" >/dev/null
    "$dpamr" run "$src/inputs/$2.inp" root="$3" tile_size=4 max_level=2 variant=cpu mesh_file="$m" \
        output="$out/h5/$1_run.hdf" >/dev/null
}
small 2d default "2 2"
small 2d_2f model2d "1 1"
small 3d sphere3d "1 1 1"
small 3d_prolong blob3d "1 1 1"
