#!/bin/bash
# paraview.sh DPAMR SRC WORKDIR - outputs (2D and 3D) open in Debian's ParaView 5.11: levels and box
# counts match the file's own tile tree, and a PNG renders. Exit 77 (skipped) without ParaView.
set -euo pipefail
dpamr=$1 src=$2 work=$3
source "$(dirname "$0")/lib.sh"
skip_without_paraview
fresh_dir "$work"
for deck in default sphere3d model2d blob3d; do
    "$dpamr" run "$src/inputs/$deck.inp" variant=cpu output="$work/$deck.hdf" >/dev/null
done
# the benchmark decks at a lower max_level: their full outputs (1e8 cells) need more memory in
# ParaView than a 24 GB machine has
for deck in bench2d bench3d; do
    "$dpamr" run "$src/inputs/$deck.inp" variant=cpu max_level=3 output="$work/$deck.hdf" >/dev/null
done
xvfb_python "$work/check.log" "$src/validation/paraview_check.py" --png-dir "$work" \
    "$work/default.hdf" "$work/sphere3d.hdf" "$work/model2d.hdf" "$work/blob3d.hdf" \
    "$work/bench2d.hdf" "$work/bench3d.hdf"
