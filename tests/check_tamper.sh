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
# datasets stored with a filter this HDF5 lacks (lzf, h5py's own; HDF5_PLUGIN_PATH at an empty folder,
# so that no plugin is found): the file cannot be read here, which is no difference: exit 1 naming the
# dataset and the filter, for check (the cells, read at the open; vtkGhostType and the rank table, on
# the threads that compare /VTKHDF and the records) and for run; and a damaged chunk of a deflated
# field and of a shuffled and deflated vtkGhostType, read through HDF5 on the check's threads: exit 2.
# Never HDF5's error stack (HDF5's printing is switched off per thread)
$py - "$work/run.hdf" "$work" <<'PY'
import shutil, sys, h5py
good, work = sys.argv[1], sys.argv[2]
for name, path, kw, damage in (
        ("lzf_rho", "VTKHDF/Level1/CellData/rho", dict(compression="lzf"), False),
        ("lzf_ghost", "VTKHDF/Level1/CellData/vtkGhostType", dict(compression="lzf"), False),
        ("lzf_ranks", "dpamr/provenance/ranks", dict(compression="lzf"), False),
        ("gzip_rho_damaged", "VTKHDF/Level1/CellData/rho", dict(compression="gzip"), True),
        ("gzip_ghost_damaged", "VTKHDF/Level1/CellData/vtkGhostType", dict(compression="gzip", shuffle=True), True)):
    copy = "%s/%s.hdf" % (work, name)
    shutil.copyfile(good, copy)
    with h5py.File(copy, "r+", libver=("v108", "v110")) as f:  # the 1.8 format, which dpamr reads
        a = f[path][()]
        del f[path]
        f.create_dataset(path, data=a, chunks=(min(256, len(a)),), **kw)
        chunk = f[path].id.get_chunk_info(0)
    if damage:  # bytes of the first chunk's deflate stream
        with open(copy, "r+b") as fp:
            fp.seek(chunk.byte_offset + 2)
            b = fp.read(4)
            fp.seek(chunk.byte_offset + 2)
            fp.write(bytes(x ^ 0x5A for x in b))
PY
mkdir -p "$work/no_plugins"
filter_case() {
    local name=$1 want_rc=$2 want=$3 rc=0
    shift 3
    HDF5_PLUGIN_PATH="$work/no_plugins" "$@" >"$work/$name.out" 2>&1 || rc=$?
    if [ $rc = "$want_rc" ] && grep -q -- "dpamr: error: .*$name.hdf: $want" "$work/$name.out" &&
        ! grep -q "HDF5-DIAG\|runtime error" "$work/$name.out"; then
        echo "ok   $name: $(grep "dpamr: error" "$work/$name.out" | cut -c1-200)"
    else
        cat "$work/$name.out"; fail "$name: exit $rc, expected $want_rc and '$want', no HDF5 error stack"
    fi
}
lzf="is stored with HDF5 filter 32000 ('lzf'), which this HDF5 library (.*) does not have"
filter_case lzf_rho 1 "/VTKHDF/Level1/CellData/rho $lzf" "$dpamr" check "$work/lzf_rho.hdf"
filter_case lzf_ghost 1 "/VTKHDF/Level1/CellData/vtkGhostType $lzf" "$dpamr" check "$work/lzf_ghost.hdf"
filter_case lzf_ranks 1 "/dpamr/provenance/ranks $lzf" "$dpamr" check "$work/lzf_ranks.hdf"
cp "$work/lzf_rho.hdf" "$work/lzf_mesh.hdf"
filter_case lzf_mesh 1 "/VTKHDF/Level1/CellData/rho $lzf" "$dpamr" run "$deck" variant=cpu max_level=4 \
    mesh_file="$work/lzf_mesh.hdf" output="$work/lzf_out.hdf"
test ! -e "$work/lzf_out.hdf" || fail "a run from a mesh it cannot read wrote its output"
filter_case gzip_rho_damaged 2 "cannot read /VTKHDF/Level1/CellData/rho (damaged file?)" \
    "$dpamr" check "$work/gzip_rho_damaged.hdf"
filter_case gzip_ghost_damaged 2 "cannot read /VTKHDF/Level1/CellData/vtkGhostType (damaged file?)" \
    "$dpamr" check "$work/gzip_ghost_damaged.hdf"
finish check_tamper
