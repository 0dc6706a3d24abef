#!/bin/bash
# e2e_large.sh DPAMR DECK WORKDIR - a benchmark deck end to end on the CPU, once (its output has
# 1e8 cells on the finest level): the shipped mesh is what `dpamr mesh` makes, `dpamr run`
# writes a file, `dpamr check` accepts it.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3; $py -c "import h5py" 2>/dev/null || py=python3  # Debian's, else the PATH one (GPU machine)
rm -rf "$work" && mkdir -p "$work"
"$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf"
$py "$here/h5compare.py" "$work/mesh.hdf" "${deck%.inp}.mesh.hdf" --ignore /dpamr/deck
"$dpamr" run "$deck" variant=cpu output="$work/out.hdf"
"$dpamr" check "$work/out.hdf"
rm -rf "$work"   # over a gigabyte
