#!/bin/bash
# e2e.sh DPAMR DECK WORKDIR - one shipped deck end to end on the CPU:
# the shipped mesh is what `dpamr mesh` makes; `dpamr run` writes a file `dpamr check` accepts;
# the same deck refined twice (and with one thread) gives byte-identical datasets.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work" a b c
shipped=${deck%.inp}.mesh.hdf

echo "== dpamr mesh reproduces the shipped mesh $shipped"
"$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf"
h5cmp "$work/mesh.hdf" "$shipped" --ignore /dpamr/deck

echo "== run twice, then with one thread"
(cd "$work/a" && "$dpamr" run "$deck" variant=cpu output=out.hdf)
(cd "$work/b" && "$dpamr" run "$deck" variant=cpu output=out.hdf)
(cd "$work/c" && "$dpamr" run "$deck" variant=cpu output=out.hdf threads=1)
h5cmp "$work/a/out.hdf" "$work/b/out.hdf"
h5cmp "$work/a/out.hdf" "$work/c/out.hdf" --ignore /dpamr/deck

echo "== dpamr check accepts it"
"$dpamr" check "$work/a/out.hdf"
test ! -e "$work/a/out.hdf.tmp."* 2>/dev/null || { echo "temporary file left behind"; exit 1; }
echo "e2e OK: $deck"
