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
finish check_tamper
