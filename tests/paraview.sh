#!/bin/bash
# paraview.sh DPAMR SRC WORKDIR - outputs (2D and 3D) open in Debian's ParaView 5.11: levels and box
# counts match the file's own tile tree, every cell value is the file's, and a PNG renders; a file
# in the previous layout (format version 1, tests/data/v1) opens too, and the same refinement written
# now holds its mesh bit for bit (values as before). Exit 77 (skipped) without ParaView.
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
# the version-1 file's refinement (default.inp to level 2), written in the current layout
(cd "$work" && "$dpamr" run "$src/inputs/default.inp" variant=cpu max_level=2 output=v2_run.hdf >/dev/null)
/usr/bin/python3 "$tests/h5compare.py" --mesh "$src/tests/data/v1/default_run.hdf" "$work/v2_run.hdf"
cp "$src/tests/data/v1/default_run.hdf" "$work/v1_run.hdf"
xvfb_python "$work/check.log" "$src/validation/paraview_check.py" --png-dir "$work" \
    "$work/default.hdf" "$work/sphere3d.hdf" "$work/model2d.hdf" "$work/blob3d.hdf" \
    "$work/bench2d.hdf" "$work/bench3d.hdf" "$work/v1_run.hdf" "$work/v2_run.hdf"
