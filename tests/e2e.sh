#!/bin/bash
# e2e.sh DPAMR DECK WORKDIR - one shipped deck end to end on the CPU:
# the shipped mesh is what `dpamr mesh` makes; `dpamr run` writes a file `dpamr check` accepts;
# the same deck refined twice (and with one thread) gives byte-identical datasets.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3; $py -c "import h5py" 2>/dev/null || py=python3  # Debian's, else the PATH one (GPU machine)
cmp="$py $here/h5compare.py"
rm -rf "$work" && mkdir -p "$work/a" "$work/b" "$work/c"
shipped=${deck%.inp}.mesh.hdf

echo "== dpamr mesh reproduces the shipped mesh $shipped"
"$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf"
$cmp "$work/mesh.hdf" "$shipped" --ignore /dpamr/deck

echo "== run twice, then with one thread"
(cd "$work/a" && "$dpamr" run "$deck" variant=cpu output=out.hdf)
(cd "$work/b" && "$dpamr" run "$deck" variant=cpu output=out.hdf)
(cd "$work/c" && "$dpamr" run "$deck" variant=cpu output=out.hdf threads=1)
$cmp "$work/a/out.hdf" "$work/b/out.hdf"
$cmp "$work/a/out.hdf" "$work/c/out.hdf" --ignore /dpamr/deck

echo "== dpamr check accepts it"
"$dpamr" check "$work/a/out.hdf"
test ! -e "$work/a/out.hdf.tmp."* 2>/dev/null || { echo "temporary file left behind"; exit 1; }
echo "e2e OK: $deck"
