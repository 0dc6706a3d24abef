#!/bin/bash
# numpy_mesh.sh DPAMR SRC WORKDIR - a mesh written from a user's own numpy data with h5py
# (tools/mesh_from_numpy.py, the recipe in docs/format.md) loads, refines and validates, in 2D and 3D.
set -euo pipefail
dpamr=$1 src=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
$py "$src/tools/mesh_from_numpy.py" "$work/np2.hdf" --demo 2
"$dpamr" run "$src/inputs/default.inp" mesh_file="$work/np2.hdf" criterion=jump threshold=0.1 output="$work/o2.hdf"
$py "$src/tools/mesh_from_numpy.py" "$work/np3.hdf" --demo 3
"$dpamr" run "$src/inputs/sphere3d.inp" mesh_file="$work/np3.hdf" root="4 4 4" fill=prolong output="$work/o3.hdf"
"$dpamr" check "$work/o2.hdf" && "$dpamr" check "$work/o3.hdf"
# the refinement keeps level 0: the output's level-0 cells and boxes are the numpy mesh's, bit for bit
for d in 2 3; do
    $py - "$work/np$d.hdf" "$work/o$d.hdf" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    for name in ("AMRBox", "CellData/rho"):
        x, y = a["/VTKHDF/Level0/" + name][()], b["/VTKHDF/Level0/" + name][()]
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name
print("level 0 of", sys.argv[2], "is the numpy mesh's")
PY
done
