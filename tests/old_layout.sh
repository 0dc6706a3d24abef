#!/bin/bash
# old_layout.sh DPAMR SRC WORKDIR - files in the previous layout keep working (docs/format.md, format
# version 1: the tile arrays and a second copy of the cells in /dpamr; tests/data/v1 holds a level-0
# mesh and a run output written by f8bc070): `check` accepts them and refuses every change to them
# (tests/check_tamper.py), the re-recorded shipped mesh holds the same mesh, a run from the old mesh
# and a restart from the old output give the datasets of the same runs from version-2 files, the
# conversion of docs/format.md (a run with nothing to refine) keeps the mesh, and
# `run` and `mesh` replace them as dpamr's own (overwrite=never keeps them, naming them so).
set -uo pipefail
dpamr=$1 src=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work" tamper
v1=$src/tests/data/v1
deck=$src/inputs/default.inp
cd "$work" || exit 1

expect_line "check of a version-1 run output" "checksums: not compared: this format-version-1 file" "$dpamr" check "$v1/default_run.hdf"
expect_line "check of a version-1 mesh" "checksums: not compared: this format-version-1 file" "$dpamr" check "$v1/default.mesh.hdf"
h5cmp --mesh "$v1/default.mesh.hdf" "$src/inputs/default.mesh.hdf" || fail "the shipped mesh differs from the version-1 one"

# a run from the version-1 mesh: the datasets of the run from the shipped (version-2) mesh
"$dpamr" run "$deck" variant=cpu max_level=3 mesh_file="$v1/default.mesh.hdf" output=from_v1.hdf >/dev/null ||
    fail "run from the version-1 mesh"
"$dpamr" run "$deck" variant=cpu max_level=3 output=from_v2.hdf >/dev/null || fail "run from the shipped mesh"
h5cmp from_v1.hdf from_v2.hdf --ignore /dpamr/deck || fail "the run from the version-1 mesh differs"
# a restart from the version-1 output (levels 0..2): that of the restart from the same levels in version 2
"$dpamr" run "$deck" variant=cpu max_level=2 output=part_v2.hdf >/dev/null || fail "run to level 2"
h5cmp --mesh "$v1/default_run.hdf" part_v2.hdf || fail "the version-1 output is not the run to level 2"
"$dpamr" run "$deck" variant=cpu max_level=4 mesh_file="$v1/default_run.hdf" output=restart_v1.hdf >/dev/null ||
    fail "restart from the version-1 output"
"$dpamr" run "$deck" variant=cpu max_level=4 mesh_file=part_v2.hdf output=restart_v2.hdf >/dev/null ||
    fail "restart from the version-2 output"
h5cmp restart_v1.hdf restart_v2.hdf --ignore /dpamr/deck || fail "the restart from the version-1 output differs"

# the conversion docs/format.md gives: a run with nothing left to refine writes the same mesh in version 2
"$dpamr" run "$deck" variant=cpu max_level=2 mesh_file="$v1/default_run.hdf" output=converted.hdf >/dev/null ||
    fail "conversion run"
h5cmp --mesh "$v1/default_run.hdf" converted.hdf || fail "the converted output holds another mesh"
"$dpamr" check converted.hdf >/dev/null || fail "check of the converted output"

# replacing: a version-1 output or mesh is dpamr's own
cp "$v1/default_run.hdf" old_out.hdf
expect_line "run replaces a version-1 output" "old_out.hdf exists, written by dpamr earlier: it will be replaced" \
    "$dpamr" run "$deck" variant=cpu max_level=1 output=old_out.hdf
[ "$($py -c "import h5py; print(h5py.File('old_out.hdf', 'r')['/dpamr'].attrs['format_version'])")" = 2 ] ||
    fail "the replaced output is not in format version 2"
cp "$v1/default.mesh.hdf" old_mesh.hdf
expect_line "mesh replaces a version-1 mesh" "old_mesh.hdf exists, written by dpamr earlier: it will be replaced" \
    "$dpamr" mesh "$deck" mesh_file=old_mesh.hdf
cp "$v1/default_run.hdf" old_out.hdf
sum=$(md5sum < old_out.hdf)
expect_error "overwrite=never keeps a version-1 output" "old_out.hdf exists (an earlier dpamr output) and overwrite = never" \
    "$dpamr" run "$deck" variant=cpu max_level=1 output=old_out.hdf overwrite=never
[ "$(md5sum < old_out.hdf)" = "$sum" ] || fail "overwrite=never changed the version-1 output"

# every change to a version-1 output shows in check (its second copy of the cells included)
cp "$v1/default_run.hdf" v1_run.hdf
$py "$tests/check_tamper.py" "$dpamr" v1_run.hdf tamper --format-1 > tamper.log || { fail "tampered version-1 outputs"; grep FAIL tamper.log; }
tail -1 tamper.log
finish old_layout
