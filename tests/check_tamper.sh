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
# the rank table with counts that add up wrongly without any single +1: rows of 2^62 tiles (their
# sum overflowed int64), a negative count that makes up for another (the totals right), two rows of
# the whole file (the sum passes the total): exit 2 naming the row and the column
$py - "$work/run.hdf" "$work" <<'PY'
import shutil, sys, h5py, numpy as np
good, work = sys.argv[1], sys.argv[2]
with h5py.File(good, "r") as f:
    row = f["dpamr/provenance/ranks"][0]
T = int(row["tiles"])
for name, rows in (("ranks_huge", [dict(tiles=2**62), dict(tiles=2**62, root_tiles=0, cells=0)]),
                   ("ranks_negative", [dict(tiles=T + 114), dict(tiles=-114, root_tiles=0, cells=0)]),
                   ("ranks_negative_first", [dict(tiles=-114, root_tiles=0, cells=0), dict(tiles=T + 114)]),
                   ("ranks_twice", [dict(), dict()])):
    path = "%s/%s.hdf" % (work, name)
    shutil.copyfile(good, path)
    with h5py.File(path, "r+") as f:
        g = f["dpamr/provenance"]
        t = np.array([row] * len(rows))
        for i, r in enumerate(rows):
            t["rank"][i] = i
            for k, v in r.items():
                t[k][i] = v
        del g["ranks"]
        g.create_dataset("ranks", data=t)
        g.attrs["nranks"] = len(rows)
PY
ranks_case() {
    local name=$1 want=$2 rc=0
    "$dpamr" check "$work/$name.hdf" >"$work/$name.out" 2>&1 || rc=$?
    if [ $rc = 2 ] && grep -q -- "$name.hdf: /dpamr/provenance/ranks$want" "$work/$name.out" &&
        ! grep -q "runtime error" "$work/$name.out"; then
        echo "ok   $name: $(grep "dpamr: error" "$work/$name.out" | cut -c1-200)"
    else
        cat "$work/$name.out"; fail "$name: exit $rc, expected 2 and '$want'"
    fi
}
ranks_case ranks_huge "\[0\].tiles is 4611686018427387904, expected 0\.\."
ranks_case ranks_negative "\[0\].tiles is [0-9]*, expected 0\.\."
ranks_case ranks_negative_first "\[0\].tiles is -114, expected 0\.\."
ranks_case ranks_twice "\[0\.\.1\].root_tiles sum to more than the file's"
finish check_tamper
