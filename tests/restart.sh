#!/bin/bash
# restart.sh DPAMR DECK WORKDIR - a written hierarchy loads back as a restart mesh:
# refining to level 3 and then continuing to max_level gives the same datasets as one run;
# loading a finished file and writing it again (nothing left to refine) gives identical datasets.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3; $py -c "import h5py" 2>/dev/null || py=python3  # Debian's, else the PATH one (GPU machine)
cmp="$py $here/h5compare.py"
rm -rf "$work" && mkdir -p "$work"
"$dpamr" run "$deck" variant=cpu output="$work/direct.hdf"
"$dpamr" run "$deck" variant=cpu max_level=3 output="$work/part.hdf"
"$dpamr" run "$deck" variant=cpu mesh_file="$work/part.hdf" output="$work/restart.hdf"
$cmp "$work/direct.hdf" "$work/restart.hdf" --ignore /dpamr/deck
"$dpamr" run "$deck" variant=cpu mesh_file="$work/direct.hdf" output="$work/again.hdf"
$cmp "$work/direct.hdf" "$work/again.hdf" --ignore /dpamr/deck
"$dpamr" check "$work/restart.hdf"
echo "restart OK"
