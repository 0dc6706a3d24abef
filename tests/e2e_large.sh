#!/bin/bash
# e2e_large.sh DPAMR DECK WORKDIR - a benchmark deck end to end on the CPU, once (its output has
# 1e8 cells on the finest level): the shipped mesh is what `dpamr mesh` makes, `dpamr run`
# writes a file, `dpamr check` accepts it.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
"$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf"
h5cmp "$work/mesh.hdf" "${deck%.inp}.mesh.hdf" --ignore /dpamr/deck
"$dpamr" run "$deck" variant=cpu output="$work/out.hdf"
"$dpamr" check "$work/out.hdf"
rm -rf "$work"   # over a gigabyte
