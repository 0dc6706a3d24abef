#!/bin/bash
# check_tamper.sh DPAMR DECK WORKDIR - `dpamr check` refuses every change to a file dpamr wrote
# (tests/check_tamper.py: a bit flipped in every dataset, every checked attribute edited, every
# attribute, group and dataset deleted), for the output of `dpamr run` and of `dpamr mesh`.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work" run mesh
"$dpamr" run "$deck" variant=cpu max_level=3 output="$work/run.hdf" >/dev/null
"$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf" >/dev/null
"$dpamr" check "$work/run.hdf" >/dev/null || fail "check of the untouched run output"
"$dpamr" check "$work/mesh.hdf" >/dev/null || fail "check of the untouched mesh"
$py "$tests/check_tamper.py" "$dpamr" "$work/run.hdf" "$work/run" || fail "tampered run outputs"
$py "$tests/check_tamper.py" "$dpamr" "$work/mesh.hdf" "$work/mesh" || fail "tampered meshes"
# a cell changed so that validation fails too: the recorded checksum names the change (exit 2)
cp "$work/run.hdf" "$work/cell.hdf"
$py - "$work/cell.hdf" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], 'r+') as f:
    d = f['VTKHDF/Level1/CellData/rho']
    a = d[...]
    a[len(a) // 2] = 1e6
    d[...] = a
PY
rc=0; "$dpamr" check "$work/cell.hdf" >"$work/cell.out" 2>&1 || rc=$?
[ $rc = 2 ] || { cat "$work/cell.out"; fail "a changed cell: exit $rc, expected 2"; }
grep -q "validation: FAILED" "$work/cell.out" || { cat "$work/cell.out"; fail "a changed cell: no validation failure"; }
grep -q "checksums: FAILED: level 1 field rho.*the data changed after it was written" "$work/cell.out" ||
    { cat "$work/cell.out"; fail "a changed cell that fails validation: not named by its checksum"; }
finish check_tamper
