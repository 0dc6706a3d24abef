#!/bin/bash
# paraview_series.sh DPAMR SRC WORKDIR - a time series (2D, fill = prolong; 3D, fill = model) opens in
# Debian's ParaView 5.11 as one time-varying dataset: validation/paraview_series.py checks the time
# steps against the series file and each step's levels and boxes against its file. Exit 77 (skipped)
# without ParaView.
set -euo pipefail
dpamr=$1 src=$2 work=$3
source "$(dirname "$0")/lib.sh"
skip_without_paraview
fresh_dir "$work" 2d 3d
(cd "$work/2d" && "$dpamr" run "$src/inputs/moving2d.inp" variant=cpu steps=30 output=m_%05d.hdf verbosity=quiet >/dev/null)
(cd "$work/3d" && "$dpamr" run "$src/inputs/moving3d.inp" variant=cpu output=m_%05d.hdf verbosity=quiet >/dev/null)
# reading needs no X server (only rendering does: --png-dir, which paraview.sh tests for single files)
for dim in 2d 3d; do
    env -u DISPLAY /usr/bin/python3 "$src/validation/paraview_series.py" "$work/$dim/m.hdf.series"
done
echo "paraview_series OK"
